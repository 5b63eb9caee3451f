import FoundationEssentials
import InspectionDomain
import LMDB
import LedgerCore
@_spi(RawAppend) import LedgerStore

/// A device's inspection ledger: the event log, the views projected from it,
/// the photo store and the reference-data cache, opened together.
public final class InspectionLedger: Sendable {
    public let log: EventLog
    public let views: ProjectionSet
    public let reference: ReferenceCache
    public let photos: PhotoStore
    let tables: InspectionTables
    let readOnly: Bool
    /// Told what a person should know on stderr: a stale view being rebuilt,
    /// a damaged one found and rebuilt, a wait behind another rebuild.
    let notice: (@Sendable (String) -> Void)?

    /// Opens the ledger whose store is at `storePath`. Views whose stored
    /// version differs from the code's are rebuilt first, announced through
    /// `notice` and with `progress`.
    public convenience init(
        storePath: String, photosPath: String, access: StoreAccess,
        notice: (@Sendable (String) -> Void)? = nil, progress: ((String, UInt64, UInt64) -> Void)? = nil
    ) throws {
        try self.init(
            storePath: storePath, photosPath: photosPath, options: access.options, notice: notice, progress: progress)
    }

    /// `init(storePath:photosPath:access:…)` with LMDB's options spelled out,
    /// for this package's tests and benchmarks.
    package init(
        storePath: String, photosPath: String, options: Environment.Options = .init(),
        notice: (@Sendable (String) -> Void)? = nil, progress: ((String, UInt64, UInt64) -> Void)? = nil
    ) throws {
        let log = try EventLog(directory: storePath, options: options)
        self.log = log
        views = try ProjectionSet(
            log: log, projections: InspectionView.all(), sharedTypes: InspectionFold.sharedTypes,
            rebuildLock: options.readOnly ? nil : RebuildLock(path: storePath + "/" + LedgerLayout.rebuildLock),
            notice: notice)
        reference = try ReferenceCache(log: log)
        photos = PhotoStore(directory: photosPath)
        tables = try InspectionTables({ try log.table($0.name) }, existing: { try log.existingTable($0.name) })
        readOnly = options.readOnly
        self.notice = notice
        if !options.readOnly {
            // A capture killed mid-write leaves a temporary file; nobody else will remove it.
            photos.removeStaleTemporaries()
            try views.rebuildStale(announce: notice) { done, total in progress?("rebuilding", done, total) }
        }
    }

    /// Runs `body`; when it meets a damaged view row, heals that view
    /// (`heal`) and runs it again: the one retry of a damaged view, around
    /// every read and append of this ledger. The damaged row is never
    /// returned.
    func healing<T>(_ body: () throws -> T) throws -> T {
        // Each view is rebuilt at most once: a second damage in the same
        // view after its rebuild is not damage a rebuild cures.
        var rebuilt: Set<String> = []
        while true {
            do {
                return try body()
            } catch let damage as ViewDamage {
                guard !rebuilt.contains(damage.view) else { throw damage }
                try heal(damage)
                rebuilt.insert(damage.view)
            }
        }
    }

    /// Rebuilds the view `damage` names from the log, saying so. On a ledger
    /// opened read-only the damage is the error instead, and its message
    /// says which view to rebuild: a reader that may hand over to a writer
    /// (`jqc`'s listings) gives the damage to the writer's `heal` and reads
    /// once more, so the damage is retried once, never by both.
    public func heal(_ damage: ViewDamage) throws {
        guard let view = views.projections.first(where: { $0.name == damage.view }) else { throw damage }
        guard !readOnly else {
            // Rows written by another version of the code carry no (or
            // another) checksum: say that, not "damaged".
            if let state = try views.storedState(of: view), state.version != view.version {
                throw InspectionStoreError.staleView(view.name, stored: state.version, code: view.version)
            }
            throw damage
        }
        notice?("\(damage.what): rebuilding it from the log…")
        try views.rebuild([view])
    }

    public func close() { log.close() }

    // MARK: - Recording

