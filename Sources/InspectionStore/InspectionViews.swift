import Dispatch
import FoundationEssentials
import Glibc
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore
import Synchronization

/// The inspection views, each a projection with its own version and tables.
///
/// All of them are functions of the inspections' folded states: an append
/// folds the touched inspections once (shared through the transaction's
/// scratch) and each view rewrites its rows for them; a rebuild folds the
/// whole log once in memory and each view writes all its rows.
public final class InspectionView: Projection, Sendable {
    /// Which view.
    public enum Kind: String, CaseIterable, Sendable {
        case templates, inspections, drafts, followups, issues, outbox, receptions
    }

    public let kind: Kind
    public var name: String { kind.rawValue }

    /// Bump a view's version when what it stores changes: it is rebuilt on open.
    /// Version 2: every row carries a checksum (`ViewRowChecksum`).
    public var version: Int {
        switch kind {
        // Version 2 also holds the sync states `stalled` and
        // `synced-without-photos`, the summaries' sync notes, and the
        // outbox's detail and left_out (all new in the same release).
        case .templates: 2
        // Version 3: a merged copy's status follows the discard rule (an
        // overtaken discard leaves a draft), a read-only copy is no one's
        // to send, and each device names its own server record; stored rows
        // of the old rules are rebuilt on open, never shown as they were.
        case .inspections, .followups: 3
        // Version 4: a read-only copy (a plain handover addressed to another
        // device) is no draft of this device's: it can never record on it.
        case .drafts: 4
        // Version 4: an adopted copy is its adopter's to send, and the
        // second table lists other devices' submissions not reported sent.
        case .outbox: 4
        // Version 3: an issue row says whether the server may hold it twice.
        case .issues: 3
        case .receptions: 1
        }
    }

    /// The templates view reads `template.pinned` events alone, the drafts
    /// view the types of the records that change a status: rebuilding either
    /// alone folds no inspection (and decodes no payload, for drafts). Every
    /// view is a function of each inspection's stream and the pinned
    /// templates, so a rebuild folds them in partitions, one per core.
    public var foldsByStream: Bool { true }

    public var tableNames: [ViewTable] {
        let n = InspectionTables.names
        return switch kind {
        case .templates: [n.templates]
        case .inspections: [n.inspections, n.reinspections]
        case .drafts: [n.drafts]
        case .followups: [n.followUps]
        case .issues: [n.issues]
        case .receptions: [TableName.View.receptions]
        case .outbox: [n.outbox, n.unreported]
        }
    }

    public init(_ kind: Kind) { self.kind = kind }

    /// A partition's rebuilder of another view handed to `absorb`: a bug in
    /// the rebuild, never something the log can cause.
    static let mismatchedPartition = InspectionStoreError.corruptView(
        "a rebuild merged the partitions of two different views")

    /// Every view, in the order they must be applied (templates first: the
    /// others may read pinned templates).
    public static func all() -> [InspectionView] { Kind.allCases.map(InspectionView.init) }

    // MARK: - Incremental

    public func apply(_ record: EventRecord, in context: ProjectionContext) throws {
        let tables = try InspectionTables({ context.table($0) }, existing: { context.existingTable($0) })
        if kind == .templates {
            guard record.type == InspectionEventType.templatePinned.rawValue else { return }
            let event = try EventUpcaster.decode(record, template: nil)
            if case .templatePinned(let pinned) = event {
                try context.put(
                    InspectionTables.names.templates, Array(pinned.templateHash.utf8),
                    pinned.template.canonicalCBOR.encoded())
            }
            return
        }
        if kind == .receptions {
            if record.type == InspectionEventType.received.rawValue {
                try context.put(TableName.View.receptions, BigEndian.bytes(record.position), [])
            }
            return
        }
        let touched = try context.scratch.shared(TouchedInspections.self, at: record.position) {
            TouchedInspections()
        }.states(for: record, context: context, tables: tables)
        for state in touched {
            try write(state, context, tables)
        }
        if kind == .inspections, record.type == InspectionEventType.started.rawValue,
            let parent = touched.first?.parentInspectionID
        {
            try context.put(InspectionTables.names.reinspections, parent.bytes + record.stream.bytes, [])
        }
    }

