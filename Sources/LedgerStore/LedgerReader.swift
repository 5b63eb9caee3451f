import FoundationEssentials
import Glibc
import LMDB
import LedgerCore

/// Reads the log inside one snapshot (lent by `EventLog.read` or as part of a
/// `LedgerWriter`).
public struct LedgerReader {
    /// The underlying transaction, for projection tables kept beside the log.
    public let transaction: Transaction
    let tables: EventLog.Tables
    /// One hasher for the reads of this snapshot: making one (an OpenSSL
    /// fetch and context) per record cost more than hashing the record.
    let chain = HashChain()

    init(transaction: Transaction, tables: EventLog.Tables) {
        self.transaction = transaction
        self.tables = tables
    }

    /// The last position and its chain hash (position 0 and zeros when empty).
    public func head() throws -> LedgerDigest {
        try head(checked: false)
    }

    /// The head, its last record checked against its chain link first, in
    /// one cursor step: what a write starts from.
    public func checkedHead() throws -> LedgerDigest {
        try head(checked: true)
    }

    private func head(checked: Bool) throws -> LedgerDigest {
        try transaction.withCursor(tables.events) { cursor in
            guard let (key, value) = try cursor.last() else { return LedgerDigest(position: 0, head: .zero) }
            guard let position = BigEndian.uint64(key), value.count >= 32,
                let hash = Digest256(bytes: Array(value[0..<32]))
            else {
                throw LedgerError.corruptRecord(
                    position: 0, .malformed("the last entry of the events table is malformed"))
            }
            if checked { try checkLink(of: value, at: position) }
            return LedgerDigest(position: position, head: hash)
        }
    }

    /// The record at `position`, checked against its chain link first: a
    /// record changed after it was written is `LedgerError.brokenChain`,
    /// never returned. It is checked and decoded where it lies in the map.
    public func record(at position: UInt64) throws -> EventRecord? {
        var names = TextCache()
        return try record(at: position, names: &names)
    }

    func record(at position: UInt64, names: inout TextCache) throws -> EventRecord? {
        let previous = try hashBefore(position)
        return try transaction.withValue(tables.events, BigEndian.bytes(position)) { value in
            try checkLink(of: value, at: position, previous: previous)
            return try Self.decode(value, position: position, names: &names)
        }
    }

    /// The record at `position` without its chain check, for the tools that
    /// report damage themselves (`verify`, an audit's own chain check).
    public func unverifiedRecord(at position: UInt64) throws -> EventRecord? {
        var names = TextCache()
        return try unverifiedRecord(at: position, names: &names)
    }

    func unverifiedRecord(at position: UInt64, names: inout TextCache) throws -> EventRecord? {
        try transaction.withValue(tables.events, BigEndian.bytes(position)) { value in
            try Self.decode(value, position: position, names: &names)
        }
    }

    /// Checks the stored entry `value` of `position` against its chain link:
    /// its stored hash must be the link of the previous record's stored hash
    /// and its own leaf. This is the cheap, local check of every read (one
    /// more lookup and one hash); `verify` walks the whole chain.
    public func checkLink(of value: [UInt8], at position: UInt64) throws {
        try checkLink(of: value.span.bytes, at: position, previous: try hashBefore(position))
    }

    /// The stored hash of the record before `position` (zeros before the
    /// first): what its chain link starts from.
    func hashBefore(_ position: UInt64) throws -> Digest256 {
        guard position > 1 else { return .zero }
        guard let hash = try storedHash(at: position - 1) else {
            throw LedgerError.brokenChain(position: position, what: "the record before it is missing")
        }
        return hash
    }

    func checkLink(of value: RawSpan, at position: UInt64, previous: Digest256) throws {
        guard value.byteCount > 32 else {
            throw LedgerError.corruptRecord(
                position: position, .malformed("stored value is only \(value.byteCount) bytes"))
        }
        let link = chain.link(previous: previous, leaf: chain.leaf(ofRecordIn: value, range: 32..<value.byteCount))
        guard link.isStored(in: value) else {
            throw LedgerError.brokenChain(
                position: position, what: "its stored hash does not match its contents and the record before it")
        }
    }

    /// Checks the last record's chain link (nothing when the log is empty):
    /// a write on top of a changed head is refused.
    public func checkHead() throws {
        _ = try checkedHead()
    }

    /// The chain hash stored with the record at `position`, if there is one.
    public func storedHash(at position: UInt64) throws -> Digest256? {
        try transaction.withValue(tables.events, BigEndian.bytes(position)) { value in Digest256(value) } ?? nil
    }

    /// The position of an event id, if stored.
    public func position(ofEvent id: UUID) throws -> UInt64? {
        guard let value = try transaction.get(tables.eventIDs, id.bytes) else { return nil }
        return BigEndian.uint64(value)
    }

