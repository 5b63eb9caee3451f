import FoundationEssentials
import LMDB
import LedgerCore

/// Why a Merkle hash or proof could not be given.
public enum MerkleError: Error, CustomStringConvertible, Sendable {
    /// A stored node the tree needs is missing or not 32 bytes.
    case missingNode(level: Int, index: UInt64)
    /// A leaf's record is missing or unreadable.
    case missingLeaf(position: UInt64)
    /// A size or position outside the log.
    case outOfRange(String)

    public var description: String {
        switch self {
        case .missingNode(let level, let index):
            "the Merkle tree's node \(index) at level \(level) is missing or damaged: the store was changed outside jqc. Run 'jqc verify --full'."
        case .missingLeaf(let position):
            "record \(position), a leaf of the Merkle tree, is missing or damaged. Run 'jqc verify --full'."
        case .outOfRange(let what):
            what
        }
    }
}

/// The `merkle` table: one entry per complete perfect subtree of level ≥ 1
/// (2^level leaves starting at leaf index·2^level), its 32-byte hash.
/// The key is the subtree's last leaf (u64 BE) ‖ its level (1 byte): the nodes
/// an append completes all end at the new leaf and come in increasing level,
/// so every node is written at the end of the table (`MDB_APPEND`, one page).
/// Level 0 (the leaves) is not stored: a leaf is recomputed from its record.
enum MerkleKey {
    static func key(level: Int, index: UInt64) -> [UInt8] {
        assert(level >= 1 && level < 64 && index < UInt64.max >> UInt64(level), "bad math: node \(index)/\(level)")
        let last = ((index + 1) << UInt64(level)) - 1
        var key = BigEndian.bytes(last)
        key.append(UInt8(level))
        return key
    }
}

extension LedgerReader {
    /// The leaf hash of the record at `position` (leaf `position − 1`).
    public func leafHash(at position: UInt64, hasher: SHA256Hasher = SHA256Hasher()) throws -> Digest256 {
        let leaf =
            try transaction.withValue(tables.events, BigEndian.bytes(position)) { value in
                value.byteCount > 32 ? hasher.digest(prefix: 0x00, value, range: 32..<value.byteCount) : nil
            } ?? nil
        guard let leaf else { throw MerkleError.missingLeaf(position: position) }
        return leaf
    }

    /// The record's bytes as stored (the leaf's input), for proofs handed out.
    public func encodedRecord(at position: UInt64) throws -> [UInt8] {
        guard let value = try transaction.get(tables.events, BigEndian.bytes(position)), value.count > 32 else {
            throw MerkleError.missingLeaf(position: position)
        }
        return Array(value[32...])
    }

    /// The hash of a perfect subtree: a stored node, a leaf recomputed from
    /// its record, or — in a read-only store of format 1, which has no tree —
    /// computed from the leaves.
    func perfectSubtree(level: Int, index: UInt64, hasher: SHA256Hasher) throws -> Digest256 {
        // Leaf `index` (0-based) is the record at position `index + 1` (1-based); debug builds check the range
        // (`assert`, not `precondition`: this is the append path, and its callers derive the numbers from the size).
        assert(level >= 0 && level < 64 && index < UInt64.max >> UInt64(level), "bad math: subtree \(index)/\(level)")
        if level == 0 { return try leafHash(at: index + 1, hasher: hasher) }
        if let tree = tables.tree {
            guard let value = try transaction.get(tree, MerkleKey.key(level: level, index: index)),
                let hash = Digest256(bytes: value)
            else { throw MerkleError.missingNode(level: level, index: index) }
            return hash
        }
        let left = try perfectSubtree(level: level - 1, index: index * 2, hasher: hasher)
        let right = try perfectSubtree(level: level - 1, index: index * 2 + 1, hasher: hasher)
        return Merkle.node(left, right, hasher)
    }

    /// The number of leaves of the tree: the number of records.
    public func treeSize() throws -> UInt64 { try head().position }

    /// The root of the tree of the first `size` records.
    public func treeRoot(size: UInt64) throws -> Digest256 {
        let hasher = SHA256Hasher()
        try checkSize(size)
        return try Merkle.root(size: size, hasher: hasher) { level, index in
            try perfectSubtree(level: level, index: index, hasher: hasher)
        }
    }

    /// The inclusion proof of the record at `position` in the tree of `size`.
    public func inclusionProof(position: UInt64, size: UInt64) throws -> [Digest256] {
        try checkSize(size)
        guard position >= 1, position <= size else {
            throw MerkleError.outOfRange("record \(position) is not in a tree of \(size) records")
        }
        // Positions count from 1, leaves from 0.
        precondition(position - 1 < size, "bad math: leaf \(position - 1) of \(size)")
        let hasher = SHA256Hasher()
        return try Merkle.inclusionProof(leaf: position - 1, size: size, hasher: hasher) { level, index in
            try perfectSubtree(level: level, index: index, hasher: hasher)
        }
    }

    /// The consistency proof from the tree of `old` records to that of `new`.
    public func consistencyProof(from old: UInt64, to new: UInt64) throws -> [Digest256] {
        try checkSize(new)
        guard old >= 1, old <= new else {
            throw MerkleError.outOfRange("no consistency proof from a tree of \(old) records to one of \(new)")
        }
        precondition(old > 0 && old <= new, "bad math: consistency from \(old) to \(new)")
        let hasher = SHA256Hasher()
        return try Merkle.consistencyProof(from: old, to: new, hasher: hasher) { level, index in
            try perfectSubtree(level: level, index: index, hasher: hasher)
        }
    }

