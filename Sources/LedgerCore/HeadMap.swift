import FoundationEssentials

/// The map of stream heads (`Schemas/ledger-format.md` § The map of stream
/// heads): a compressed sparse Merkle tree over `SHA-256(stream id)` whose
/// value is the stream's last version and that record's leaf hash.
///
///     path(s)      = SHA-256(stream id)                 -- 256 bits, most significant first
///     leaf(s,v,h)  = SHA-256(0x00 ‖ stream id ‖ u64 BE v ‖ h)
///     node(l, r)   = SHA-256(0x01 ‖ l ‖ r)
///     empty        = 32 zero bytes
///
/// A subtree with no head is `empty`; one with exactly one head is that
/// head's leaf hash, wherever it sits (so a head is at the depth where its
/// path first differs from every other head's: O(log n) deep for n streams);
/// any other subtree is the node of its two halves. The root of the empty map
/// is `empty`.
public enum HeadMap {
    /// The deepest a head can sit: two paths differ in at most 256 bits.
    public static let maxDepth = 256

    /// The 256-bit path of `stream`.
    public static func path(of stream: [UInt8], _ hasher: SHA256Hasher = SHA256Hasher()) -> Digest256 {
        hasher.digest(stream)
    }

    /// The hash of a head.
    public static func leafHash(_ head: StreamHead, _ hasher: SHA256Hasher = SHA256Hasher()) -> Digest256 {
        var bytes: [UInt8] = [0x00]
        bytes.reserveCapacity(1 + 16 + 8 + 32)
        bytes += head.stream
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: head.version >> shift))
        }
        bytes += head.leaf.bytes
        return hasher.digest(bytes)
    }

    /// The hash of an inner node.
    public static func node(_ left: Digest256, _ right: Digest256, _ hasher: SHA256Hasher = SHA256Hasher()) -> Digest256
    {
        hasher.digest([0x01], left.bytes, right.bytes)
    }

    /// Bit `index` (0 = the most significant) of `path`.
    public static func bit(_ path: Digest256, _ index: Int) -> Int {
        path.withUnsafeBytes { Int($0[index / 8] >> (7 - UInt8(index % 8))) & 1 }
    }

    /// The root a membership proof gives: `head`'s leaf combined with
    /// `siblings` (the sibling nearest the root first, one per depth above
    /// the head). Bad math (more siblings than a path has bits, a stream id
    /// that is not 16 bytes, a version 0) is thrown, never a root.
    public static func root(of head: StreamHead, siblings: [Digest256], _ hasher: SHA256Hasher = SHA256Hasher())
        throws(HeadMapError) -> Digest256
    {
        try head.check()
        guard siblings.count <= maxDepth else {
            throw .badMath("a proof of \(siblings.count) siblings is deeper than the \(maxDepth) bits of a path")
        }
        let path = path(of: head.stream, hasher)
        var hash = leafHash(head, hasher)
        for depth in stride(from: siblings.count - 1, through: 0, by: -1) {
            hash =
                bit(path, depth) == 0
                ? node(hash, siblings[depth], hasher) : node(siblings[depth], hash, hasher)
        }
        return hash
    }

    /// Whether `siblings` prove `head` under `root`.
    public static func verify(_ head: StreamHead, siblings: [Digest256], root: Digest256) -> Bool {
        guard let computed = try? Self.root(of: head, siblings: siblings) else { return false }
        return computed == root
    }
}

/// One stream's head: its id, its last version and that record's leaf hash.
public struct StreamHead: Hashable, Sendable {
    /// The stream id (16 bytes).
    public var stream: [UInt8]
    public var version: UInt64
    public var leaf: Digest256

    public init(stream: [UInt8], version: UInt64, leaf: Digest256) {
        self.stream = stream
        self.version = version
        self.leaf = leaf
    }

    func check() throws(HeadMapError) {
        guard stream.count == 16 else { throw .badMath("a stream id is 16 bytes, not \(stream.count)") }
        guard version >= 1 else { throw .badMath("a stream's head has version 1 or more, not 0") }
    }
}

/// The map math was handed inputs no map makes ("bad math", as Go's
/// `sumdb/tlog` says of its own), or a store's map is missing a node.
public enum HeadMapError: Error, Equatable, Sendable, CustomStringConvertible {
    case badMath(String)
    /// The stream has no head in the map.
    case notInMap(String)

    public var description: String {
        switch self {
        case .badMath(let why): "bad math in the map of stream heads: \(why)"
        case .notInMap(let stream): "the map of stream heads has no head for stream \(stream)"
        }
    }
}

/// Where a node of the map sits: its depth (0 = the root) and the first
/// `depth` bits of the paths under it (the rest zero).
public struct HeadMapPosition: Hashable, Sendable {
    public var depth: Int
    public var prefix: Digest256

