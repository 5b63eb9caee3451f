import CLMDB

/// A value lent in place by a transaction, held by its address so that it
/// can be read after the walk that found it, on any thread, for as long as
/// that transaction stays open (its pages cannot be reused before then).
/// Whoever holds one keeps the lending transaction open until every thread
/// is done with it: nothing here can check that.
public struct LentValue: @unchecked Sendable {
    private let start: UnsafeRawPointer?
    /// The value's length in bytes.
    public let count: Int

    init(_ v: MDB_val) {
        start = v.mv_size > 0 ? UnsafeRawPointer(v.mv_data) : nil
        count = v.mv_size
    }

    /// Holds a value a walk lends as a span (`forEachBorrowed`) by its
    /// address, for another thread that reads it while the walk's
    /// transaction stays open (`verify --full`'s tree check).
    public init(lending span: RawSpan) {
        let raw = span.withUnsafeBytes { $0 }
        start = raw.count > 0 ? raw.baseAddress : nil
        count = raw.count
    }

    /// Lends the bytes to `body` as a span, which cannot escape it.
    public func withSpan<T>(_ body: (RawSpan) throws -> T) rethrows -> T {
        try body(RawSpan(_unsafeBytes: UnsafeRawBufferPointer(start: start, count: count)))
    }

    /// Asks the processor to bring the value's first `bytes` into its cache
    /// now, so that a read a few values later does not wait for memory: a
    /// hint only, which never faults.
    @inline(__always)
    public func prefetch(bytes: Int = 128) {
        guard let start else { return }
        var offset = 0
        while offset < min(bytes, count) {
            lmdb_shim_prefetch(start + offset)
            offset += 64
        }
    }
}

extension Transaction {
    /// Calls `body` with each entry from the first key ≥ `start` (or the
    /// first entry) in key order, the key lent as a span and the value as a
    /// `LentValue`, until it returns false.
    public func forEachLent(
        _ table: Table, from start: [UInt8]? = nil, _ body: (_ key: RawSpan, _ value: LentValue) throws -> Bool
    ) throws {
        try withCursor(table) { cursor in
            var op = start == nil ? MDB_FIRST : MDB_SET_RANGE
            while let (k, v) = try cursor.position(op, key: op == MDB_SET_RANGE ? start : nil) {
                guard try Transaction.lend(k, { key in try body(key, LentValue(v)) }) else { return }
                op = MDB_NEXT
            }
        }
    }
}
