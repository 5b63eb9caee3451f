import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc sync dismiss ITEM --reason TEXT`: a person acknowledges that an
/// outbox item failed for good (`sync.gave_up`: a refusal, or a photo's file
/// gone) and will not reach the server. One `sync.dismissed` event in the
/// item's inspection stream; the item leaves the outbox, so the outbox can be
/// empty again, and `jqc log` and `jqc audit` show who dismissed it and why.
/// `jqc sync retry` queues it again.
public enum SyncDismissal {
    /// Why nothing was dismissed: what failed, why, and what to do.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case notAnID(String)
        case noSuchItem(String)
        case ambiguous(String, [String])
        case notFailedForGood(item: String, state: String)
        case noReason

        public var description: String {
            switch self {
            case .notAnID(let text):
                "'\(text)' is not an item id: ids are hexadecimal (dashes optional). 'jqc outbox' lists the items."
            case .noSuchItem(let text):
                "No outbox item has an id starting with '\(text)'. 'jqc outbox' lists what is waiting; synced or "
                    + "dismissed items are not there."
            case .ambiguous(let text, let ids):
                "'\(text)' starts the ids of several outbox items (\(ids.joined(separator: ", "))). Give more of the id."
            case .notFailedForGood(let item, let state):
                "\(item) is \(state), not failed for good: the worker still sends it by itself. Only an item the "
                    + "server refused or that failed on this device can be dismissed; 'jqc sync retry' sends a "
                    + "stalled one at once."
            case .noReason:
                "A dismissal needs a reason: give it with --reason TEXT (it is recorded, and shown in 'jqc log' and "
                    + "'jqc audit')."
            }
        }
    }

    /// The outbox item `reference` (a unique id prefix) names, if it failed for good.
    public static func item(_ reference: String, in outbox: [OutboxItem]) throws(Refusal) -> OutboxItem {
        guard let prefix = IDPrefix(reference) else { throw .notAnID(reference) }
        let matching = outbox.filter { prefix.matches($0.item.id) }
        guard let row = matching.first else { throw .noSuchItem(reference) }
        guard matching.count == 1 else {
            throw .ambiguous(reference, matching.map { "\($0.item.kind.rawValue) \($0.item.id.lowercased)" }.sorted())
        }
        guard row.state == .failed else {
            throw .notFailedForGood(
                item: "\(row.item.kind.rawValue) \(row.item.id.lowercased.prefix(8))", state: row.state.rawValue)
        }
        return row
    }

    /// Records the dismissal of `reference` with `reason`, and answers the
    /// item dismissed: the command `dismissSync` decided on the inspection's
    /// state (which holds the rule: failed for good, a reason) and recorded
    /// through `InspectionLedger.record`.
    @discardableResult
    public static func dismiss(
        _ reference: String, reason: String, in ledger: InspectionLedger, actor: () throws -> Actor, device: UUID,
        at time: Timestamp
    ) throws -> OutboxItem {
        let why = reason.trimming(.spacesAndNewlines)
        guard !why.isEmpty else { throw Refusal.noReason }
        let row = try item(reference, in: try ledger.outbox())
        try ledger.record(
            [.dismissSync(row.item, reason: why)], on: row.inspectionID, by: try actor(), device: device,
            clock: RecordedAt(time))
        return row
    }
}