    /// The position at `depth` on `path`'s way down.
    public init(depth: Int, on path: Digest256) {
        self.depth = depth
        var bytes = path.bytes
        for index in 0..<32 {
            let kept = max(0, min(8, depth - index * 8))
            bytes[index] &= kept == 8 ? 0xFF : ~(0xFF >> UInt8(kept))
        }
        // 32 bytes: a digest's own, masked in place.
        self.prefix = Digest256(bytes: bytes)!
    }

    /// The sibling of the position at `depth + 1` on `path`: same prefix,
    /// bit `depth` flipped.
    public static func sibling(below depth: Int, on path: Digest256) -> HeadMapPosition {
        var bytes = path.bytes
        bytes[depth / 8] ^= 0x80 >> UInt8(depth % 8)
        // 32 bytes: a digest's own, one bit flipped.
        return HeadMapPosition(depth: depth + 1, on: Digest256(bytes: bytes)!)
    }

    /// The stored key: depth (1 byte) ‖ prefix (32 bytes).
    public var key: [UInt8] { [UInt8(depth)] + prefix.bytes }

    /// Reads `key`; nil for bytes no position's key is: not 33 bytes, or a
    /// bit set past the depth.
    public init?(key: [UInt8]) {
        guard key.count == 33, let prefix = Digest256(bytes: Array(key[1...])) else { return nil }
        self.init(depth: Int(key[0]), on: prefix)
        guard self.prefix == prefix else { return nil }
    }
}

/// A stored node of the map: a head (a subtree holding one head) or an
/// inner node's hash.
public enum HeadMapSlot: Equatable, Sendable {
    case head(StreamHead, hash: Digest256)
    case inner(Digest256)

    public var hash: Digest256 {
        switch self {
        case .head(_, let hash): hash
        case .inner(let hash): hash
        }
    }

    /// 0x01 ‖ hash, or 0x00 ‖ hash ‖ stream ‖ u64 BE version ‖ leaf.
    public var encoded: [UInt8] {
        switch self {
        case .inner(let hash): return [0x01] + hash.bytes
        case .head(let head, let hash):
            var bytes = [0x00] + hash.bytes + head.stream
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: head.version >> shift))
            }
            return bytes + head.leaf.bytes
        }
    }

    /// Reads `encoded`; nil for bytes no slot encodes to.
    public init?(decoding bytes: [UInt8]) {
        if bytes.count == 33, bytes[0] == 0x01, let hash = Digest256(bytes: Array(bytes[1...])) {
            self = .inner(hash)
            return
        }
        guard bytes.count == 89, bytes[0] == 0x00, let hash = Digest256(bytes: Array(bytes[1..<33])),
            let leaf = Digest256(bytes: Array(bytes[57..<89]))
        else { return nil }
        let version = bytes[49..<57].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self = .head(StreamHead(stream: Array(bytes[33..<49]), version: version, leaf: leaf), hash: hash)
    }
}

extension HeadMap {
    /// Sets `head` as its stream's head in the map whose nodes `get` reads
    /// and `put` writes (an LMDB table, a dictionary), and returns the new
    /// root: O(depth) nodes read and written, depth O(log n) for n streams.
    @discardableResult
    public static func update(
        _ head: StreamHead, get: (HeadMapPosition) throws -> HeadMapSlot?,
        put: (HeadMapPosition, HeadMapSlot) throws -> Void, _ hasher: SHA256Hasher = SHA256Hasher()
    ) throws -> Digest256 {
        try head.check()
        let path = path(of: head.stream, hasher)
        var depth = 0
        var slot = try get(HeadMapPosition(depth: 0, on: path))
        while case .inner = slot {
            depth += 1
            guard depth <= maxDepth else { throw HeadMapError.badMath("an inner node below depth \(maxDepth)") }
            slot = try get(HeadMapPosition(depth: depth, on: path))
        }
        let own = HeadMapSlot.head(head, hash: leafHash(head, hasher))
        var hash = own.hash
        if case .head(let other, let otherHash) = slot, other.stream != head.stream {
            // Two heads share this subtree now: they go down to where their
            // paths part, with empty siblings on the way.
            let otherPath = Self.path(of: other.stream, hasher)
            var split = depth
            while split < maxDepth, bit(path, split) == bit(otherPath, split) { split += 1 }
            guard split < maxDepth else { throw HeadMapError.badMath("two stream ids with one path") }
            try put(HeadMapPosition(depth: split + 1, on: path), own)
            try put(HeadMapPosition(depth: split + 1, on: otherPath), .head(other, hash: otherHash))
            hash = bit(path, split) == 0 ? node(hash, otherHash, hasher) : node(otherHash, hash, hasher)
            try put(HeadMapPosition(depth: split, on: path), .inner(hash))
            for level in stride(from: split - 1, through: depth, by: -1) {
                hash = bit(path, level) == 0 ? node(hash, .zero, hasher) : node(.zero, hash, hasher)
                try put(HeadMapPosition(depth: level, on: path), .inner(hash))
            }
        } else {
            try put(HeadMapPosition(depth: depth, on: path), own)
        }
        for level in stride(from: depth - 1, through: 0, by: -1) {
            let sibling = try get(HeadMapPosition.sibling(below: level, on: path))?.hash ?? .zero
            hash = bit(path, level) == 0 ? node(hash, sibling, hasher) : node(sibling, hash, hasher)
            try put(HeadMapPosition(depth: level, on: path), .inner(hash))
        }
        return hash
    }

