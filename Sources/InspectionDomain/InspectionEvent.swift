import FoundationEssentials
import LedgerCore

/// The stable name and current schema version of every event type the
/// inspection domain writes. A name never changes once written; a payload
/// change bumps the version and `EventUpcaster` reads the older ones.
public enum InspectionEventType: String, CaseIterable, Hashable, Sendable {
    case started = "inspection.started"
    case templatePinned = "template.pinned"
    case fieldSet = "inspection.field_set"
    case fieldCleared = "inspection.field_cleared"
    case photoCaptured = "photo.captured"
    case issueFlagged = "issue.flagged"
    case submitted = "inspection.submitted"
    case discarded = "inspection.discarded"
    case photoUploaded = "sync.photo_uploaded"
    case inspectionAccepted = "sync.inspection_accepted"
    case issueAccepted = "sync.issue_accepted"
    case syncAttemptFailed = "sync.attempt_failed"
    case syncGaveUp = "sync.gave_up"
    case syncRetryRequested = "sync.retry_requested"
    case syncDismissed = "sync.dismissed"
    case handedOver = "inspection.handed_over"
    case received = "inspection.received"
    case sendAdopted = "inspection.send_adopted"

    /// The type stored as `name`, or nil for one this program does not know.
    ///
    /// A table lookup: matching the name against every case in turn
    /// (`init(rawValue:)`) showed in the profile of a million-line `jqc log`.
    public static func named(_ name: String) -> InspectionEventType? { byName[name] }

    private static let byName: [String: InspectionEventType] = Dictionary(
        uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

    /// The version this program writes.
    public var schemaVersion: Int {
        switch self {
        // Version 1 recorded the field as an integer and every value as text;
        // version 2 records typed values (see EventUpcaster).
        case .fieldSet: 2
        // Version 1 embedded every carried record's bytes, so each reception
        // nested the ones before it; version 2 carries them by leaf hash;
        // version 3 references only the records new to the receiver.
        case .received: 3
        // Version 2 adds `to_device`, the device a plain handover is bound to.
        case .handedOver: 2
        default: 1
        }
    }
}

/// Everything that happens to an inspection, as recorded in its stream (the
/// inspection's UUID). Payloads are deterministic CBOR maps with snake_case
/// text keys; `Schemas/events/<type>.schema.json` gives each logical shape.
public enum InspectionEvent: Hashable, Sendable {
    indirect case started(InspectionStarted)
    indirect case templatePinned(TemplatePinned)
    case fieldSet(FieldAnswer)
    case fieldCleared(FieldCleared)
    indirect case photoCaptured(PhotoCaptured)
    indirect case issueFlagged(IssueFlagged)
    indirect case submitted(InspectionSubmitted)
    indirect case discarded(InspectionDiscarded)
    indirect case photoUploaded(PhotoUploaded)
    indirect case inspectionAccepted(InspectionAccepted)
    indirect case issueAccepted(IssueAccepted)
    indirect case syncAttemptFailed(SyncAttemptFailed)
    indirect case syncGaveUp(SyncGaveUp)
    indirect case syncRetryRequested(SyncRetryRequested)
    indirect case syncDismissed(SyncDismissed)
    indirect case handedOver(InspectionHandedOver)
    indirect case received(InspectionReceived)
    indirect case sendAdopted(InspectionSendAdopted)
    /// An event of a type this program does not know, kept byte for byte so
    /// it can be exported and never breaks a replay.
    indirect case unrecognized(StoredPayload)

    /// The event's type, or nil for an unrecognized one.
    public var eventType: InspectionEventType? {
        switch self {
        case .started: .started
        case .templatePinned: .templatePinned
        case .fieldSet: .fieldSet
        case .fieldCleared: .fieldCleared
        case .photoCaptured: .photoCaptured
        case .issueFlagged: .issueFlagged
        case .submitted: .submitted
        case .discarded: .discarded
        case .photoUploaded: .photoUploaded
        case .inspectionAccepted: .inspectionAccepted
        case .issueAccepted: .issueAccepted
        case .syncAttemptFailed: .syncAttemptFailed
        case .syncGaveUp: .syncGaveUp
        case .syncRetryRequested: .syncRetryRequested
        case .syncDismissed: .syncDismissed
        case .handedOver: .handedOver
        case .received: .received
        case .sendAdopted: .sendAdopted
        case .unrecognized: nil
        }
    }

    /// The stable type name, key 5 of the record (e.g. `inspection.field_set`).
    public var typeName: String {
        switch self {
        case .unrecognized(let stored): stored.type
        default: eventType?.rawValue ?? ""
        }
    }

    /// The payload's schema version, key 6 of the record.
    public var schemaVersion: Int {
        switch self {
        case .unrecognized(let stored): stored.schemaVersion
        default: eventType?.schemaVersion ?? 0
        }
    }

    /// The event ready for the log: a `PendingEvent` in `stream`.
    public func pending(
        stream: UUID, actor: Actor, device: UUID, recordedAt: Timestamp, id: UUID? = nil
    ) -> PendingEvent {
        PendingEvent(
            id: id, stream: stream, type: typeName, schemaVersion: schemaVersion, actor: actor, device: device,
            recordedAt: recordedAt, payload: payloadCBOR())
    }
}
