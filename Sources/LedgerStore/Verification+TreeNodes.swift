import FoundationEssentials
import LMDB
import LedgerCore

/// The stored nodes of the `merkle` table, read in key order beside the
/// walk: each node the records make must be the next entry.
struct TreeNodes {
    var cursor: Cursor?

    /// Lends `body` the table's nodes; without a table (a read-only store of
    /// format 1, which has no tree yet) every check passes.
    static func withCursor<T>(_ table: Table?, in transaction: Transaction, _ body: (inout TreeNodes) throws -> T)
        throws -> T
    {
        guard let table else {
            var none = TreeNodes(cursor: nil)
            return try body(&none)
        }
        return try transaction.withCursor(table) { cursor in
            var nodes = TreeNodes(cursor: cursor)
            return try body(&nodes)
        }
    }

    /// The next stored entry, checked to be the node (level, index): its
    /// stored hash for `TreeCheck` to compare, or what is wrong with the key.
    mutating func stored(level: Int, index: UInt64) throws -> TreeCheck.StoredNode {
        guard var cursor else { return .unchecked }
        defer { self.cursor = cursor }
        // Compared as (last leaf, level), the key's own order, without making the key.
        let last = ((index + 1) << UInt64(level)) - 1
        let found: TreeCheck.StoredNode? = try cursor.withEntry { stored, value -> TreeCheck.StoredNode in
            let order: Int = stored.withUnsafeBytes { raw in
                guard raw.count == 9 else {
                    return raw.lexicographicallyPrecedes(MerkleKey.key(level: level, index: index)) ? -1 : 1
                }
                let storedLast = UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
                let storedLevel = Int(raw[8])
                if storedLast != last { return storedLast < last ? -1 : 1 }
                return storedLevel == level ? 0 : storedLevel < level ? -1 : 1
            }
            if order == 0 {
                guard value.byteCount == 32, let hash = Digest256(value) else {
                    return .finding(.mismatch(level: level, index: index))
                }
                return .hash(hash)
            }
            return .finding(order < 0 ? .extra(key: Transaction.copy(stored)) : .missing(level: level, index: index))
        }
        return found ?? .finding(.missing(level: level, index: index))
    }

    /// Any entry after the last node the records make.
    mutating func rest() throws -> TreeNodeFinding? {
        guard var cursor else { return nil }
        return try cursor.withEntry { stored, _ in TreeNodeFinding.extra(key: Transaction.copy(stored)) }
    }
}

extension LedgerReader {
    /// The head, checked: the last record's chain link is recomputed from the
    /// previous record's stored chain hash, and its key 1 must be its position.
    /// Throws `HeadCheckError` when it does not hold.
    public func verifiedHead() throws -> LedgerDigest {
        let stored = try head()
        guard stored.position > 0 else { return stored }
        let position = stored.position
        guard let value = try transaction.get(tables.events, BigEndian.bytes(position)), value.count > 32 else {
            throw HeadCheckError(finding: .unreadable(position: position, reason: "the last entry is too short"))
        }
        var previous = Digest256.zero
        if position > 1 {
            guard let before = try transaction.get(tables.events, BigEndian.bytes(position - 1)) else {
                throw HeadCheckError(finding: .missing(position: position - 1, next: position))
            }
            guard before.count > 32, let hash = Digest256(bytes: Array(before[0..<32])) else {
                throw HeadCheckError(
                    finding: .unreadable(position: position - 1, reason: "only \(before.count) bytes stored"))
            }
            previous = hash
        }
        let claimed: UInt64
        do {
            claimed = try EventRecord.position(ofEncoded: value, at: 32)
        } catch {
            throw HeadCheckError(finding: .unreadable(position: position, reason: "\(error)"))
        }
        let chain = HashChain()
        let computed = chain.link(previous: previous, leaf: chain.leaf(ofRecordIn: value, range: 32..<value.count))
        guard computed == stored.head else { throw HeadCheckError(finding: .changed(position: position)) }
        guard claimed == position else {
            throw HeadCheckError(finding: .reordered(position: position, claims: claimed))
        }
        return stored
    }
}

extension LedgerReader {
    /// Whether the stored level-1 node over the pair of leaves `position`
    /// belongs to is the hash of the two records as they are now: false when
    /// one of them (or the node) was changed; nil when the pair is not
    /// complete in a tree of `size` records (then no node covers it).
    public func pairNodeHolds(_ position: UInt64, size: UInt64) throws -> Bool? {
        let index = (position - 1) / 2
        guard position >= 1, index * 2 + 2 <= size, tables.tree != nil else { return nil }
        let hasher = SHA256Hasher()
        let stored = try perfectSubtree(level: 1, index: index, hasher: hasher)
        let left = try leafHash(at: index * 2 + 1, hasher: hasher)
        let right = try leafHash(at: index * 2 + 2, hasher: hasher)
        return Merkle.node(left, right, hasher) == stored
    }
}

/// A stream id as the walk's dictionary key: its 16 bytes as two words, so
/// a record's lookup hashes two integers and copies no array.
struct StreamKey: Hashable {
    var high: UInt64
    var low: UInt64

    init(_ bytes: [UInt8]) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (i, byte) in bytes.prefix(16).enumerated() {
            if i < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        // The header check has made sure a stream id is 16 bytes.
        self.high = high
        self.low = low
    }

    /// The 16 bytes of the stream id.
    var bytes: [UInt8] {
        // A loop, not one mapped expression: that took 3.3 s of every build
        // to type-check.
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            let shift = UInt64(56 - 8 * i)
            bytes[i] = UInt8(truncatingIfNeeded: high >> shift)
            bytes[i + 8] = UInt8(truncatingIfNeeded: low >> shift)
        }
        return bytes
    }

    init(_ id: UUID) {
        let u = id.uuid
        high = withUnsafeBytes(of: u) { UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) }
        low = withUnsafeBytes(of: u) { UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    }
}
