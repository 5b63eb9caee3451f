import FoundationEssentials
import LMDB
import LedgerCore
import Synchronization

/// The append-only event log, stored in LMDB (`Schemas/ledger-format.md`).
///
/// Tables:
/// - `events`: position (u64 big-endian) → chain hash (32 bytes) ‖ record (CBOR)
/// - `event_ids`: event id (16 bytes) → position
/// - `stream_index`: stream id (16 bytes) ‖ version (u64 BE) → position
/// - `meta`: the format marker
/// - `merkle`: the Merkle tree's nodes (`MerkleStore.swift`)
///
/// Every append runs in one LMDB write transaction together with whatever the
/// caller does in the same `write` closure (the projections), so a view can
/// never disagree with the log, even after a crash.
public final class EventLog: Sendable {
    /// The value of `meta["format"]` this code writes and reads.
    public static let format = "inspection-ledger/2"

    /// The LMDB environment: inside this package only, so no caller outside the
    /// storage layers reaches the tables behind the log's back.
    package let environment: Environment
    let tables: Tables
    /// The ledger's `store-head` file (`StoreHead`), when this store is a
    /// ledger's: checked on every open, rewritten after each commit.
    public let headFile: String?
    /// What the last committed write through this log left for the next one
    /// (`WriterMemo`: checked against the stored head before it is used).
    private let writerMemo = Mutex<WriterMemo?>(nil)

    public struct Tables: Sendable {
        let events: Table
        let eventIDs: Table
        let streamIndex: Table
        let meta: Table
        /// Nil only in a read-only store of format 1, which has no tree yet.
        var tree: Table?
        /// Nil only in a read-only store written before receptions carried
        /// records by reference (it holds none); a writable open creates it.
        var carried: Table?
        /// The map of stream heads (`HeadMapStore.swift`). Nil only in a
        /// read-only store written before it (its checkpoints cannot carry
        /// the map's root); a writable open creates and builds it.
        var heads: Table?
    }

    enum MetaKey {
        static let format = Array("format".utf8)
    }

    /// Opens the log stored in `directory`.
    ///
    /// With `options.create` (the default, for library callers and tests) a
    /// missing store is created. Without it (every `jqc` command but `init`),
    /// and always with `options.readOnly`, nothing is created or written: a
    /// missing store is `noLedger`, an LMDB environment without the ledger's
    /// `meta` table or format marker is `notALedger`, and a store that fails
    /// the pre-flight check of its file is `damagedStore`.
    package init(directory: String, options: Environment.Options = .init()) throws {
        let headFile = StoreHead.path(forStore: directory)
        self.headFile = headFile
        let environment: Environment
        do {
            environment = try Environment(directory: directory, options: options)
        } catch {
            throw LedgerError.from(error, store: directory)
        }
        self.environment = environment
        do {
            let opened = try Self.openTables(environment: environment, directory: directory, options: options)
            tables = opened
            try Self.checkOpened(
                environment: environment, tables: opened, directory: directory, headFile: headFile,
                options: options)
        } catch let error as LMDBError {
            environment.close()
            throw LedgerError.from(error, store: directory)
        } catch {
            environment.close()
            throw error
        }
    }

    /// The tables of the log in `environment`, after its format marker is
    /// checked (a `/1` store upgraded and the map of stream heads built or
    /// brought up to date, on writable opens only).
    private static func openTables(
        environment: Environment, directory: String, options: Environment.Options
    ) throws -> Tables {
        let creates = options.create && !options.readOnly
        // The marker first, opened without creating anything, so another
        // program's environment is refused before a table is made in it.
        let meta = try environment.table(TableName.meta, create: false)
        let stored: [UInt8]? = try meta.flatMap { meta in
            try environment.read { txn in try txn.get(meta, MetaKey.format) }
        }
        guard creates || stored != nil else {
            throw LedgerError.notALedger(
                path: directory,
                why: meta == nil
                    ? "its LMDB environment has no 'meta' table (it belongs to another program)"
                    : "its 'meta' table has no format marker")
        }
        if let stored {
            try Self.checkStoredFormat(stored, environment: environment)
        }
        func open(_ name: String) throws -> Table {
            guard let table = try environment.table(name, create: creates) else {
                throw LedgerError.damagedStore(path: directory, what: "its '\(name)' table is missing")
            }
            return table
        }
        var opened = Tables(
            events: try open(TableName.events), eventIDs: try open(TableName.eventIDs),
            streamIndex: try open(TableName.streamIndex), meta: try open(TableName.meta),
            // Absent from a `/1` store: a writable open creates it for the
            // upgrade below; a read-only one leaves it absent.
            tree: try environment.table(TableName.merkle, create: !options.readOnly),
            carried: try environment.table(TableName.carried, create: !options.readOnly),
            heads: try environment.table(TableName.heads, create: false))
        let storedFormat = stored.map { String(decoding: $0, as: UTF8.self) }
        // A new store is marked, a `/1` store gains its tree (writable
        // opens only), any other format is refused.
        try Self.upgradeFormat(
            environment: environment, tables: opened, stored: storedFormat, readOnly: options.readOnly)
        if options.readOnly, storedFormat != Self.format { opened.tree = nil }
        if opened.heads == nil, !options.readOnly {
            opened.heads = try Self.buildHeadMap(environment: environment, tables: opened)
        } else if let heads = opened.heads, !options.readOnly {
            try Self.catchUpHeadMap(environment: environment, tables: opened, table: heads, directory: directory)
        }
        return opened
    }