    /// The root of the map whose nodes `get` reads.
    public static func root(get: (HeadMapPosition) throws -> HeadMapSlot?) throws -> Digest256 {
        try get(HeadMapPosition(depth: 0, on: .zero))?.hash ?? .zero
    }

    /// `stream`'s head and its membership proof (the siblings from the
    /// root down), read from the nodes `get` reads.
    public static func proof(
        of stream: [UInt8], get: (HeadMapPosition) throws -> HeadMapSlot?, _ hasher: SHA256Hasher = SHA256Hasher()
    ) throws -> (head: StreamHead, siblings: [Digest256]) {
        let path = path(of: stream, hasher)
        var siblings: [Digest256] = []
        var slot = try get(HeadMapPosition(depth: 0, on: path))
        while case .inner = slot {
            let depth = siblings.count
            guard depth < maxDepth else { throw HeadMapError.badMath("an inner node at depth \(maxDepth)") }
            siblings.append(try get(HeadMapPosition.sibling(below: depth, on: path))?.hash ?? .zero)
            slot = try get(HeadMapPosition(depth: depth + 1, on: path))
        }
        guard case .head(let head, _) = slot, head.stream == stream else {
            throw HeadMapError.notInMap(Hex.encode(stream))
        }
        return (head, siblings)
    }
}

/// A map of stream heads held in memory: what a read-only open or a past
/// size computes, and what the tests compare the stored map with.
public struct HeadMapInMemory: Sendable {
    public private(set) var nodes: [HeadMapPosition: HeadMapSlot] = [:]

    public init() {}

    /// Sets `head` (`HeadMap.update`).
    public mutating func set(_ head: StreamHead) throws {
        // Moved out, not copied: the dictionary stays uniquely referenced,
        // so an update changes O(log n) entries in place instead of copying
        // all of them (a copy per head made building a map quadratic).
        var nodes = self.nodes
        self.nodes = [:]
        defer { self.nodes = nodes }
        try HeadMap.update(head, get: { nodes[$0] }, put: { nodes[$0] = $1 })
    }

    /// The map of `heads`, built bottom up: the nodes `set` makes when
    /// given them one by one (in any order; a later head of a stream
    /// replaces an earlier one), each node hashed once, where `set` hashes
    /// every node on a head's way up again for each head below it. The same
    /// bad math is thrown (`StreamHead.check`, two ids with one path).
    public init(heads: [StreamHead], _ hasher: SHA256Hasher = SHA256Hasher()) throws(HeadMapError) {
        var latest: [[UInt8]: StreamHead] = [:]
        for head in heads {
            try head.check()
            latest[head.stream] = head
        }
        let entries = latest.values.map { (path: HeadMap.path(of: $0.stream, hasher), head: $0) }
            .sorted { $0.path.bytesPrecede($1.path) }
        var nodes: [HeadMapPosition: HeadMapSlot] = [:]
        nodes.reserveCapacity(entries.count * 2)
        // The subtree of `range` (heads whose paths share their first
        // `depth` bits), stored at `depth`; its hash.
        func build(_ range: Range<Int>, depth: Int) throws(HeadMapError) -> Digest256 {
            let path = entries[range.lowerBound].path
            if range.count == 1 {
                let head = entries[range.lowerBound].head
                let slot = HeadMapSlot.head(head, hash: HeadMap.leafHash(head, hasher))
                nodes[HeadMapPosition(depth: depth, on: path)] = slot
                return slot.hash
            }
            guard depth < HeadMap.maxDepth else { throw .badMath("two stream ids with one path") }
            // Sorted by path, the heads with bit `depth` 0 come first.
            var low = range.lowerBound
            var high = range.upperBound
            while low < high {
                let middle = (low + high) / 2
                if HeadMap.bit(entries[middle].path, depth) == 0 { low = middle + 1 } else { high = middle }
            }
            let left = low > range.lowerBound ? try build(range.lowerBound..<low, depth: depth + 1) : .zero
            let right = low < range.upperBound ? try build(low..<range.upperBound, depth: depth + 1) : .zero
            let hash = HeadMap.node(left, right, hasher)
            nodes[HeadMapPosition(depth: depth, on: path)] = .inner(hash)
            return hash
        }
        if !entries.isEmpty { _ = try build(0..<entries.count, depth: 0) }
        self.nodes = nodes
    }

    public var root: Digest256 { nodes[HeadMapPosition(depth: 0, on: .zero)]?.hash ?? .zero }

    public func proof(of stream: [UInt8]) throws -> (head: StreamHead, siblings: [Digest256]) {
        try HeadMap.proof(of: stream, get: { nodes[$0] })
    }
}
