import FoundationEssentials
import LMDB
import LedgerCore

/// The `heads` table: the map of stream heads (`HeadMap`), one entry per
/// non-empty node, key `HeadMapPosition.key` (depth ‖ prefix), value
/// `HeadMapSlot.encoded`, and one more entry, `size` (`sizeKey`): the
/// position of the last record the map holds (8 bytes, big-endian). Each
/// append sets its stream's head and the size in the same write
/// transaction, so the map is that of exactly the first `size` records. A
/// jqc older than the map appends without touching the table: its size then
/// stays behind the log's, which every snapshot checks (`usableHeads`) and
/// the next writable open mends (`EventLog.catchUpHeadMap`).
enum HeadMapTable {
    /// The size entry's key: 4 bytes, where every node's key is 33.
    static let sizeKey = Array("size".utf8)

    /// The size the map was last brought up to; nil when the table has no
    /// size entry (written by the map's first build, before the entry).
    static func size(_ transaction: Transaction, _ table: Table) throws -> UInt64? {
        guard let bytes = try transaction.get(table, sizeKey) else { return nil }
        guard let size = BigEndian.uint64(bytes) else {
            throw HeadMapError.badMath(
                "the map of stream heads' size entry is not 8 bytes: the store was changed outside jqc. Run 'jqc verify --full'."
            )
        }
        return size
    }

    static func setSize(_ size: UInt64, _ transaction: Transaction, _ table: Table) throws {
        try transaction.put(table, sizeKey, BigEndian.bytes(size))
    }

    /// Brings the map from the first `lag.mapSize` records to all
    /// `lag.logSize`: each later record's head set in order (a stream's
    /// later version replaces its earlier), each path checked before it is
    /// built on (`checkPath`: `HeadMapCatchUpDamage`), then the size.
    static func catchUp(_ transaction: Transaction, tables: EventLog.Tables, into table: Table, from mapSize: UInt64)
        throws
    {
        let reader = LedgerReader(transaction: transaction, tables: tables)
        let hasher = SHA256Hasher()
        let logSize = try reader.treeSize()
        var position = mapSize + 1
        while position <= logSize {
            guard let record = try reader.record(at: position) else {
                throw LedgerError.corruptRecord(
                    position: position, .malformed("the record at \(position) is missing: run 'jqc verify --full'"))
            }
            let leaf = try reader.leafHash(at: position, hasher: hasher)
            let head = StreamHead(stream: record.event.stream.bytes, version: record.streamVersion, leaf: leaf)
            // Checked before it is built on: a damaged node would be hashed into every node written here.
            let previous = record.previousInStream.map {
                StreamHead(stream: head.stream, version: record.streamVersion - 1, leaf: $0)
            }
            try checkPath(to: head, previous: previous, position: position, transaction, table, hasher)
            try set(head, transaction, table, hasher)
            position += 1
        }
        try setSize(logSize, transaction, table)
    }
    static func get(_ transaction: Transaction, _ table: Table, _ position: HeadMapPosition) throws -> HeadMapSlot? {
        guard let bytes = try transaction.get(table, position.key) else { return nil }
        guard let slot = HeadMapSlot(decoding: bytes) else {
            throw HeadMapError.badMath(
                "the stored node at depth \(position.depth) is not a map node: the store was changed outside jqc. Run 'jqc verify --full'."
            )
        }
        return slot
    }

    static func set(_ head: StreamHead, _ transaction: Transaction, _ table: Table, _ hasher: SHA256Hasher) throws {
        try HeadMap.update(
            head, get: { try get(transaction, table, $0) },
            put: { position, slot in try transaction.put(table, position.key, slot.encoded) }, hasher)
    }

    /// Builds the map of a store written before it (or whose table was
    /// missing) from `stream_index`: each stream's last version, its
    /// record's leaf recomputed from the record. Verified before it is kept:
    /// the map built again in memory from the same heads must have the
    /// stored root. Returns the number of streams.
    static func build(_ transaction: Transaction, tables: EventLog.Tables, into table: Table) throws -> Int {
        try transaction.empty(table)
        let reader = LedgerReader(transaction: transaction, tables: tables)
        let hasher = SHA256Hasher()
        var heads: [StreamHead] = []
        var last: (stream: [UInt8], position: UInt64, version: UInt64)?
        var streams = 0
        func flush() throws {
            guard let last else { return }
            let head = StreamHead(
                stream: last.stream, version: last.version, leaf: try reader.leafHash(at: last.position, hasher: hasher)
            )
            try set(head, transaction, table, hasher)
            heads.append(head)
            streams += 1
        }
        try transaction.forEach(tables.streamIndex) { key, value in
            guard key.count == 24, let position = BigEndian.uint64(value) else {
                throw LedgerError.invalidEvent("a stream_index entry is malformed: run 'jqc verify --full'")
            }
            let stream = Array(key[0..<16])
            let version = BigEndian.uint64(Array(key[16..<24])) ?? 0
            if let current = last, current.stream != stream { try flush() }
            last = (stream, position, version)
            return true
        }
        try flush()
        try setSize(try reader.treeSize(), transaction, table)
        let stored = try HeadMap.root(get: { try get(transaction, table, $0) })
        // Built the other way (bottom up), so the check is not the same code twice.
        guard stored == (try HeadMapInMemory(heads: heads, hasher)).root else {
            throw HeadMapError.badMath(
                "the map of stream heads built in the store does not have the root built in memory")
        }
        return streams
    }
}