    /// The checks of a just-opened log against its `store-head` file and,
    /// on a writable open of an existing store, of its tree and newest record.
    private static func checkOpened(
        environment: Environment, tables: Tables, directory: String, headFile: String?,
        options: Environment.Options
    ) throws {
        // Read before the snapshot is taken: a commit made meanwhile
        // moves the file only after the store, never ahead of the snapshot.
        if let headFile, let recorded = StoreHead.read(headFile) {
            try environment.read { txn in
                let log = LedgerReader(transaction: txn, tables: tables)
                try recorded.check(
                    storeHead: try log.head(), storedHash: { position in try log.storedHash(at: position) },
                    store: directory, file: headFile)
            }
        }
        let creates = options.create && !options.readOnly
        if !creates && !options.readOnly {
            // A cheap probe of the log's own tree and its newest record: a
            // command that would write (or show views) on a damaged or
            // changed head refuses here. Read-only opens skip it so that
            // `verify` and audits can report the damage themselves.
            try environment.read { txn in try LedgerReader(transaction: txn, tables: tables).checkHead() }
        }
    }

    /// Creates the `heads` table of a store written before the map of
    /// stream heads and builds it from the log, in one write transaction,
    /// verified (`HeadMapTable.build`); said on stderr, never silent.
    static func buildHeadMap(environment: Environment, tables: Tables) throws -> Table {
        guard let table = try environment.table(TableName.heads, create: true) else {
            throw LedgerError.invalidEvent("the heads table could not be created")
        }
        let streams = try environment.write { txn in
            try HeadMapTable.build(txn, tables: tables, into: table)
        }
        // A new store has nothing to build and nothing to say.
        guard streams > 0 else { return table }
        try? OpenFile.standardError.write(
            "jqc: built the map of stream heads of this store (\(streams) streams, verified): its checkpoints now prove each inspection complete to its last record\n"
        )
        return table
    }

    /// Brings the map of stream heads up to the log when a jqc older than
    /// the map appended records without it (its size entry behind the
    /// log's): from the records after it, in one write transaction, said
    /// once on stderr. A table that does not say its size is built again
    /// from the log, verified. One that says more records than the log has
    /// is left as it is: that is damage (records lost), for `verify --full`
    /// to report, and no snapshot uses such a map. A node the catch-up would
    /// build on that its records or the nodes below it do not support
    /// refuses the open (`HeadMapCatchUpDamage`), the map left as it was.
    static func catchUpHeadMap(environment: Environment, tables: Tables, table: Table, directory: String) throws {
        let said: String?
        do {
            said = try catchingUp(environment: environment, tables: tables, table: table)
        } catch let damage as HeadMapCatchUpDamage {
            throw LedgerError.damagedStore(path: directory, what: damage.description)
        }
        if let said { try? OpenFile.standardError.write(said) }
    }

