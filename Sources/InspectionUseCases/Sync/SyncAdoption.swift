import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore

/// `jqc sync adopt ID`: this device becomes the sender of a submission
/// recorded on another device that cannot send it (wiped or lost before it
/// synced). One `inspection.send_adopted`, decided on the inspection's state
/// (`InspectionCommand.adoptSending`: refused when it is not submitted, was
/// submitted here, is reported sent, or this device or one it heard from
/// adopted it already) and recorded through `InspectionLedger.record`; the
/// submission then joins this device's outbox, and the sync looks it up on
/// the server before sending it, so a submitter that sent it after all
/// leaves one record (`docs/domain.md` § Sharing and merging).
public enum SyncAdoption {
    /// What an adoption recorded, and what this device now sends.
    public struct Adopted: Sendable {
        public var state: InspectionState
        public var adoption: SendAdoption
        /// The inspection's items now in this device's outbox, in sending order.
        public var outbox: [OutboxItem]
    }

    /// Records that this device sends the standing submission of `inspection`.
    ///
    /// - Parameter advise: turns a domain refusal into the error to report.
    public static func adopt(
        _ inspection: UUID, in ledger: InspectionLedger, actor: Actor, device: UUID, clock: any LedgerClock,
        advise: @escaping (DomainError, InspectionState) -> any Error = { refusal, _ in refusal }
    ) throws -> Adopted {
        let (_, state) = try ledger.record(
            [.adoptSending], on: inspection, by: actor, device: device, clock: clock, advise: advise)
        guard let adoption = state.standingAdoption, adoption.device == device else {
            // The decision adopted it, so its state holds the adoption: this is a bug, never the log's doing.
            preconditionFailure("an adoption recorded on \(inspection.lowercased) is not the standing one")
        }
        let outbox = try ledger.outbox().filter { $0.inspectionID == inspection }
        return Adopted(state: state, adoption: adoption, outbox: outbox)
    }
}