    /// Rewrites this view's rows for one inspection.
    func write(_ state: InspectionState, _ rows: ProjectionContext, _ tables: InspectionTables) throws {
        var changes: [RowChange] = []
        rowChanges(of: state, into: &changes)
        for change in changes { try change.apply(to: rows) }
    }

    /// This view's rows for one inspection, as puts and deletes: pure, so a
    /// rebuild works them out for many inspections at once on every core.
    func rowChanges(of state: InspectionState, into changes: inout [RowChange]) {
        let key = state.id.bytes
        switch kind {
        case .templates, .receptions:
            break
        case .inspections:
            guard state.status != .notStarted else { return }
            changes.append(.put(InspectionTables.names.inspections, key, InspectionSummary(state).encoded))
        case .drafts:
            changes.append(
                state.isDraftHere
                    ? .put(InspectionTables.names.drafts, key, []) : .delete(InspectionTables.names.drafts, key))
        case .followups:
            changes.append(
                state.status == .completed && state.followUpOutstanding
                    ? .put(InspectionTables.names.followUps, key, [])
                    : .delete(InspectionTables.names.followUps, key))
        case .issues:
            // A discarded draft's issues disappear from every view.
            let visible = state.status == .draft || state.status == .completed
            for issue in state.issues {
                changes.append(
                    visible
                        ? .put(InspectionTables.names.issues, issue.id.bytes, IssueRow(issue, of: state).encoded)
                        : .delete(InspectionTables.names.issues, issue.id.bytes))
            }
        case .outbox:
            for (rowKey, row) in OutboxItem.rows(of: state) {
                changes.append(
                    row.map { .put(InspectionTables.names.outbox, rowKey, $0.encoded) }
                        ?? .delete(InspectionTables.names.outbox, rowKey))
            }
            // Keyed by the standing submit's time, which a later reception
            // may change: the rows of other keys of this inspection go first.
            let unreported = UnreportedSubmission.row(of: state)
            let rowKey = UnreportedSubmission.key(state.id, submittedAt: unreported?.submittedAt)
            for stale in state.submits.map({ UnreportedSubmission.key(state.id, submittedAt: $0.at) })
            where stale != rowKey || unreported == nil {
                changes.append(.delete(InspectionTables.names.unreported, stale))
            }
            if let unreported { changes.append(.put(InspectionTables.names.unreported, rowKey, unreported.encoded)) }
        }
    }

    /// Every view, to ask each for its rows of one inspection (the
    /// templates and receptions views have none: `rowChanges(of:into:)`).
    private static let every = all()

    /// Every row the views hold for one inspection's `state`, by table name,
    /// without checksums, and no deletes: what a store of the same views
    /// elsewhere writes into emptied tables. `ledger-bench`'s SQLite baseline
    /// writes these, so that its rebuild writes the rows the ledger's does.
    package static func rows(of state: InspectionState) -> [(table: String, key: [UInt8], value: [UInt8])] {
        var changes: [RowChange] = []
        for view in every { view.rowChanges(of: state, into: &changes) }
        return changes.compactMap { change in
            if case .put(let table, let key, let value) = change { return (table.name, key, value) }
            return nil
        }
    }

    // MARK: - Rebuild

    public func makeRebuilder(scratch: ProjectionScratch) -> any ProjectionRebuilder {
        if kind == .templates { return TemplatesRebuilder() }
        if kind == .drafts {
            // Rebuilt beside a view that folds every inspection (the views
            // are made in `Kind` order, `inspections` first), the drafts are
            // read from that fold's states: the record types alone would be
            // a second pass over every record for the same answer.
            if let fold = scratch.existing(InspectionFold.self) { return Rebuilder(view: self, fold: fold) }
            return DraftsRebuilder()
        }
        if kind == .receptions { return ReceptionsRebuilder() }
        return Rebuilder(view: self, fold: scratch.shared(InspectionFold.self) { InspectionFold(log: scratch.log) })
    }

