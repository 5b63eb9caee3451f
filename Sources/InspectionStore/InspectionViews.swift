import Foundation
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore

/// The inspection views, each a projection with its own version and tables.
///
/// All of them are functions of the inspections' folded states: an append
/// folds the touched inspections once (shared through the transaction's
/// scratch) and each view rewrites its rows for them; a rebuild folds the
/// whole log once in memory and each view writes all its rows.
public final class InspectionView: Projection, @unchecked Sendable {
    /// Which view.
    public enum Kind: String, CaseIterable, Sendable {
        case templates, inspections, drafts, followups, issues, outbox
    }

    public let kind: Kind
    public var name: String { kind.rawValue }

    /// Bump a view's version when what it stores changes: it is rebuilt on open.
    public var version: Int {
        switch kind {
        case .templates, .drafts, .followups: 1
        // 2: sync states `stalled` and `synced-without-photos`, the summaries'
        // sync notes, the outbox's detail and left_out.
        case .inspections, .issues, .outbox: 2
        }
    }

    public var tableNames: [String] {
        let n = InspectionTables.names
        return switch kind {
        case .templates: [n.templates]
        case .inspections: [n.inspections, n.reinspections]
        case .drafts: [n.drafts]
        case .followups: [n.followUps]
        case .issues: [n.issues]
        case .outbox: [n.outbox]
        }
    }

    public init(_ kind: Kind) { self.kind = kind }

    /// Every view, in the order they must be applied (templates first: the
    /// others may read pinned templates).
    public static func all() -> [InspectionView] { Kind.allCases.map(InspectionView.init) }

    // MARK: - Incremental

    public func apply(_ record: EventRecord, in context: ProjectionContext) throws {
        let tables = try InspectionTables { context.table($0) }
        if kind == .templates {
            guard record.type == InspectionEventType.templatePinned.rawValue else { return }
            let event = try EventUpcaster.decode(record, template: nil)
            if case .templatePinned(let pinned) = event {
                try context.transaction.put(
                    tables.templates, Array(pinned.templateHash.utf8), pinned.template.canonicalCBOR.encoded())
            }
            return
        }
        let touched = try context.scratch.shared("touched:\(record.position)") {
            TouchedInspections()
        }.states(for: record, context: context, tables: tables)
        for state in touched {
            try write(state, context.transaction, tables)
        }
        if kind == .inspections, record.type == InspectionEventType.started.rawValue,
            let parent = touched.first?.parentInspectionID
        {
            try context.transaction.put(tables.reinspections, parent.bytes + record.stream.bytes, [])
        }
    }

    /// Rewrites this view's rows for one inspection.
    func write(_ state: InspectionState, _ txn: Transaction, _ tables: InspectionTables) throws {
        let key = state.id.bytes
        switch kind {
        case .templates:
            break
        case .inspections:
            guard state.status != .notStarted else { return }
            try txn.put(tables.inspections, key, InspectionSummary(state).cbor.encoded())
        case .drafts:
            if state.status == .draft {
                try txn.put(tables.drafts, key, [])
            } else {
                try txn.delete(tables.drafts, key)
            }
        case .followups:
            if state.status == .completed && state.followUpOutstanding {
                try txn.put(tables.followUps, key, [])
            } else {
                try txn.delete(tables.followUps, key)
            }
        case .issues:
            // A discarded draft's issues disappear from every view.
            let visible = state.status == .draft || state.status == .completed
            for issue in state.issues {
                if visible {
                    try txn.put(tables.issues, issue.id.bytes, IssueRow(issue, of: state).cbor.encoded())
                } else {
                    try txn.delete(tables.issues, issue.id.bytes)
                }
            }
        case .outbox:
            for (rowKey, row) in OutboxItem.rows(of: state) {
                if let row {
                    try txn.put(tables.outbox, rowKey, row.cbor.encoded())
                } else {
                    try txn.delete(tables.outbox, rowKey)
                }
            }
        }
    }

    // MARK: - Rebuild

    public func makeRebuilder(scratch: ProjectionScratch) -> any ProjectionRebuilder {
        Rebuilder(view: self, fold: scratch.shared("inspection-fold") { InspectionFold() })
    }

    struct Rebuilder: ProjectionRebuilder {
        let view: InspectionView
        let fold: InspectionFold

        mutating func consume(_ record: EventRecord, prepared: (any Sendable)?) throws {
            // The views share one fold: only the first to see a record folds
            // it (and pays for unboxing the decoded event).
            guard record.position > fold.lastPosition else { return }
            try fold.consume(record, decoded: prepared as? InspectionEvent)
        }

        func write(in context: ProjectionContext) throws {
            if !fold.followUpsResolved {
                fold.resolveFollowUps()
                fold.followUpsResolved = true
            }
            let tables = try InspectionTables { context.table($0) }
            let txn = context.transaction
            switch view.kind {
            case .templates:
                for (hash, template) in fold.templates.sorted(by: { $0.key < $1.key }) {
                    try txn.put(tables.templates, Array(hash.utf8), template.canonicalCBOR.encoded())
                }
            default:
                // Key order makes LMDB's inserts appends to the right page.
                for id in fold.states.keys.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
                    try view.write(fold.states[id]!, txn, tables)
                }
                if view.kind == .inspections {
                    for (parent, children) in fold.children {
                        for child in children { try txn.put(tables.reinspections, parent.bytes + child.bytes, []) }
                    }
                }
            }
        }
    }
}

/// The inspections one appended record changes: its own, and the parent of
/// a submitted re-inspection (whose follow-up it clears). Folded once per
/// record, whichever view asks first.
final class TouchedInspections {
    private var cached: [InspectionState]?

    func states(for record: EventRecord, context: ProjectionContext, tables: InspectionTables) throws
        -> [InspectionState]
    {
        if let cached { return cached }
        var result: [InspectionState] = []
        if let state = try InspectionFold.state(of: record.stream, reader: context.log, tables: tables) {
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