    /// The current version of a stream: 0 when it has no events.
    public func version(ofStream stream: UUID) throws -> UInt64 {
        try transaction.withCursor(tables.streamIndex) { cursor in
            let prefix = stream.bytes
            // Seek past the last possible key of this stream, then step back.
            let entry: Cursor.Entry?
            if try cursor.seek(atLeast: prefix + [UInt8](repeating: 0xFF, count: 8)) != nil {
                entry = try cursor.previous()
            } else {
                entry = try cursor.last()
            }
            guard let (key, _) = entry, key.count == 24, Array(key[0..<16]) == prefix else { return 0 }
            return BigEndian.uint64(key, at: 16) ?? 0
        }
    }

    /// The events of one stream in order, read through the stream index
    /// without scanning the log, each checked against its chain link.
    ///
    /// One cursor walks the events table: a stream's records lie a few
    /// positions apart (inspections are recorded interleaved, a handful at a
    /// time), and stepping to the next entry costs a fraction of a search
    /// from the root, so the record before each one (whose hash its link
    /// starts from) and the record itself are reached by steps when near.
    public func records(inStream stream: UUID, fromVersion: UInt64 = 1) throws -> [EventRecord] {
        var positions: [UInt64] = []
        let prefix = stream.bytes
        try transaction.forEachBorrowed(tables.streamIndex, from: prefix + BigEndian.bytes(fromVersion)) {
            key, value in
            guard key.byteCount == 24, Self.starts(key, with: prefix), let position = BigEndian.uint64(value) else {
                return false
            }
            positions.append(position)
            return true
        }
        var names = TextCache()
        var records: [EventRecord] = []
        records.reserveCapacity(positions.count)
        try transaction.withCursor(tables.events) { cursor in
            var here: UInt64?
            for position in positions {
                var previous = Digest256.zero
                if position > 1 {
                    guard let hash = try entry(&cursor, &here, position - 1, { Digest256($0) }) ?? nil else {
                        throw LedgerError.brokenChain(position: position, what: "the record before it is missing")
                    }
                    previous = hash
                }
                let record = try entry(&cursor, &here, position) { value in
                    try checkLink(of: value, at: position, previous: previous)
                    return try Self.decode(value, position: position, names: &names)
                }
                guard let record else {
                    throw LedgerError.corruptRecord(
                        position: position, .malformed("the stream index names position \(position), which is missing"))
                }
                records.append(record)
            }
        }
        return records
    }

    /// Lends the value at `target` to `body` (nil when there is none),
    /// stepping the cursor from `here` when the target is at most 32 entries
    /// ahead and searching for it otherwise; `here` follows the cursor.
    private func entry<T>(
        _ cursor: inout Cursor, _ here: inout UInt64?, _ target: UInt64, _ body: (RawSpan) throws -> T
    ) throws -> T? {
        if let start = here, target > start, target - start <= 32 {
            while true {
                let step = try cursor.withEntry { key, value -> (UInt64, T?) in
                    let position = BigEndian.uint64(key) ?? 0
                    return (position, position == target ? try body(value) : nil)
                }
                guard let (position, result) = step else {
                    here = nil
                    return nil
                }
                here = position
                // A gap in the table (a damaged store) steps past the target.
                if position >= target { return result }
            }
        }
        let result = try cursor.withEntry(at: BigEndian.bytes(target)) { _, value in try body(value) }
        here = result == nil ? nil : target
        return result
    }

    /// Whether lent bytes begin with `prefix`.
    static func starts(_ span: RawSpan, with prefix: [UInt8]) -> Bool {
        guard span.byteCount >= prefix.count else { return false }
        // Compared only when the prefix has bytes, and the span as many: both have an address.
        return span.withUnsafeBytes { raw in
            prefix.withUnsafeBytes { p in p.count == 0 || memcmp(raw.baseAddress!, p.baseAddress!, p.count) == 0 }
        }
    }

    /// Calls `body` with every record from `position` on, in order, until it
    /// returns false.
    ///
    /// With `verifyingLinks`, each record is first checked against its chain
    /// link (`LedgerError.brokenChain` on a changed one), from the hash stored
    /// before `position`: one SHA-256 per record, since the previous hash is at
    /// hand in a scan. Off by default so that rebuilds and benchmarks choose.
    public func forEachRecord(
        from position: UInt64 = 1, verifyingLinks: Bool = false, _ body: (EventRecord) throws -> Bool
    ) throws {
        // The record holds its own position (checked against its key by
        // `verify`), so the keys need not be copied out.
        var expected = position
        var names = TextCache()
        var previous: Digest256? = verifyingLinks ? try hashBefore(position) : nil
        try transaction.forEachBorrowed(tables.events, from: BigEndian.bytes(position)) { _, value in
            if let link = previous {
                try checkLink(of: value, at: expected, previous: link)
                previous = Digest256(value)
            }
            let record = try Self.decode(value, position: expected, names: &names)
            expected = record.position + 1
            return try body(record)
        }
    }