    /// The drafts view from record types alone: an inspection is a draft
    /// from its `inspection.started` until its `inspection.submitted` or
    /// `inspection.discarded` (`InspectionState.apply` moves the status on
    /// nothing else; `ViewPropertyTests` compares this with the full fold).
    /// A stream with a reception is merged, and its status is the merge's
    /// (a carried submit closes it, a discard that did not see later work
    /// does not): those streams alone are folded, at the end, from the log,
    /// with the templates pinned anywhere (kept as records until then, so a
    /// ledger with no reception still decodes no payload).
    struct DraftsRebuilder: ProjectionRebuilder {
        var open: [UUID: Bool] = [:]
        var merged: Set<UUID> = []
        var pinned: [EventRecord] = []
        static let templatePinned = InspectionEventType.templatePinned.rawValue
        static let started = InspectionEventType.started.rawValue
        static let submitted = InspectionEventType.submitted.rawValue
        static let discarded = InspectionEventType.discarded.rawValue
        static let handedOver = InspectionEventType.handedOver.rawValue
        static let received = InspectionEventType.received.rawValue

        mutating func absorb(_ other: any ProjectionRebuilder) throws {
            guard let other = other as? DraftsRebuilder else { throw InspectionView.mismatchedPartition }
            open.merge(other.open) { mine, _ in mine }
            merged.formUnion(other.merged)
            pinned += other.pinned
        }

        mutating func consumeShared(_ record: EventRecord) throws {
            if record.type == Self.templatePinned { pinned.append(record) }
        }

        mutating func consume(_ record: EventRecord) throws {
            // Compared, not hashed: this runs for every record of a rebuild.
            let type = record.type
            if type == Self.templatePinned { pinned.append(record) }
            if type == Self.received { merged.insert(record.stream) }
            if type == Self.started {
                if open[record.stream] == nil { open[record.stream] = true }
            } else if type == Self.submitted || type == Self.discarded, open[record.stream] == true {
                open[record.stream] = false
            } else if type == Self.received, open[record.stream] == nil {
                // Only a draft is handed over: the receiver holds a draft.
                open[record.stream] = true
            } else if type == Self.handedOver, open[record.stream] == true,
                case .handedOver(let handed) = try InspectionFold.event(of: record, log: nil), handed.mode == .handover
            {
                open[record.stream] = false
            }
        }

        func write(in context: ProjectionContext) throws {
            var open = open
            if !merged.isEmpty {
                let templates = InspectionFold(log: context.log)
                for record in pinned.sorted(by: { $0.position < $1.position }) { try templates.consumeShared(record) }
                for id in merged {
                    let fold = InspectionFold(log: context.log)
                    fold.templates = templates.templates
                    for record in try context.log.records(inStream: id) { try fold.consume(record) }
                    open[id] = fold.states[id]?.isDraftHere ?? false
                }
            }
            let drafts = open.filter(\.value).keys.sorted { $0.bytesPrecede($1) }
            for id in drafts { try context.put(InspectionTables.names.drafts, id.bytes, []) }
        }
    }

    /// The templates view from `template.pinned` events alone.
    struct TemplatesRebuilder: ProjectionRebuilder {
        var templates: [String: Template] = [:]

        mutating func consumeShared(_ record: EventRecord) throws { try consume(record) }

        mutating func absorb(_ other: any ProjectionRebuilder) throws {
            guard let other = other as? TemplatesRebuilder else { throw InspectionView.mismatchedPartition }
            templates.merge(other.templates) { mine, _ in mine }
        }

        mutating func consume(_ record: EventRecord) throws {
            guard record.type == InspectionEventType.templatePinned.rawValue else { return }
            if case .templatePinned(let pinned) = try InspectionFold.event(of: record, log: nil),
                templates[pinned.templateHash] == nil
            {
                templates[pinned.templateHash] = pinned.template
            }
        }

        func write(in context: ProjectionContext) throws {
            for (hash, template) in templates.sorted(by: { $0.key < $1.key }) {
                try context.put(InspectionTables.names.templates, Array(hash.utf8), template.canonicalCBOR.encoded())
            }
        }
    }

    /// The receptions view from record types alone (no payload decoded).
    struct ReceptionsRebuilder: ProjectionRebuilder {
        var positions: [UInt64] = []
        static let received = InspectionEventType.received.rawValue

        mutating func consumeShared(_ record: EventRecord) throws {}

        mutating func absorb(_ other: any ProjectionRebuilder) throws {
            guard let other = other as? ReceptionsRebuilder else { throw InspectionView.mismatchedPartition }
            positions += other.positions
        }

        mutating func consume(_ record: EventRecord) throws {
            if record.type == Self.received { positions.append(record.position) }
        }