/// The map of stream heads holds fewer records than the log: a jqc older
/// than the map recorded `mapSize + 1 ... logSize` (or the table has no
/// size entry). Not damage: the next writable open brings it up to date;
/// until then this snapshot has no usable map.
public struct HeadMapLag: Hashable, Sendable, CustomStringConvertible {
    /// The size the map was last brought up to; nil when it does not say.
    public var mapSize: UInt64?
    /// The log's size in the snapshot.
    public var logSize: UInt64

    public var description: String {
        let held =
            mapSize.map { "it holds records 1..\($0); an older jqc wrote records \($0 + 1)..\(logSize)" }
            ?? "its table does not say which records it holds"
        return
            "the map of stream heads is behind the log (\(held)). Every record is intact; until any writing jqc command (this version) brings the map up to date, checkpoints carry no jqc-heads line and 'jqc prove' writes bundles that cannot prove an inspection complete"
    }
}

extension LedgerReader {
    /// The `heads` table when it is the map of exactly this snapshot's
    /// records (its size entry is the tree's size); nil when the store has
    /// none or it is behind (`headMapLag`).
    func usableHeads() throws -> Table? {
        guard let table = tables.heads else { return nil }
        return try HeadMapTable.size(transaction, table) == (try treeSize()) ? table : nil
    }

    /// How far the `heads` table is behind this snapshot's log; nil when it
    /// is not (or the store has no table at all).
    public func headMapLag() throws -> HeadMapLag? {
        guard let table = tables.heads else { return nil }
        let mapSize = try HeadMapTable.size(transaction, table)
        let logSize = try treeSize()
        return mapSize == logSize ? nil : HeadMapLag(mapSize: mapSize, logSize: logSize)
    }

    /// The root of the map of stream heads of this snapshot's records; nil
    /// when the store has no map (a read-only store written before it) or
    /// its map is behind the log (`headMapLag`).
    public func headMapRoot() throws -> Digest256? {
        guard let table = try usableHeads() else { return nil }
        let transaction = transaction
        return try HeadMap.root(get: { try HeadMapTable.get(transaction, table, $0) })
    }

    /// `stream`'s head and its membership proof in the map of stream heads
    /// of the first `size` records: from the stored map when `size` is this
    /// snapshot's tree size, else the map of that size built in memory from
    /// `stream_index` (O(n): a proof against an older checkpoint).
    public func headProof(of stream: UUID, size: UInt64) throws -> (
        head: StreamHead, siblings: [Digest256], root: Digest256
    )? {
        if size == (try treeSize()), let table = try usableHeads() {
            let transaction = transaction
            let get = { (position: HeadMapPosition) throws -> HeadMapSlot? in
                try HeadMapTable.get(transaction, table, position)
            }
            let (head, siblings) = try HeadMap.proof(of: stream.bytes, get: get)
            return (head, siblings, try HeadMap.root(get: get))
        }
        let memory = try headMap(size: size)
        let (head, siblings) = try memory.proof(of: stream.bytes)
        return (head, siblings, memory.root)
    }

    /// The map of stream heads of the first `size` records, in memory.
    public func headMap(size: UInt64) throws -> HeadMapInMemory {
        try checkSize(size)
        var heads: [StreamHead] = []
        var last: (stream: [UInt8], position: UInt64, version: UInt64)?
        let hasher = SHA256Hasher()
        func flush() throws {
            guard let last else { return }
            heads.append(
                StreamHead(
                    stream: last.stream, version: last.version,
                    leaf: try leafHash(at: last.position, hasher: hasher)))
        }
        try transaction.forEach(tables.streamIndex) { key, value in
            guard key.count == 24, let position = BigEndian.uint64(value) else {
                throw LedgerError.invalidEvent("a stream_index entry is malformed: run 'jqc verify --full'")
            }
            let stream = Array(key[0..<16])
            if let current = last, current.stream != stream {
                try flush()
                last = nil
            }
            if position <= size { last = (stream, position, BigEndian.uint64(Array(key[16..<24])) ?? 0) }
            return true
        }
        try flush()
        return try HeadMapInMemory(heads: heads, hasher)
    }
}