    func checkSize(_ size: UInt64) throws {
        let records = try head().position
        guard size <= records else {
            throw MerkleError.outOfRange("the log has \(records) records, not \(size): it was truncated")
        }
    }

    /// The right edge of the tree of all records, loaded for appending.
    func frontier(size: UInt64, hasher: SHA256Hasher) throws -> MerkleFrontier {
        let subtrees = try MerkleFrontier.decomposition(of: size).map { level, index in
            (level: level, index: index, hash: try perfectSubtree(level: level, index: index, hasher: hasher))
        }
        return MerkleFrontier(size: size, subtrees: subtrees)
    }
}

/// The stored tree does not support the root about to be signed or handed
/// out: nothing was signed.
public struct TreeCheckError: Error, CustomStringConvertible, Sendable {
    /// What differs: a stored node, or (nil) the earlier checkpoint's root.
    public var node: TreeNodeFinding?
    /// Why, in words.
    public var reason: String

    public init(node: TreeNodeFinding?, reason: String) {
        self.node = node
        self.reason = reason
    }

    public var description: String {
        "NOT SIGNED: the stored Merkle tree does not match the records (\(node.map { "\($0)" } ?? reason)); "
            + "nothing was signed or handed out. Run 'jqc verify --full' to see what is wrong, and keep the ledger as it is."
    }
}

extension LedgerReader {
    /// The root of the tree of all records, checked against the records
    /// before it is signed: from `anchor` (a checkpoint this device signed
    /// earlier, of `size ≤ n` records), the stored subtrees its size
    /// decomposes into must combine to its root (O(log n)); then the leaves of
    /// every record after it are recomputed from the records and each node
    /// they make must be the stored one, and the stored root must be the
    /// root so made. Without an anchor, every leaf is recomputed (O(n)).
    /// Throws `TreeCheckError` when the stored tree disagrees.
    public func checkedTreeRoot(from anchor: (size: UInt64, root: Digest256)?) throws -> (
        size: UInt64, root: Digest256
    ) {
        let hasher = SHA256Hasher()
        let size = try treeSize()
        var frontier = MerkleFrontier(size: 0, subtrees: [])
        if let anchor, anchor.size > 0 {
            guard anchor.size <= size else {
                throw TreeCheckError(
                    node: nil,
                    reason:
                        "this device signed a checkpoint of \(anchor.size) records, the log has only \(size): records were removed"
                )
            }
            do {
                frontier = try self.frontier(size: anchor.size, hasher: hasher)
            } catch let error as MerkleError {
                if case .missingNode(let level, let index) = error {
                    throw TreeCheckError(node: .missing(level: level, index: index), reason: "\(error)")
                }
                throw TreeCheckError(node: nil, reason: "\(error)")
            }
            guard frontier.root(hasher) == anchor.root else {
                throw TreeCheckError(
                    node: nil,
                    reason:
                        "the stored nodes of the first \(anchor.size) records do not have the root of the checkpoint this device signed of them"
                )
            }
        }
        var finding: TreeNodeFinding?
        let start = frontier.size + 1
        if start <= size {
            try forEachStoredRecord(from: start) { position, value in
                guard position == frontier.size + 1, value.byteCount > 32 else {
                    throw MerkleError.missingLeaf(position: frontier.size + 1)
                }
                let leaf = hasher.digest(prefix: 0x00, value, range: 32..<value.byteCount)
                try frontier.append(leaf: leaf, hasher: hasher) { level, index, hash in
                    guard finding == nil, let tree = tables.tree else { return }
                    let stored = try transaction.get(tree, MerkleKey.key(level: level, index: index))
                    if stored == nil {
                        finding = .missing(level: level, index: index)
                    } else if stored != hash.bytes {
                        finding = .mismatch(level: level, index: index)
                    }
                }
                return position < size
            }
        }
        if let finding { throw TreeCheckError(node: finding, reason: "\(finding)") }
        let root = frontier.root(hasher)
        guard frontier.size == size, root == (try treeRoot(size: size)) else {
            throw TreeCheckError(node: nil, reason: "the stored root of \(size) records is not the records' root")
        }
        return (size, root)
    }

    /// The root of the first `size` records recomputed from the records
    /// themselves, not from the stored nodes (O(size)): what `checkpoint
    /// --verify` compares with a checkpoint's root.
    public func recomputedRoot(size: UInt64) throws -> Digest256 {
        let hasher = SHA256Hasher()
        try checkSize(size)
        var frontier = MerkleFrontier(size: 0, subtrees: [])
        if size > 0 {
            try forEachStoredRecord(from: 1) { position, value in
                guard position == frontier.size + 1, value.byteCount > 32 else {
                    throw MerkleError.missingLeaf(position: frontier.size + 1)
                }
                frontier.append(leaf: hasher.digest(prefix: 0x00, value, range: 32..<value.byteCount), hasher: hasher) {
                    _, _, _ in
                }
                return position < size
            }
        }
        guard frontier.size == size else { throw MerkleError.missingLeaf(position: frontier.size + 1) }
        return frontier.root(hasher)
    }
}