        func write(in context: ProjectionContext) throws {
            // Big-endian keys in ascending order: appends to the right page.
            for position in positions.sorted() {
                try context.put(TableName.View.receptions, BigEndian.bytes(position), [])
            }
        }
    }

    struct Rebuilder: ProjectionRebuilder {
        let view: InspectionView
        let fold: InspectionFold
        /// The views share one fold: the first made with it is handed the
        /// records, the others only write their rows from it.
        let consumesRecords: Bool

        init(view: InspectionView, fold: InspectionFold) {
            self.view = view
            self.fold = fold
            consumesRecords = fold.rebuiltViews.isEmpty
            fold.rebuiltViews.append(view)
        }

        mutating func consume(_ record: EventRecord) throws {
            // Only one view folds each record, however many are handed it.
            guard record.position > fold.lastPosition else { return }
            try fold.consume(record)
        }

        mutating func consumeShared(_ record: EventRecord) throws { try fold.consumeShared(record) }

        mutating func absorb(_ other: any ProjectionRebuilder) throws {
            guard let other = other as? Rebuilder else { throw InspectionView.mismatchedPartition }
            fold.absorb(other.fold)
        }

        func write(in context: ProjectionContext) throws {
            // Opened even when no row is written: a view with no rows still
            // has its tables, as when it was written row by row.
            _ = try InspectionTables({ context.table($0) }, existing: { context.existingTable($0) })
            switch view.kind {
            case .templates:
                break  // TemplatesRebuilder
            default:
                for change in fold.rowChanges(of: view, foldMemory: context.foldMemory) {
                    try change.apply(to: context)
                }
                if view.kind == .inspections {
                    for (parent, children) in fold.children {
                        for child in children {
                            try context.put(InspectionTables.names.reinspections, parent.bytes + child.bytes, [])
                        }
                    }
                }
            }
        }
    }
}

extension InspectionFold {
    /// The rows of `view` (one of `rebuiltViews`) for every folded state, in
    /// key order. The first view to ask works them out for every view at
    /// once, in parts on every core: each state is then read out of the
    /// fold once, not once per view (reading one copies all it holds).
    /// Follow-ups are resolved first, over the whole fold. Each view's rows
    /// are handed over once and not kept, so that only the views not yet
    /// written hold theirs in memory.
    func rowChanges(of view: InspectionView, foldMemory: FoldMemory) -> [RowChange] {
        if !followUpsResolved {
            resolveFollowUps()
            followUpsResolved = true
            rows = nil
        }
        if rows == nil { rows = rowChanges(of: rebuiltViews, foldMemory: foldMemory) }
        guard let index = rebuiltViews.firstIndex(where: { $0 === view }), let taken = rows?[index] else {
            preconditionFailure("the \(view.name) view asked for rows of a fold it was not rebuilt with")
        }
        rows?[index] = []
        return taken
    }

