import FoundationEssentials
import LedgerCore

/// What the server answered for one of an inspection's outbox items, as the
/// sync worker records it (`InspectionCommand.settleSync`).
public enum SyncOutcome: Hashable, Sendable {
    case photoUploaded(PhotoUploaded)
    case inspectionAccepted(InspectionAccepted)
    case issueAccepted(IssueAccepted)
    case attemptFailed(SyncAttemptFailed)
    case gaveUp(SyncGaveUp)

    /// The outcome an event records; nil for an event that records none.
    public init?(_ event: InspectionEvent) {
        switch event {
        case .photoUploaded(let uploaded): self = .photoUploaded(uploaded)
        case .inspectionAccepted(let accepted): self = .inspectionAccepted(accepted)
        case .issueAccepted(let accepted): self = .issueAccepted(accepted)
        case .syncAttemptFailed(let failed): self = .attemptFailed(failed)
        case .syncGaveUp(let gaveUp): self = .gaveUp(gaveUp)
        default: return nil
        }
    }

    /// The item the answer is about, of an inspection whose id is `inspection`.
    func item(of inspection: UUID) -> SyncItem {
        switch self {
        case .photoUploaded(let uploaded): SyncItem(kind: .photo, id: uploaded.photoID)
        case .inspectionAccepted: SyncItem(kind: .inspection, id: inspection)
        case .issueAccepted(let accepted): SyncItem(kind: .issue, id: accepted.issueID)
        case .attemptFailed(let failed): failed.item
        case .gaveUp(let gaveUp): gaveUp.item
        }
    }

    /// The one event that records it.
    var event: InspectionEvent {
        switch self {
        case .photoUploaded(let uploaded): .photoUploaded(uploaded)
        case .inspectionAccepted(let accepted): .inspectionAccepted(accepted)
        case .issueAccepted(let accepted): .issueAccepted(accepted)
        case .attemptFailed(let failed): .syncAttemptFailed(failed)
        case .gaveUp(let gaveUp): .syncGaveUp(gaveUp)
        }
    }
}

extension InspectionState {
    /// The sync commands are decided on any started inspection, a read-only
    /// or handed-away copy included: they record what happened between this
    /// device and the server, not a change to the form.
    func decideSync(_ command: InspectionCommand) throws(DomainError) -> [InspectionEvent]? {
        switch command {
        case .settleSync(let outcome):
            try requireOutboxItem(outcome.item(of: id))
            return [outcome.event]
        case .retrySync(let item):
            try requireOutboxItem(item)
            // Only what failed or is retrying is queued again; an item the
            // server took meanwhile, or still pending, needs nothing.
            switch sync.status(of: item) {
            case .failed, .retrying: return [.syncRetryRequested(SyncRetryRequested(item: item))]
            case .pending, .synced: return []
            }
        case .dismissSync(let item, let reason):
            try requireOutboxItem(item)
            let why = reason.trimmingWhiteSpace
            guard !why.isEmpty else { throw .syncItemRefused(id, item, reason: "a dismissal needs a reason") }
            guard case .failed = sync.status(of: item) else {
                throw .syncItemRefused(
                    id, item,
                    reason: "it did not fail for good (the worker still sends it); only a refused item, "
                        + "or one whose file is gone, can be dismissed")
            }
            return [.syncDismissed(SyncDismissed(item: item, reason: why))]
        default:
            return nil
        }
    }

    /// Refuses an item that is not this inspection's: the inspection itself,
    /// one of its photos or one of its issues.
    func requireOutboxItem(_ item: SyncItem) throws(DomainError) {
        guard status != .notStarted else { throw .inspectionNotStarted(id) }
        let known =
            switch item.kind {
            case .inspection: item.id == id
            case .photo: photo(id: item.id) != nil
            case .issue: issues.contains { $0.id == item.id }
            }
        guard known else { throw .syncItemRefused(id, item, reason: "the inspection has no such item") }
    }
}
