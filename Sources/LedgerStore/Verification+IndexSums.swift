import FoundationEssentials
import LMDB
import LedgerCore

/// Step 3 of `verify` (every record's `event_ids` and `stream_index` entries
/// point at it) without a look-up per record.
///
/// Two random B-tree look-ups per record were most of the walk's thread.
/// Instead the walk adds up one keyed hash per record and index, of the
/// entry the record should have (its id and position; its stream, version
/// and position), and each index table is read once in key order, adding
/// up the same hash of every entry. Equal sums, with as many entries as
/// records (step 4 compares the counts), mean every record's entries are
/// there and point at it: the hash is keyed with a secret this process
/// drew, so no store can be made whose wrong entries add up to the right
/// sum but by a 2⁻⁶⁴ chance. When a sum differs, each record's entries are
/// looked up as before (`firstIndexFinding`), so the finding and its wording
/// are the ones the per-record check gave.
struct IndexSums: Equatable {
    var ids: UInt64 = 0
    var streams: UInt64 = 0
    /// An entry whose key or value cannot be a record's: the sums then say
    /// nothing, and the records are looked up one by one.
    var unreadable = false

    /// Drawn from the system's generator once per process.
    private static let secret = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))

    /// The entries `keys`, the header of the record at `position`, should have.
    mutating func add(_ keys: RecordKeys, at position: UInt64) {
        let id = Self.words(keys.id)
        let stream = Self.words(keys.stream)
        ids &+= Self.term(id, 0, position)
        streams &+= Self.term(stream, keys.streamVersion, position)
    }

    /// The `event_ids` table's sum as stored (`ids`; `unreadable` when an
    /// entry cannot be a record's).
    static func ofIDTable(_ reader: LedgerReader) throws -> IndexSums {
        var sums = IndexSums()
        try reader.transaction.forEachBorrowed(reader.tables.eventIDs) { key, value in
            guard key.byteCount == 16, let position = BigEndian.uint64(value) else {
                sums.unreadable = true
                return false
            }
            sums.ids &+= term(words(key), 0, position)
            return true
        }
        return sums
    }

    /// The `stream_index` table's sum as stored (`streams`; `unreadable`
    /// when an entry cannot be a record's), and its first entry out of step
    /// 5's order (read in the same pass).
    static func ofStreamTable(_ reader: LedgerReader) throws -> (sums: IndexSums, order: IndexFinding?) {
        var sums = IndexSums()
        var order = StreamOrder()
        try reader.transaction.forEachBorrowed(reader.tables.streamIndex) { key, value in
            guard key.byteCount == 24, let version = BigEndian.uint64(key, at: 16),
                let position = BigEndian.uint64(value)
            else {
                sums.unreadable = true
                order.finding =
                    order.finding
                    ?? .malformedEntry(
                        table: TableName.streamIndex, key: EventLog.keyText(Transaction.copy(key)), position: 0)
                return false
            }
            let stream = words(key)
            sums.streams &+= term(stream, version, position)
            if order.finding == nil { order.check(stream, version: version, position: position) }
            return true
        }
        return (sums, order.finding)
    }

    /// The two tables' sums together.
    static func joined(ids: IndexSums, streams: IndexSums) -> IndexSums {
        IndexSums(ids: ids.ids, streams: streams.streams, unreadable: ids.unreadable || streams.unreadable)
    }

    /// A keyed hash of one entry: SipHash (the standard library's
    /// `Hasher`, itself seeded per process) of the key's words with the
    /// secret mixed in, the version and the position.
    private static func term(_ key: (UInt64, UInt64), _ version: UInt64, _ position: UInt64) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(key.0 ^ secret.0)
        hasher.combine(key.1 ^ secret.1)
        hasher.combine(version)
        hasher.combine(position)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// The first 16 bytes of an index key as two words (in memory order:
    /// the same for a record's id as for the key that stores it).
    private static func words(_ key: RawSpan) -> (UInt64, UInt64) {
        key.withUnsafeBytes { raw in
            (
                raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            )
        }
    }

    private static func words(_ id: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: id.uuid) { raw in
            (
                raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            )
        }
    }
}

/// Step 5 as `stream_index` is read: each stream's versions run 1, 2, 3 …
/// at increasing positions.
struct StreamOrder {
    var finding: IndexFinding?
    private var stream: (UInt64, UInt64)?
    private var version: UInt64 = 0
    private var previous: UInt64 = 0

    /// The next entry, in key order.
    mutating func check(_ id: (UInt64, UInt64), version entryVersion: UInt64, position: UInt64) {
        if stream.map({ $0 != id }) ?? true {
            stream = id
            version = 0
            previous = 0
        }
        if entryVersion != version + 1 {
            finding = .streamGap(
                stream: Self.uuid(id), expected: version + 1, found: entryVersion, position: position)
        } else if position <= previous {
            finding = .streamOrder(stream: Self.uuid(id), version: entryVersion, position: position, previous: previous)
        }
        version = entryVersion
        previous = position
    }

    private static func uuid(_ words: (UInt64, UInt64)) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: words.0) { for i in 0..<8 { bytes[i] = $0[i] } }
        withUnsafeBytes(of: words.1) { for i in 0..<8 { bytes[8 + i] = $0[i] } }
        // Sixteen bytes make a UUID.
        return UUID(bytes: bytes)!
    }
}

extension EventLog {
    /// Step 3 the slow way, for a store whose index sums differ: the first
    /// record (of `records`) whose entries do not point at it, with what
    /// `entries(of:)` says of them.
    static func firstIndexFinding(_ reader: LedgerReader, records last: UInt64) throws -> IndexFinding? {
        var keys = IndexKeys()
        var finding: IndexFinding?
        try reader.forEachStoredRecord(from: 1) { position, value in
            guard position <= last else { return false }
            // The walk read every header up to `last` the quick way.
            guard let header = try? EventRecord.keys(ofEncoded: value, at: 32) else { return true }
            finding = try entries(of: header, in: reader.transaction, tables: reader.tables, keys: &keys)
            return finding == nil
        }
        return finding
    }
}