    /// Appends the events a decision produced to one inspection's stream,
    /// refusing them if another writer recorded to it since `expectedVersion`,
    /// and updates every view in the same durable transaction. `carrying`
    /// holds the bytes a reception among them carries by reference: kept in
    /// the `carried` table in that transaction (each leaf once).
    /// `decided`: the inspection's state after each event, as the decision
    /// that produced them left it; the views write those instead of
    /// folding the stream again for every record (a debug build checks
    /// that a fold of the log agrees, `DecidedStates`).
    ///
    /// An SPI (`@_spi(RawAppend)`): events appended without a decision, for
    /// the store's own recording and the named use cases that import it
    /// (`Tools/test` checks which); every other caller records through
    /// `record(_:on:by:…)` or `record(_:onStreamOf:…)`.
    @_spi(RawAppend) @discardableResult
    public func record(
        _ events: [InspectionEvent], stream: UUID, expectedVersion: UInt64, actor: Actor, device: UUID,
        at time: Timestamp, carrying: CarriedRecords = CarriedRecords(), beside: [PendingEvent] = [],
        decided: [InspectionState]? = nil
    ) throws -> [AppendOutcome] {
        // `beside`: events of other streams (a reception's key pin on the
        // device's own stream) committed in the same transaction.
        let pending =
            events.map { $0.pending(stream: stream, actor: actor, device: device, recordedAt: time) } + beside
        return try healing {
            // A fresh scratch per attempt: a retry after healing a view folds anew.
            let scratch = ProjectionScratch()
            if let decided { DecidedStates.keep(decided, of: Array(pending.prefix(events.count)), in: scratch) }
            return try views.append(
                pending, expectedVersions: [stream: expectedVersion], carrying: Self.ordered(carrying),
                scratch: scratch)
        }
    }

    /// Appends already-built events with the views, and the bytes their
    /// receptions carry (`carrying`): an SPI (`@_spi(RawAppend)`) for a
    /// salvage, which appends a verified prefix of another log as it was,
    /// and the benchmarks; nothing a person does is recorded through it.
    @_spi(RawAppend) @discardableResult
    public func append(_ events: [PendingEvent], carrying: CarriedRecords = CarriedRecords()) throws
        -> [AppendOutcome]
    {
        try healing { try views.append(events, carrying: Self.ordered(carrying)) }
    }

    /// The bytes in leaf order (LMDB writes sorted keys fastest).
    static func ordered(_ carried: CarriedRecords) -> [[UInt8]] {
        carried.bytes.sorted { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }.map(\.value)
    }

    // MARK: - Reading

    /// The inspection's current state, folded from its own stream.
    public func state(of id: UUID) throws -> InspectionState? {
        try healing { try stateRead(of: id) }
    }

    /// The inspection's current state, folded in the caller's read snapshot
    /// (the sync run reads a wave's states in one before taking its lock).
    public func state(of id: UUID, reader: LedgerReader) throws -> InspectionState? {
        try InspectionFold.state(of: id, reader: reader, tables: tables)
    }

    private func stateRead(of id: UUID) throws -> InspectionState? {
        try log.read { reader in try InspectionFold.state(of: id, reader: reader, tables: tables) }
    }

    /// The state of an inspection as it stood after `position` (for audits).
    public func state(of id: UUID, asOf position: UInt64) throws -> InspectionState? {
        try healing { try stateRead(of: id, asOf: position) }
    }

    private func stateRead(of id: UUID, asOf position: UInt64) throws -> InspectionState? {
        try log.read { reader in
            let fold = InspectionFold(log: reader)
            for record in try reader.records(inStream: id) where record.position <= position {
                if fold.templates.isEmpty,
                    let hash = try InspectionFold.startedTemplateHash(record, log: reader, memo: fold.closures),
                    let template = try InspectionFold.pinnedTemplate(hash, reader.transaction, tables)
                {
                    fold.templates[hash] = template
                }
                try fold.consume(record)
            }
            return fold.states[id]
        }
    }

    /// A template pinned in the log, by content hash.
    public func pinnedTemplate(hash: String) throws -> Template? {
        try healing { try log.read { reader in try InspectionFold.pinnedTemplate(hash, reader.transaction, tables) } }
    }