    /// Each of `views`' rows for the folded states, in key order, worked
    /// out on every core. A rebuild's partitions' states (`absorbedStates`)
    /// are each read by one thread, which sorts their ids and works out
    /// their rows: none of that waits for one core; then they are freed on
    /// a thread of their own, beside the puts, or kept for the process's
    /// exit to give back (`FoldMemory.leftToExit`). A fold of one
    /// partition is read in ranges of its ids, sorted here, and freed here.
    /// The fold holds no state afterwards (`statesHandedAway`).
    private func rowChanges(of views: [InspectionView], foldMemory: FoldMemory) -> [[RowChange]] {
        precondition(!statesHandedAway, "a rebuild asked a fold for its rows twice")
        statesHandedAway = true
        let parts = ([states] + absorbedStates).filter { !$0.isEmpty }
        states = [:]
        absorbedStates = []
        guard parts.count > 1 else {
            let whole = parts.first ?? [:]
            let ids = whole.keys.sorted { $0.bytesPrecede($1) }
            let ranges = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8, ids.count / 1_000))
            let found = RowChanges(parts: ranges)
            DispatchQueue.concurrentPerform(iterations: ranges) { range in
                found.keep(
                    Self.rowChanges(
                        of: views, ids[ids.count * range / ranges..<ids.count * (range + 1) / ranges], in: whole),
                    as: range)
            }
            return found.inOrder(views: views.count)
        }
        let count = parts.count
        let handed = HandedStates(consume parts)
        let found = RowChanges(parts: count)
        DispatchQueue.concurrentPerform(iterations: count) { part in
            let states = handed.part(part)
            let ids = states.keys.sorted { $0.bytesPrecede($1) }
            found.keep(Self.rowChanges(of: views, ids[...], in: states), as: part)
        }
        if foldMemory == .leftToExit {
            KeptUntilExit.keep(handed)
            return found.mergedByKey(views: views.count)
        }
        // Freed on a thread of its own while the rows are put: freeing them
        // here held both cores for a fiftieth of a rebuild, with the puts
        // waiting on one core and the other then idle.
        do {
            try DetachedThread.start(named: "jqc free states") { handed.free() }
        } catch {
            handed.free()  // no thread to spare: freed here, as before
        }
        return found.mergedByKey(views: views.count)
    }

    /// `views`' rows for the states of `ids` (in this order), sealed.
    private static func rowChanges(
        of views: [InspectionView], _ ids: ArraySlice<UUID>, in states: [UUID: InspectionState]
    ) -> [[RowChange]] {
        var changes = [[RowChange]](repeating: [], count: views.count)
        for id in ids {
            guard let state = states[id] else { continue }
            add(views, of: state, to: &changes)
        }
        return changes
    }

    /// Appends `views`' rows for `state` to `changes`, sealed.
    private static func add(_ views: [InspectionView], of state: InspectionState, to changes: inout [[RowChange]]) {
        for (i, view) in views.enumerated() {
            let start = changes[i].endIndex
            view.rowChanges(of: state, into: &changes[i])
            for j in start..<changes[i].endIndex { changes[i][j].seal() }
        }
    }
}

/// The partitions' states of a rebuild's fold, read by the threads that
/// work out their rows and then freed all at once (`free`).
final class HandedStates: Sendable {
    private let parts: Mutex<[[UUID: InspectionState]]>

    init(_ parts: consuming [[UUID: InspectionState]]) { self.parts = Mutex(parts) }

    func part(_ part: Int) -> [UUID: InspectionState] {
        parts.withLock { parts in
            precondition(part < parts.count, "the states of partition \(part) were read after they were freed")
            return parts[part]
        }
    }

    /// Lets go of every state, on the calling thread (unless a reader
    /// still holds its part).
    func free() { parts.withLock { $0 = [] } }
}

/// One row a view writes or removes.
enum RowChange: Sendable {
    case put(ViewTable, [UInt8], [UInt8])
    /// A put whose value is already sealed with its checksum.
    case putSealed(ViewTable, [UInt8], [UInt8])
    case delete(ViewTable, [UInt8])

    func apply(to rows: ProjectionContext) throws {
        switch self {
        case .put(let table, let key, let value): try rows.put(table, key, value)
        case .putSealed(let table, let key, let sealed): try rows.put(table, key, sealed: sealed)
        case .delete(let table, let key): try rows.delete(table, key)
        }
    }

    /// A put sealed with its checksum (`ViewRowChecksum`), so that the
    /// thread that writes it only writes it.
    mutating func seal() {
        if case .put(let table, let key, let value) = self {
            self = .putSealed(table, key, ViewRowChecksum.seal(table: table.name, key: key, value: value))
        }
    }

    var key: [UInt8] {
        switch self {
        case .put(_, let key, _), .putSealed(_, let key, _), .delete(_, let key): key
        }
    }

    /// Two lists of rows as one, by key, each list's own order kept.
    static func merged(_ a: [RowChange], _ b: [RowChange]) -> [RowChange] {
        guard !a.isEmpty else { return b }
        guard !b.isEmpty else { return a }
        var out: [RowChange] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if b[j].key.lexicographicallyPrecedes(a[i].key) {
                out.append(b[j])
                j += 1
            } else {
                out.append(a[i])
                i += 1
            }
        }
        out += a[i...]
        out += b[j...]
        return out
    }
}

/// The parts of a rebuild's rows, each worked out on its own thread and
/// kept here once, under the lock.
final class RowChanges: Sendable {
    /// By part, then by view.
    private let parts: Mutex<[[[RowChange]]]>

    init(parts: Int) { self.parts = Mutex(Array(repeating: [], count: parts)) }

