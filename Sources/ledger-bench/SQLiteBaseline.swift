import CSQLite
import Foundation

/// The SQLite baseline: one row per event in a WAL database with
/// `synchronous=FULL`, the durable configuration a careful app would pick.
final class SQLiteEventTable {
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var readStreamStatement: OpaquePointer?
    private var summaryStatement: OpaquePointer?
    /// An insert into each view table of `insertViewRow`, by table name.
    private var viewRowStatements: [String: OpaquePointer] = [:]
    private var templateInsert: OpaquePointer?
    private var templateRead: OpaquePointer?

    init(path: String) throws {
        try check(sqlite3_open(path, &db), "open")
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        try exec(
            "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE, stream BLOB NOT NULL, "
                + "version INTEGER NOT NULL, hash BLOB NOT NULL, record BLOB NOT NULL)")
        try exec("CREATE UNIQUE INDEX IF NOT EXISTS events_stream ON events(stream, version)")
        // Pinned templates by content hash, as the ledger's templates view
        // keeps them: a read of an inspection whose template was pinned by an
        // earlier one fetches it from here, as the ledger's read does.
        try exec("CREATE TABLE IF NOT EXISTS templates (hash TEXT PRIMARY KEY, cbor BLOB NOT NULL)")
        try check(
            sqlite3_prepare_v2(
                db, "INSERT OR REPLACE INTO templates(hash, cbor) VALUES (?, ?)", -1, &templateInsert, nil),
            "prepare template insert")
        try check(
            sqlite3_prepare_v2(db, "SELECT cbor FROM templates WHERE hash = ?", -1, &templateRead, nil),
            "prepare template read")
        try check(
            sqlite3_prepare_v2(
                db, "INSERT INTO events(seq, id, stream, version, hash, record) VALUES (?,?,?,?,?,?)", -1, &insert, nil),
            "prepare")
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_finalize(readStreamStatement)
        sqlite3_finalize(summaryStatement)
        for statement in viewRowStatements.values { sqlite3_finalize(statement) }
        sqlite3_finalize(templateInsert)
        sqlite3_finalize(templateRead)
        sqlite3_close(db)
    }

    func exec(_ sql: String) throws {
        try check(sqlite3_exec(db, sql, nil, nil, nil), sql)
    }

    /// Inserts rows; `id`, `stream`, `hash`, `record` are the same bytes the ledger stores.
    func insert(seq: Int64, id: [UInt8], stream: [UInt8], version: Int64, hash: [UInt8], record: [UInt8]) throws {
        sqlite3_reset(insert)
        sqlite3_bind_int64(insert, 1, seq)
        bind(2, id)
        bind(3, stream)
        sqlite3_bind_int64(insert, 4, version)
        bind(5, hash)
        bind(6, record)
        let rc = sqlite3_step(insert)
        guard rc == SQLITE_DONE else { throw BenchError("sqlite insert failed: \(rc)") }
    }