    public func summary(of id: UUID) throws -> InspectionSummary? {
        try healing { try log.read { reader in try InspectionSummary.read(id, reader.transaction, tables) } }
    }

    /// The re-inspections started of `parent`, from the inspections view
    /// (rows checked).
    public func reinspections(of parent: UUID) throws -> [UUID] {
        try healing {
            try log.read { reader in try InspectionFold.reinspections(of: parent, reader.transaction, tables) }
        }
    }

    /// Which inspections to list.
    public enum Listing: Sendable {
        case all, drafts, followUps
    }

    /// Summaries, most recently started last. Discarded drafts are never listed.
    public func summaries(_ listing: Listing = .all) throws -> [InspectionSummary] {
        try healing { try summariesRead(listing) }
    }

    private func summariesRead(_ listing: Listing) throws -> [InspectionSummary] {
        try log.read { reader in
            let txn = reader.transaction
            var result: [InspectionSummary] = []
            switch listing {
            case .all:
                try txn.forEach(tables.inspections) { key, value in
                    if let id = UUID(bytes: key) {
                        let row = try InspectionTables.open(tables.inspections, key, value)
                        let summary = try InspectionSummary(id: id, cbor: try CBORValue(decoding: row))
                        if summary.status != .discarded { result.append(summary) }
                    }
                    return true
                }
            case .drafts, .followUps:
                let table = listing == .drafts ? tables.drafts : tables.followUps
                try txn.forEach(table) { key, value in
                    _ = try InspectionTables.open(table, key, value)
                    if let id = UUID(bytes: key), let summary = try InspectionSummary.read(id, txn, tables) {
                        // A row must agree with the inspection it names: a
                        // completed inspection in the drafts view (a planted
                        // row, checksum and all) is damage, not a draft.
                        let belongs =
                            listing == .drafts
                            ? summary.status == .draft
                            : summary.status == .completed && summary.followUpRequired
                                && summary.followUpResolvedBy == nil
                        guard belongs else {
                            throw ViewDamage(
                                view: InspectionTables.view(of: table.name), table: table.name, key: key,
                                problem: "names inspection \(id.lowercased), which is \(summary.status.rawValue)"
                                    + (listing == .followUps ? " and has no follow-up outstanding" : ""))
                        }
                        result.append(summary)
                    }
                    return true
                }
            }
            return result
        }
    }

    public func issues() throws -> [IssueRow] {
        try rows(of: tables.issues) { key, row in
            guard let id = UUID(bytes: key) else { return nil }
            return try IssueRow(id: id, cbor: try CBORValue(decoding: row))
        }
    }

    /// What the server has not acknowledged, in the order a sync must send it.
    public func outbox() throws -> [OutboxItem] {
        try rows(of: tables.outbox) { key, row in try OutboxItem(key: key, cbor: try CBORValue(decoding: row)) }
    }

    /// Every row of `table` in key order, its checksum checked, as `decode`
    /// makes it of the row's key and value (nil passes the row over).
    private func rows<Row>(of table: Table, _ decode: ([UInt8], [UInt8]) throws -> Row?) throws -> [Row] {
        try healing {
            try log.read { reader in
                var rows: [Row] = []
                try reader.transaction.forEach(table) { key, value in
                    if let row = try decode(key, try InspectionTables.open(table, key, value)) { rows.append(row) }
                    return true
                }
                return rows
            }
        }
    }

    // MARK: - Naming things

    /// The inspection a person named by its id or any unique prefix of it
    /// (`InspectionResolver`: the log's stream index, as an auditor's).
    public func resolveInspection(_ reference: String) throws -> UUID {
        try InspectionResolver.resolve(reference, in: log)
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
            "no inspection matches '\(text)'. This ledger's log holds no inspection whose id starts so. See "
                + "'jqc inspections' and 'jqc drafts' for ids; 'jqc log' lists every event, discarded drafts included."
        case .noIssue(let text):
            "no issue matches '\(text)'. See 'jqc issues' for ids."
        case .ambiguous(let text, let ids):
            "'\(text)' matches more than one: \(ids.prefix(5).map { $0.lowercased }.joined(separator: ", ")). "
                + "Type more of the id."
        }
    }
}
