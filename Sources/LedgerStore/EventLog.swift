import Foundation
import LMDB
import LedgerCore

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
public final class EventLog: @unchecked Sendable {
    /// The value of `meta["format"]` this code writes and reads.
    public static let format = "inspection-ledger/2"

    public let environment: Environment
    private(set) var tables: Tables

    public struct Tables {
        let events: Table
        let eventIDs: Table
        let streamIndex: Table
        let meta: Table
        /// Nil only in a read-only store of format 1, which has no tree yet.
        var tree: Table?
    }

    enum MetaKey {
        static let format = Array("format".utf8)
    }

    /// Opens the log stored in `directory`, creating it if it does not exist
    /// (unless `options.readOnly`).
    public init(directory: String, options: Environment.Options = .init()) throws {
        if options.readOnly && !FileManager.default.fileExists(atPath: directory + "/data.mdb") {
            throw LedgerError.noLedger(path: directory)
        }
        let environment: Environment
        do {
            environment = try Environment(directory: directory, options: options)
        } catch {
            throw LedgerError.storage(error)
        }
        self.environment = environment
        func open(_ name: String) throws -> Table {
            guard let table = try environment.table(name) else { throw LedgerError.noLedger(path: directory) }
            return table
        }
        do {
            tables = Tables(
                events: try open("events"), eventIDs: try open("event_ids"),
                streamIndex: try open("stream_index"), meta: try open("meta"), tree: try environment.table("merkle"))
        } catch let error as LMDBError {
            throw LedgerError.storage(error)
        }
        let meta = tables.meta
        let stored = try environment.read { txn in try txn.get(meta, MetaKey.format) }
        try Self.upgradeFormat(
            environment: environment, tables: tables, stored: stored.map { String(decoding: $0, as: UTF8.self) },
            readOnly: options.readOnly)
        if options.readOnly, stored.map({ String(decoding: $0, as: UTF8.self) }) != Self.format { tables.tree = nil }
    }

    /// Closes the storage. Only needed when the same process must open the
    /// directory again (LMDB forbids two handles on one file in a process).
    public func close() { environment.close() }

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
    /// The closure may run more than once if the map has to grow; it must not
    /// do anything but work with the writer it is given.
    public func write<T>(_ body: (LedgerWriter) throws -> T) throws -> T {
        try mapStorageErrors {
            try environment.write { txn in
                let writer = try LedgerWriter(transaction: txn, tables: tables)
                let result = try body(writer)
                try writer.finish()
                return result
            }
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
    public func append(_ events: [PendingEvent], expectedVersions: [UUID: UInt64] = [:]) throws -> [AppendOutcome] {
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
            throw LedgerError.storage(error)
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