    private func bind(_ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            // SQLITE_TRANSIENT (-1): SQLite copies the bytes before returning.
            _ = sqlite3_bind_blob(
                insert, index, raw.baseAddress, Int32(raw.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
    }

    func insertTemplate(hash: String, cbor: [UInt8]) throws {
        sqlite3_reset(templateInsert)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        sqlite3_bind_text(templateInsert, 1, hash, -1, transient)
        cbor.withUnsafeBytes { raw in
            _ = sqlite3_bind_blob(templateInsert, 2, raw.baseAddress, Int32(raw.count), transient)
        }
        guard sqlite3_step(templateInsert) == SQLITE_DONE else { throw BenchError("template insert failed") }
    }

    /// A pinned template's canonical CBOR, by content hash.
    func template(hash: String) throws -> [UInt8]? {
        sqlite3_reset(templateRead)
        sqlite3_bind_text(templateRead, 1, hash, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        guard sqlite3_step(templateRead) == SQLITE_ROW else { return nil }
        return Array(
            UnsafeRawBufferPointer(
                start: sqlite3_column_blob(templateRead, 0), count: Int(sqlite3_column_bytes(templateRead, 0))))
    }

    /// One stream's records by version, through the (stream, version) index.
    func readStream(_ stream: [UInt8]) throws -> [[UInt8]] {
        if readStreamStatement == nil {
            try check(
                sqlite3_prepare_v2(
                    db, "SELECT record FROM events WHERE stream = ? ORDER BY version", -1, &readStreamStatement, nil),
                "prepare stream read")
        }
        let stmt = readStreamStatement
        sqlite3_reset(stmt)
        stream.withUnsafeBytes { raw in
            _ = sqlite3_bind_blob(
                stmt, 1, raw.baseAddress, Int32(raw.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
        var records: [[UInt8]] = []
        while sqlite3_step(stmt) == SQLITE_ROW {
            records.append(
                Array(
                    UnsafeRawBufferPointer(
                        start: sqlite3_column_blob(stmt, 0), count: Int(sqlite3_column_bytes(stmt, 0)))))
        }
        return records
    }

    func insertSummary(id: [UInt8], row: [UInt8]) throws {
        if summaryStatement == nil {
            try check(
                sqlite3_prepare_v2(db, "INSERT INTO summaries(id, row) VALUES (?, ?)", -1, &summaryStatement, nil),
                "prepare summary insert")
        }
        sqlite3_reset(summaryStatement)
        for (i, bytes) in [id, row].enumerated() {
            bytes.withUnsafeBytes { raw in
                _ = sqlite3_bind_blob(
                    summaryStatement, Int32(i + 1), raw.baseAddress, Int32(raw.count),
                    unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        }
        guard sqlite3_step(summaryStatement) == SQLITE_DONE else { throw BenchError("summary insert failed") }
    }

    /// Empties the view table `table` (a key-ordered table, as an LMDB
    /// table is one), made if it is not there: called inside the rebuild's
    /// transaction, as the ledger empties its view tables in its own.
    func emptyViewTable(_ table: String) throws {
        try exec("CREATE TABLE IF NOT EXISTS \"\(table)\" (key BLOB PRIMARY KEY, row BLOB NOT NULL) WITHOUT ROWID")
        try exec("DELETE FROM \"\(table)\"")
    }

    /// Puts a view row, as the ledger's rebuild puts one (an existing key's
    /// row is replaced).
    func insertViewRow(table: String, key: [UInt8], row: [UInt8]) throws {
        let statement: OpaquePointer
        if let prepared = viewRowStatements[table] {
            statement = prepared
        } else {
            var prepared: OpaquePointer?
            try check(
                sqlite3_prepare_v2(
                    db, "INSERT OR REPLACE INTO \"\(table)\"(key, row) VALUES (?, ?)", -1, &prepared, nil),
                "prepare the \(table) insert")
            guard let prepared else { throw BenchError("sqlite: no statement for the \(table) insert") }
            viewRowStatements[table] = prepared
            statement = prepared
        }
        sqlite3_reset(statement)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, bytes) in [key, row].enumerated() {
            bytes.withUnsafeBytes { raw in
                _ = sqlite3_bind_blob(statement, Int32(i + 1), raw.baseAddress, Int32(raw.count), transient)
            }
        }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchError("the \(table) insert failed") }
    }

    /// Calls `body` with each row's hash and record bytes, in order, up to
    /// row `last` (the rows a later step of the run added are not records).
    func scan(through last: Int64 = .max, _ body: ([UInt8], [UInt8]) -> Void) throws {
        var stmt: OpaquePointer?
        try check(
            sqlite3_prepare_v2(db, "SELECT hash, record FROM events WHERE seq <= ? ORDER BY seq", -1, &stmt, nil),
            "prepare scan")
        defer { sqlite3_finalize(stmt) }
        sqlite3_bind_int64(stmt, 1, last)
        while sqlite3_step(stmt) == SQLITE_ROW {
            let hash = Array(
                UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 0), count: Int(sqlite3_column_bytes(stmt, 0))))
            let record = Array(
                UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 1), count: Int(sqlite3_column_bytes(stmt, 1))))
            body(hash, record)
        }
    }

    /// The last row holding a record (a CBOR map of 13 or 14 keys): a kept
    /// run's table ends with the bare inserts of its action row.
    func lastRecordRow() throws -> Int64 {
        var stmt: OpaquePointer?
        try check(
            sqlite3_prepare_v2(
                db, "SELECT coalesce(max(seq), 0) FROM events WHERE hex(substr(record, 1, 1)) IN ('AD', 'AE')", -1,
                &stmt, nil), "prepare last record")
        defer { sqlite3_finalize(stmt) }
        guard sqlite3_step(stmt) == SQLITE_ROW else { throw BenchError("sqlite: no answer for the last record row") }
        return sqlite3_column_int64(stmt, 0)
    }

    private func check(_ rc: Int32, _ what: String) throws {
        guard rc == SQLITE_OK else {
            throw BenchError("sqlite \(what) failed: \(String(cString: sqlite3_errmsg(db)))")
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