    private static func catchingUp(environment: Environment, tables: Tables, table: Table) throws -> String? {
        try environment.write { txn in
            guard let lag = try LedgerReader(transaction: txn, tables: tables).headMapLag() else { return nil }
            if let mapSize = lag.mapSize {
                guard mapSize < lag.logSize else { return nil }
                try HeadMapTable.catchUp(txn, tables: tables, into: table, from: mapSize)
                return
                    "jqc: the map of stream heads was behind the log (an older jqc wrote records \(mapSize + 1)..\(lag.logSize)); brought up to date\n"
            }
            let streams = try HeadMapTable.build(txn, tables: tables, into: table)
            return
                "jqc: the map of stream heads did not say it held the log's \(lag.logSize) records; built it again from the log (\(streams) streams, verified)\n"
        }
    }

    /// The one place the stored format marker is checked. A store of another
    /// format is refused here; a format upgrade (an older marker this code can
    /// bring forward) belongs here too, before any table beyond `meta` is read.
    static func checkStoredFormat(_ stored: [UInt8], environment: Environment) throws {
        let text = String(decoding: stored, as: UTF8.self)
        guard Self.readableFormats.contains(text) else { throw LedgerError.unsupportedFormat(found: text) }
    }

    /// Closes the storage. Only needed when the same process must open the
    /// directory again (LMDB forbids two handles on one file in a process).
    public func close() { environment.close() }

    /// A named table beside the log: created when the store is writable,
    /// nil when a read-only store has none (written before it existed).
    public func existingTable(_ name: String) throws -> Table? { try environment.table(name) }

    /// Opens additional named tables, for the projections kept beside the log.
    public func table(_ name: String) throws -> Table {
        guard let table = try environment.table(name) else {
            throw LedgerError.noLedger(path: environment.path)
        }
        return table
    }

    // MARK: - Transactions

    /// Runs `body` in one durable write transaction. Everything it appends, and
    /// everything it writes to other tables, commits together or not at all.
    ///
    /// The closure runs once (the map is fixed); a full disk is
    /// `LedgerError.noSpace` and commits nothing.
    @_spi(RawAppend) public func write<T>(_ body: (LedgerWriter) throws -> T) throws -> T {
        let memo = writerMemo.withLock { $0 }
        var left: WriterMemo?
        do {
            let result = try mapStorageErrors {
                try environment.write { txn in
                    let writer = try LedgerWriter(transaction: txn, tables: tables, memo: memo)
                    let result = try body(writer)
                    try writer.settleHeads()
                    left = writer.memo()
                    return result
                }
            }
            // Only a committed transaction's memo: `environment.write` has
            // returned, so the commit succeeded.
            writerMemo.withLock { $0 = left }
            if let headFile, let head = left?.head, head != memo?.head { StoreHead(head).record(at: headFile) }
            return result
        } catch {
            // Nothing was committed; the next writer loads from the store.
            writerMemo.withLock { $0 = nil }
            throw error
        }
    }

    /// Runs `body` against a consistent snapshot of the log.
    public func read<T>(_ body: (LedgerReader) throws -> T) throws -> T {
        try mapStorageErrors {
            try environment.read { txn in try body(LedgerReader(transaction: txn, tables: tables)) }
        }
    }

    /// Appends a batch in one transaction: all of it or none.
    ///
    /// `expectedVersions` gives, for any stream, the version the caller last
    /// saw (0 for a new stream); if another writer got there first the whole
    /// batch is refused with `LedgerError.versionConflict`.
    @discardableResult
    package func append(_ events: [PendingEvent], expectedVersions: [UUID: UInt64] = [:]) throws -> [AppendOutcome] {
        try write { writer in
            for (stream, expected) in expectedVersions {
                try writer.expect(stream: stream, version: expected)
            }
            return try events.map { try writer.append($0) }
        }
    }

    private func mapStorageErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as LMDBError {
            throw LedgerError.from(error, store: environment.path)
        }
    }

    // MARK: - Reading

    public func head() throws -> LedgerDigest {
        try read { try $0.head() }
    }

    public func record(at position: UInt64) throws -> EventRecord? {
        try read { try $0.record(at: position) }
    }

    public func records(inStream stream: UUID) throws -> [EventRecord] {
        try read { try $0.records(inStream: stream) }
    }
}

/// Where an appended event landed.
public struct AppendOutcome: Hashable, Sendable {
    public var position: UInt64
    public var streamVersion: UInt64
    /// True when the event id was already stored and nothing was written.
    public var wasAlreadyStored: Bool
}

extension Environment.Options {
    /// How every command but `jqc init` opens a store (`StoreAccess.recording`).
    package static var existingStore: Environment.Options { StoreAccess.recording.options }
}