    /// Walks the records at positions from `first` (or the first record)
    /// up to (not including) `end` (or the last), and deals each, lent in place, to the list of
    /// the partition whose stream it is: a rebuild's threads each walk one
    /// such segment and then fold their own records from every segment, so
    /// each record is walked and routed once, not once per partition. A
    /// record of `sharedTypes` goes to every partition (owned by one);
    /// with `everyRecordToFirst`, every record goes to partition 0. Also
    /// answers how many records the segment holds. `expected`: about how
    /// many records the segment holds, for the lists' room (by default
    /// worked out from `first` and `end` when both are given); the last
    /// segment, which has no `end`, grew its lists by copying them.
    func routeRecords(
        from first: UInt64?, before end: UInt64?, expecting expected: Int? = nil, among partitions: Int,
        sharedTypes: [String], everyRecordToFirst: Bool
    ) throws -> (lists: [[RoutedRecord]], walked: Int) {
        precondition(partitions > 1, "one partition folds the log as it walks it")
        let shared = sharedTypes.map { Array($0.utf8) }
        var lists = [[RoutedRecord]](repeating: [], count: partitions)
        let bounded = end.map { end in end > first ?? 1 ? Int(end - (first ?? 1)) : 0 }
        if let records = expected ?? bounded, records > 0 {
            for p in lists.indices {
                lists[p].reserveCapacity(p == 0 && everyRecordToFirst ? records : records / partitions * 9 / 8)
            }
        }
        var walked = 0
        // The segment ends at `end`'s key in LMDB's own order, so that any
        // key, even one of another length in a damaged store, is dealt by
        // exactly one segment.
        let endKey = end.map(BigEndian.bytes)
        try transaction.forEachLent(tables.events, from: first.map(BigEndian.bytes)) { key, value in
            if let endKey, !BigEndian.key(key, precedes: endKey) { return false }
            let position = BigEndian.uint64(key) ?? 0
            walked += 1
            let route = try value.withSpan { span in
                guard span.byteCount > 32 else {
                    throw LedgerError.corruptRecord(
                        position: position, .malformed("stored value is only \(span.byteCount) bytes"))
                }
                do throws(RecordError) {
                    return try EventRecord.route(ofEncoded: span, at: 32, sharedTypes: shared)
                } catch {
                    throw LedgerError.corruptRecord(position: position, error)
                }
            }
            let owner = Self.partition(ofStreamLastByte: route.streamLastByte, among: partitions)
            lists[owner].append(RoutedRecord(position: position, value: value, owned: true))
            if route.isShared || everyRecordToFirst {
                for p in lists.indices where p != owner && (route.isShared || p == 0) {
                    lists[p].append(RoutedRecord(position: position, value: value, owned: false))
                }
            }
            return true
        }
        return (lists, walked)
    }

    /// Decodes a record dealt by `routeRecords`, where it lies.
    static func decode(_ routed: RoutedRecord, names: inout TextCache) throws -> EventRecord {
        try routed.value.withSpan { try decode($0, position: routed.position, names: &names) }
    }

    /// Which of `partitions` a stream's records fall to: by the last byte
    /// of its id, which is random in both the v4 and the v7 ids the ledger
    /// makes.
    static func partition(ofStreamLastByte byte: UInt8, among partitions: Int) -> Int {
        Int(byte) % max(1, partitions)
    }

    /// Calls `body` with each stored entry's position and value (its chain
    /// hash, then the record at offset 32), lent in place, for scans that
    /// decode only what they need.
    public func forEachStoredRecord(
        from position: UInt64 = 1, _ body: (_ position: UInt64, _ value: RawSpan) throws -> Bool
    ) throws {
        try transaction.forEachBorrowed(tables.events, from: BigEndian.bytes(position)) { key, value in
            try body(BigEndian.uint64(key) ?? 0, value)
        }
    }

    /// The number of stored events, from the table's own statistics.
    public func count() throws -> Int { try transaction.count(tables.events) }

    static func decode(_ value: [UInt8], position: UInt64, names: inout TextCache) throws -> EventRecord {
        try decode(value.span.bytes, position: position, names: &names)
    }

    /// Decodes a stored value (hash ‖ record) where it lies.
    static func decode(_ value: RawSpan, position: UInt64, names: inout TextCache) throws -> EventRecord {
        guard value.byteCount > 32 else {
            throw LedgerError.corruptRecord(
                position: position, .malformed("stored value is only \(value.byteCount) bytes"))
        }
        do {
            return try EventRecord(decoding: value, at: 32, names: &names)
        } catch {
            throw LedgerError.corruptRecord(position: position, error)
        }
    }
}

/// A record dealt to a partition of a rebuild (`LedgerReader.routeRecords`):
/// where it lies in the map of the transaction that walked it, which stays
/// open until every partition is done reading.
struct RoutedRecord: Sendable {
    let position: UInt64
    let value: LentValue
    /// Whether the partition folds it as its own (or only sees it, as a
    /// shared record of another partition's stream).
    let owned: Bool
}
