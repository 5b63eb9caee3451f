import CLMDB

/// A named table (an LMDB database handle), valid while its environment is open.
public struct Table: Hashable, Sendable {
    let dbi: MDB_dbi
    public let name: String
    /// The name, and the label of emptying the table, interned for
    /// `TableInUse`.
    let label: UInt
    let emptyingLabel: UInt

    init(dbi: MDB_dbi, name: String) {
        self.dbi = dbi
        self.name = name
        label = TableInUse.intern(name)
        emptyingLabel = TableInUse.intern(TableInUse.emptyingLabel(name))
    }
}

/// A read or write transaction, only ever lent to a closure by `Environment`.
///
/// A value is either copied into Swift storage (`get`, `forEach`) or lent
/// where it lies in LMDB's memory map as a `RawSpan` (`withValue`,
/// `forEachBorrowed`): LMDB's pointers are valid only until the transaction
/// ends (or, in a write transaction, the next write), and a span cannot
/// escape the closure it is lent to, so neither can outlive them. Scans lend:
/// a decoder reads the record in place and copies only what it keeps.
public struct Transaction {
    let handle: OpaquePointer
    public let readOnly: Bool

    /// The snapshot a read transaction sees (LMDB's transaction id): two
    /// read transactions with the same one read the same data, whichever
    /// thread each runs on. A write transaction's is one past the last
    /// commit, so no read transaction shares it.
    public var snapshot: Int { mdb_txn_id(handle) }

    /// Flags for `put`.
    public struct PutFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Fail with `.keyExists` instead of overwriting.
        public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
        /// The key sorts after every stored key: a fast append at the end.
        public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
    }

    func openTable(_ name: String, create: Bool) throws(LMDBError) -> Table? {
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(handle, name, create ? UInt32(MDB_CREATE) : 0, &dbi)
        if rc == MDB_NOTFOUND && !create { return nil }
        try check(rc, "opening table \(name)")
        return Table(dbi: dbi, name: name)
    }

    // MARK: - Values

    /// The value stored under `key`, or nil.
    public func get(_ table: Table, _ key: [UInt8]) throws(LMDBError) -> [UInt8]? {
        try found(table, key).map(Self.bytes)
    }

    /// The `MDB_val` LMDB points at for `key` (valid until the transaction
    /// writes or ends), or nil when there is none.
    private func found(_ table: Table, _ key: [UInt8]) throws(LMDBError) -> MDB_val? {
        var v = MDB_val()
        let rc = key.withUnsafeBytes { raw in
            var k = MDB_val(raw)
            return TableInUse.during(table.label) { mdb_get(handle, table.dbi, &k, &v) }
        }
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "reading from \(table.name)", table: table.name)
        return v
    }

    public func put(_ table: Table, _ key: [UInt8], _ value: [UInt8], flags: PutFlags = []) throws(LMDBError) {
        let rc = key.withUnsafeBytes { rawKey in
            value.withUnsafeBytes { rawValue in
                var k = MDB_val(rawKey)
                var v = MDB_val(rawValue)
                return TableInUse.during(table.label) { mdb_put(handle, table.dbi, &k, &v, flags.rawValue) }
            }
        }
        try check(rc, "writing to \(table.name)", table: table.name)
    }

    /// Deletes `key`; answers whether it was there.
    @discardableResult
    public func delete(_ table: Table, _ key: [UInt8]) throws(LMDBError) -> Bool {
        let rc = key.withUnsafeBytes { raw in
            var k = MDB_val(raw)
            return TableInUse.during(table.label) { mdb_del(handle, table.dbi, &k, nil) }
        }
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "deleting from \(table.name)", table: table.name)
        return true
    }

    /// Removes every entry of `table`, keeping the table.
    public func empty(_ table: Table) throws(LMDBError) {
        let rc = TableInUse.during(table.emptyingLabel) { mdb_drop(handle, table.dbi, 0) }
        try check(rc, "emptying \(table.name)", table: TableInUse.emptyingLabel(table.name))
    }

    /// Deletes `table` itself from the environment (its entries and its
    /// name): its handle is closed, so the environment must be closed after
    /// the transaction. What a store written before the table looked like.
    public func remove(_ table: Table) throws(LMDBError) {
        let rc = TableInUse.during(table.emptyingLabel) { mdb_drop(handle, table.dbi, 1) }
        try check(rc, "removing \(table.name)", table: TableInUse.emptyingLabel(table.name))
    }

    /// The number of entries in `table`.
    public func count(_ table: Table) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, table.dbi, &stat), "counting \(table.name)")
        return stat.ms_entries
    }

    // MARK: - Cursors

    /// Lends a cursor over `table` to `body` and closes it afterwards.
    public func withCursor<T, E: Error>(_ table: Table, _ body: (inout Cursor) throws(E) -> T) throws -> T {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, table.dbi, &cursor), "opening a cursor on \(table.name)")
        defer { mdb_cursor_close(cursor) }
        // mdb_cursor_open returned 0: it set `cursor`.
        var wrapped = Cursor(handle: cursor!, table: table)
        return try body(&wrapped)
    }

    /// Lends the value stored under `key` to `body`, in place; nil when
    /// there is none.
    public func withValue<T>(_ table: Table, _ key: [UInt8], _ body: (RawSpan) throws -> T) throws -> T? {
        guard let v = try found(table, key) else { return nil }
        return try Self.lend(v, body)
    }

    /// Calls `body` with each entry from the first key ≥ `start` (or the
    /// first entry) in key order, lent in place, until it returns false.
    public func forEachBorrowed(
        _ table: Table, from start: [UInt8]? = nil, _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        try withCursor(table) { cursor in
            var op = start == nil ? MDB_FIRST : MDB_SET_RANGE
            while let more = try cursor.lendEntry(op, key: op == MDB_SET_RANGE ? start : nil, body) {
                guard more else { return }
                op = MDB_NEXT
            }
        }
    }

    /// Calls `body` for each entry from the first key ≥ `start` (or the first
    /// entry) in key order, until it returns false.
    public func forEach(
        _ table: Table, from start: [UInt8]? = nil, _ body: ([UInt8], [UInt8]) throws -> Bool
    ) throws {
        try forEachBorrowed(table, from: start) { key, value in
            try body(Self.copy(key), Self.copy(value))
        }
    }

    /// Like `forEach`, but copies only the values: scans that find the key
    /// inside the value save an allocation per entry.
    public func forEachValue(_ table: Table, from start: [UInt8]? = nil, _ body: ([UInt8]) throws -> Bool) throws {
        try forEachBorrowed(table, from: start) { _, value in try body(Self.copy(value)) }
    }

    /// The bytes of a lent span, copied.
    public static func copy(_ span: RawSpan) -> [UInt8] {
        span.withUnsafeBytes { Array($0) }
    }

    /// Lends LMDB's bytes to `body` as a span, which cannot escape it.
    static func lend<T>(_ v: MDB_val, _ body: (RawSpan) throws -> T) rethrows -> T {
        let raw = UnsafeRawBufferPointer(start: v.mv_size > 0 ? v.mv_data : nil, count: v.mv_size)
        return try body(RawSpan(_unsafeBytes: raw))
    }

    static func bytes(_ v: MDB_val) -> [UInt8] { lend(v, copy) }
}

