import Foundation
import LMDB
import LedgerCore

/// The `heads` table: the map of stream heads (`HeadMap`), one entry per
/// non-empty node, key `HeadMapPosition.key` (depth ‖ prefix), value
/// `HeadMapSlot.encoded`. Each append sets its stream's head in the same
/// write transaction, so in every snapshot the map is that of exactly the
/// records the snapshot's tree holds.
enum HeadMapTable {
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
        var memory = HeadMapInMemory()
        var last: (stream: [UInt8], position: UInt64, version: UInt64)?
        var streams = 0
        func flush() throws {
            guard let last else { return }
            let head = StreamHead(
                stream: last.stream, version: last.version, leaf: try reader.leafHash(at: last.position, hasher: hasher)
            )
            try set(head, transaction, table, hasher)
            try memory.set(head)
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
        let stored = try HeadMap.root(get: { try get(transaction, table, $0) })
        guard stored == memory.root else {
            throw HeadMapError.badMath(
                "the map of stream heads built in the store does not have the root built in memory")
        }
        return streams
    }
}

extension LedgerReader {
    /// The root of the map of stream heads of this snapshot's records; nil
    /// when the store has no map (a read-only store written before it).
    public func headMapRoot() throws -> Digest256? {
        guard let table = tables.heads else { return nil }
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
        if size == (try treeSize()), let table = tables.heads {
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
        var memory = HeadMapInMemory()
        var last: (stream: [UInt8], position: UInt64, version: UInt64)?
        let hasher = SHA256Hasher()
        func flush() throws {
            guard let last else { return }
            try memory.set(
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
        return memory
    }
}