    func keep(_ changes: [[RowChange]], as part: Int) { parts.withLock { $0[part] = changes } }

    /// Each view's rows, its parts joined in the parts' order (parts that
    /// are ranges of one sorted list of ids).
    func inOrder(views: Int) -> [[RowChange]] {
        parts.withLock { parts in (0..<views).map { view in Array(parts.map { $0[view] }.joined()) } }
    }

    /// Each view's rows, its parts (each in key order, of other
    /// inspections) merged by key, so that the puts stay in key order.
    /// Rows of one part keep their order (a delete before a put of the
    /// same inspection stays before it).
    func mergedByKey(views: Int) -> [[RowChange]] {
        parts.withLock { parts in
            (0..<views).map { view in
                parts.map { $0[view] }.reduce([]) { merged, next in RowChange.merged(merged, next) }
            }
        }
    }
}

/// The inspections one appended record changes: its own, and the parent of
/// a submitted re-inspection (whose follow-up it clears). Folded once per
/// record, whichever view asks first; its own is not folded at all when the
/// decision that produced the record left its state (`DecidedStates`).
final class TouchedInspections {
    private var cached: [InspectionState]?

    func states(for record: EventRecord, context: ProjectionContext, tables: InspectionTables) throws
        -> [InspectionState]
    {
        if let cached { return cached }
        var result: [InspectionState] = []
        let own: InspectionState?
        if let decided = DecidedStates.held(in: context.scratch)?.state(after: record.id) {
            assert(
                DecidedStates.disagreement(decided, record, context, tables) == nil,
                DecidedStates.disagreement(decided, record, context, tables) ?? "")
            own = decided
        } else {
            own = try InspectionFold.state(of: record.stream, reader: context.log, tables: tables)
        }
        if let state = own {
            result.append(state)
            if record.type == InspectionEventType.submitted.rawValue, let parentID = state.parentInspectionID,
                let parent = try InspectionFold.state(
                    of: parentID, reader: context.log, tables: tables, knownChildren: [state.id: state])
            {
                result.append(parent)
            }
        }
        cached = result
        return result
    }
}

/// The states a decision left after each of the events it produced
/// (`InspectionLedger.record(_:on:…)`), by event id, for the views of the
/// append that records them: the state after a record is then the one the
/// decision computed, not a fold of the stream read back from the log.
final class DecidedStates {
    private let states: [UUID: InspectionState]

    private init(_ states: [UUID: InspectionState]) { self.states = states }

    /// Lends `states` (one per event of `events`, in order) to the
    /// projections of the append that uses `scratch`.
    static func keep(_ states: [InspectionState], of events: [PendingEvent], in scratch: ProjectionScratch) {
        precondition(states.count == events.count, "a decision left \(states.count) states for \(events.count) events")
        var byEvent: [UUID: InspectionState] = [:]
        for (event, state) in zip(events, states) { byEvent[event.id] = state }
        _ = scratch.shared(DecidedStates.self) { DecidedStates(byEvent) }
    }

    /// The states lent to this append, if any.
    static func held(in scratch: ProjectionScratch) -> DecidedStates? {
        scratch.existing(DecidedStates.self)
    }

    /// The state after the event `id`, if the decision left it.
    func state(after id: UUID) -> InspectionState? { states[id] }

    /// Why `decided` is not the state a fold of the log gives after
    /// `record` (checked in debug builds), or nil when they agree.
    static func disagreement(
        _ decided: InspectionState, _ record: EventRecord, _ context: ProjectionContext, _ tables: InspectionTables
    ) -> String? {
        let folded: InspectionState?
        do {
            folded = try InspectionFold.state(of: record.stream, reader: context.log, tables: tables)
        } catch {
            return "the fold of stream \(record.stream.lowercased) after position \(record.position) failed: \(error)"
        }
        guard let folded, folded == decided else {
            return "the state a decision left after position \(record.position) is not the fold of the log's "
                + "stream \(record.stream.lowercased): decided \(decided), folded \(String(describing: folded))"
        }
        return nil
    }
}

extension InspectionState {
    /// Listed among this device's drafts: a draft it still records on (not
    /// handed away, not a read-only copy of a handover addressed to another
    /// device).
    var isDraftHere: Bool { status == .draft && !isHandedAway && readOnlyCopyOf == nil }
}
