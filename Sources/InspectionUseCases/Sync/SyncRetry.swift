import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc sync retry ID`: the failed, stalled or retrying items of one outbox
/// item or of one inspection (any unique prefix of either id) queued again,
/// one `sync.retry_requested` each in its inspection's stream, so attempts
/// count from zero. A photo whose record already went to the server without
/// it is not queued again: an upload now would be a file nothing there
/// points to.
public enum SyncRetry {
    /// Why nothing was queued again: what failed, why, and what to do.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case noSuchItem(String)
        case ambiguous(String, [String])
        case onlyLeftOut(String)
        case nothingToRetry(String, states: [String])
        /// adopt (#30 item 3): the inspection is another device's to send.
        case submittedElsewhere(UnreportedSubmission)

        public var description: String {
            switch self {
            case .noSuchItem(let reference):
                "no outbox item or inspection matches '\(reference)'. 'jqc outbox' lists what is waiting; synced "
                    + "items need no retry."
            case .ambiguous(let reference, let candidates):
                "'\(reference)' matches \(candidates.count) outbox item or inspections: "
                    + "\(candidates.prefix(5).joined(separator: ", "))\(candidates.count > 5 ? ", …" : ""). "
                    + "Type more of the id."
            case .onlyLeftOut(let reference):
                "Nothing was queued again for '\(reference)'."
            case .submittedElsewhere(let copy):
                "inspection \(copy.inspectionID.lowercased) is not in this device's outbox: \(copy.note). "
                    + "Nothing was queued."
            case .nothingToRetry(let reference, let states):
                "Nothing to retry for '\(reference)': its items are \(states.joined(separator: ", ")), not failed, "
                    + "stalled or retrying. Pending items are sent by 'jqc sync' on their own."
            }
        }
    }

    /// What a retry would queue: the items queued again, and the photos
    /// left out because their record went without them.
    public struct Selection: Equatable, Sendable {
        public var queued: [OutboxItem]
        public var leftOut: [OutboxItem]
    }

    /// The items `reference` names that a retry queues again (none is
    /// recorded); refused when it names nothing, several things, or
    /// nothing that can be retried.
    public static func select(_ reference: String, in ledger: InspectionLedger) throws -> Selection {
        guard let prefix = IDPrefix(reference) else { throw LookupError.notAnID(reference) }
        let outbox = try ledger.outbox()
        let byItem = outbox.filter { prefix.matches($0.item.id) }
        let byInspection = outbox.filter { prefix.matches($0.inspectionID) }
        let inspections = Set(byInspection.map(\.inspectionID))
        // An inspection's own item has the inspection's id, so the two sets overlap.
        let candidates = inspections.union(byItem.map(\.item.id))
        guard let only = candidates.first else {
            // adopt (#30 item 3): a copy another device is expected to send says so.
            let elsewhere = try ledger.unreportedSubmissions().filter { prefix.matches($0.inspectionID) }
            if elsewhere.count == 1 { throw Refusal.submittedElsewhere(elsewhere[0]) }
            throw Refusal.noSuchItem(reference)
        }
        guard candidates.count == 1 else {
            throw Refusal.ambiguous(reference, candidates.map(\.lowercased).sorted())
        }
        let rows = inspections.contains(only) ? byInspection : byItem
        var selection = Selection(queued: [], leftOut: [])
        for row in rows where [.failed, .stalled, .retrying].contains(row.state) {
            if row.item.kind == .photo, let state = try ledger.state(of: row.inspectionID),
                let photo = state.photo(id: row.item.id),
                case .synced = state.sync.status(of: state.owner(ofPhoto: photo))
            {
                selection.leftOut.append(row)
            } else {
                selection.queued.append(row)
            }
        }
        if selection.queued.isEmpty, selection.leftOut.isEmpty {
            throw Refusal.nothingToRetry(reference, states: Set(rows.map(\.state.rawValue)).sorted())
        }
        return selection
    }

    /// Records a `sync.retry_requested` for each item of `selection` to
    /// queue: the command `retrySync` decided on each inspection's state and
    /// recorded through `InspectionLedger.record` (expected version, decided
    /// again on a lost race), one transaction per inspection.
    public static func queue(
        _ selection: Selection, in ledger: InspectionLedger, actor: Actor, device: UUID, at now: Timestamp
    ) throws {
        var order: [UUID] = []
        var byInspection: [UUID: [InspectionCommand]] = [:]
        for row in selection.queued {
            if byInspection[row.inspectionID] == nil { order.append(row.inspectionID) }
            byInspection[row.inspectionID, default: []].append(.retrySync(row.item))
        }
        for inspection in order {
            try ledger.record(
                byInspection[inspection] ?? [], on: inspection, by: actor, device: device, clock: RecordedAt(now))
        }
    }
}
