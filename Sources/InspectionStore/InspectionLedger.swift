import Foundation
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore

/// A device's inspection ledger: the event log, the views projected from it,
/// the photo store and the reference-data cache, opened together.
public final class InspectionLedger: @unchecked Sendable {
    public let log: EventLog
    public let views: ProjectionSet
    public let reference: ReferenceCache
    public let photos: PhotoStore
    let tables: InspectionTables

    /// Opens the ledger whose store is at `storePath`. Views whose stored
    /// version differs from the code's are rebuilt first (with `progress`).
    public init(
        storePath: String, photosPath: String, options: Environment.Options = .init(),
        progress: ((String, UInt64, UInt64) -> Void)? = nil
    ) throws {
        let log = try EventLog(directory: storePath, options: options)
        self.log = log
        views = try ProjectionSet(log: log, projections: InspectionView.all())
        views.preparation = InspectionFold.preparation
        reference = try ReferenceCache(log: log)
        photos = PhotoStore(directory: photosPath)
        tables = try InspectionTables { try log.table($0) }
        if !options.readOnly {
            // A capture killed mid-write leaves a temporary file; nobody else will remove it.
            photos.removeStaleTemporaries()
            let stale = try views.staleProjections()
            if !stale.isEmpty {
                let names = stale.map(\.name).joined(separator: ", ")
                try views.rebuild(stale) { done, total in progress?("rebuilding \(names)", done, total) }
            }
        }
    }

    public func close() { log.close() }

    // MARK: - Recording

    /// Appends the events a decision produced to one inspection's stream,
    /// refusing them if another writer recorded to it since `expectedVersion`,
    /// and updates every view in the same durable transaction.
    @discardableResult
    public func record(
        _ events: [InspectionEvent], stream: UUID, expectedVersion: UInt64, actor: Actor, device: UUID,
        at time: Timestamp
    ) throws -> [AppendOutcome] {
        let pending = events.map { $0.pending(stream: stream, actor: actor, device: device, recordedAt: time) }
        return try views.append(pending, expectedVersions: [stream: expectedVersion])
    }

    /// Appends already-built events (sync outcomes, retries) with the views.
    @discardableResult
    public func append(_ events: [PendingEvent]) throws -> [AppendOutcome] {
        try views.append(events)
    }

    // MARK: - Reading

    /// The inspection's current state, folded from its own stream.
    public func state(of id: UUID) throws -> InspectionState? {
        try log.read { reader in try InspectionFold.state(of: id, reader: reader, tables: tables) }
    }

    /// The state of an inspection as it stood after `position` (for audits).
    public func state(of id: UUID, asOf position: UInt64) throws -> InspectionState? {
        try log.read { reader in
            let fold = InspectionFold()
            for record in try reader.records(inStream: id) where record.position <= position {
                if record.type == InspectionEventType.started.rawValue, fold.templates.isEmpty,
                    case .started(let started) = try EventUpcaster.decode(record, template: nil),
                    let template = try InspectionFold.pinnedTemplate(
                        started.templateHash, reader.transaction, tables)
                {
                    fold.templates[started.templateHash] = template
                }
                try fold.consume(record)
            }
            return fold.states[id]
        }
    }

    /// A template pinned in the log, by content hash.
    public func pinnedTemplate(hash: String) throws -> Template? {
        try log.read { reader in try InspectionFold.pinnedTemplate(hash, reader.transaction, tables) }
    }

    public func summary(of id: UUID) throws -> InspectionSummary? {
        try log.read { reader in try InspectionSummary.read(id, reader.transaction, tables) }
    }

    /// Which inspections to list.
    public enum Listing: Sendable {
        case all, drafts, followUps
    }

    /// Summaries, most recently started last. Discarded drafts are never listed.
    public func summaries(_ listing: Listing = .all) throws -> [InspectionSummary] {
        try log.read { reader in
            let txn = reader.transaction
            var result: [InspectionSummary] = []
            switch listing {
            case .all:
                try txn.forEach(tables.inspections) { key, value in
                    if let id = UUID(bytes: key) {
                        let summary = try InspectionSummary(id: id, cbor: try CBORValue(decoding: value))
                        if summary.status != .discarded { result.append(summary) }
                    }
                    return true
                }
            case .drafts, .followUps:
                try txn.forEach(listing == .drafts ? tables.drafts : tables.followUps) { key, _ in
                    if let id = UUID(bytes: key), let summary = try InspectionSummary.read(id, txn, tables) {
                        result.append(summary)
                    }
                    return true
                }
            }
            return result
        }
    }

    public func issues() throws -> [IssueRow] {
        try log.read { reader in
            var rows: [IssueRow] = []
            try reader.transaction.forEach(tables.issues) { key, value in
                if let id = UUID(bytes: key) { rows.append(try IssueRow(id: id, cbor: try CBORValue(decoding: value))) }
                return true
            }
            return rows
        }
    }

    /// What the server has not acknowledged, in the order a sync must send it.
    public func outbox() throws -> [OutboxItem] {
        try log.read { reader in
            var rows: [OutboxItem] = []
            try reader.transaction.forEach(tables.outbox) { key, value in
                rows.append(try OutboxItem(key: key, cbor: try CBORValue(decoding: value)))
                return true
            }
            return rows
        }
    }

    // MARK: - Naming things

    /// The inspection a person named by any unique prefix of its id.
    public func resolveInspection(_ reference: String) throws -> UUID {
        guard let prefix = IDPrefix(reference) else { throw LookupError.notAnID(reference) }
        let matches = try log.read { reader in try prefix.matches(in: tables.inspections, reader.transaction) }
        switch matches.count {
        case 0: throw LookupError.noInspection(reference)
        case 1: return matches[0]
        default: throw LookupError.ambiguous(reference, matches)
        }
    }

    /// The issue a person named by a prefix, with its inspection.
    public func resolveIssue(_ reference: String) throws -> IssueRow {
        guard let prefix = IDPrefix(reference) else { throw LookupError.notAnID(reference) }
        let matches = try log.read { reader in try prefix.matches(in: tables.issues, reader.transaction) }
        switch matches.count {
        case 0: throw LookupError.noIssue(reference)
        case 1:
            guard let row = try issues().first(where: { $0.id == matches[0] }) else {
                throw LookupError.noIssue(reference)
            }
            return row
        default: throw LookupError.ambiguous(reference, matches)
        }
    }
}

/// A reference to an inspection or issue that names nothing, or too much.
public enum LookupError: Error, CustomStringConvertible {
    case notAnID(String)
    case noInspection(String)
    case noIssue(String)
    case ambiguous(String, [UUID])

    public var description: String {
        switch self {
        case .notAnID(let text):
            "'\(text)' is not an id: ids are hexadecimal (dashes optional). See 'jqc inspections' for them."
        case .noInspection(let text):
            "no inspection matches '\(text)'. See 'jqc inspections' and 'jqc drafts' for ids."
        case .noIssue(let text):
            "no issue matches '\(text)'. See 'jqc issues' for ids."
        case .ambiguous(let text, let ids):
            "'\(text)' matches more than one: \(ids.prefix(5).map { $0.lowercased }.joined(separator: ", ")). "
                + "Type more of the id."
        }
    }
}