/// A position in a table, lent by `Transaction.withCursor`.
public struct Cursor {
    let handle: OpaquePointer
    public let table: Table

    public typealias Entry = (key: [UInt8], value: [UInt8])

    /// Moves the cursor: LMDB's key and value there (valid until the next
    /// move), or nil when there is no entry. Every cursor move goes through it.
    func position(_ op: MDB_cursor_op, key: [UInt8]?) throws(LMDBError) -> (MDB_val, MDB_val)? {
        var k = MDB_val()
        var v = MDB_val()
        let rc: Int32
        if let key {
            rc = key.withUnsafeBytes { raw in
                k = MDB_val(raw)
                return TableInUse.during(table.label) { mdb_cursor_get(handle, &k, &v, op) }
            }
        } else {
            rc = TableInUse.during(table.label) { mdb_cursor_get(handle, &k, &v, op) }
        }
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "moving a cursor on \(table.name)", table: table.name)
        return (k, v)
    }

    /// Moves the cursor and lends the entry there to `body`, in place.
    func lendEntry<T>(
        _ op: MDB_cursor_op, key: [UInt8]?, _ body: (_ key: RawSpan, _ value: RawSpan) throws -> T
    ) throws -> T? {
        guard let (k, v) = try position(op, key: key) else { return nil }
        return try Transaction.lend(k) { key in try Transaction.lend(v) { value in try body(key, value) } }
    }

    private func move(_ op: MDB_cursor_op, key: [UInt8]? = nil) throws(LMDBError) -> Entry? {
        try position(op, key: key).map { k, v in (Transaction.bytes(k), Transaction.bytes(v)) }
    }

    /// Moves to exactly `key` (or, without one, to the next entry) and lends
    /// the entry there to `body`, in place; nil when there is none.
    public mutating func withEntry<T>(
        at key: [UInt8]? = nil, _ body: (_ key: RawSpan, _ value: RawSpan) throws -> T
    ) throws -> T? {
        try lendEntry(key == nil ? MDB_NEXT : MDB_SET_KEY, key: key, body)
    }

    public mutating func first() throws(LMDBError) -> Entry? { try move(MDB_FIRST) }
    public mutating func last() throws(LMDBError) -> Entry? { try move(MDB_LAST) }
    public mutating func next() throws(LMDBError) -> Entry? { try move(MDB_NEXT) }
    public mutating func previous() throws(LMDBError) -> Entry? { try move(MDB_PREV) }
    /// The first entry whose key is ≥ `key`.
    public mutating func seek(atLeast key: [UInt8]) throws(LMDBError) -> Entry? { try move(MDB_SET_RANGE, key: key) }
}

extension MDB_val {
    /// Points LMDB at Swift-owned bytes for the length of one call. LMDB
    /// declares the pointer mutable but only reads keys and values it is given.
    init(_ raw: UnsafeRawBufferPointer) {
        self.init(mv_size: raw.count, mv_data: UnsafeMutableRawPointer(mutating: raw.baseAddress))
    }
}
