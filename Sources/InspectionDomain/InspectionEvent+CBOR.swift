import FoundationEssentials
import LedgerCore

// Each payload's keys, encoder, JSON form and decoder live with its family:
// `InspectionEvent+Inspecting.swift` (start, template, answers, submit,
// discard), `InspectionEvent+Evidence.swift` (photos and issues),
// `InspectionEvent+SyncOutcomes.swift` (what the sync worker recorded) and
// `InspectionHandover.swift` (handover and reception),
// `InspectionEvent+Adoption.swift` (a submission's sender adopted). Each payload spells its
// keys once, in its `Key` enum.

// MARK: - Encoding

extension InspectionEvent {
    /// The payload as one deterministic CBOR map (RFC 8949 §4.2.1), the bytes
    /// the hash chain covers: equal events always encode to equal bytes.
    public func payloadCBOR() -> [UInt8] {
        switch self {
        case .fieldSet(let answer):
            return answer.payloadCBOR()
        case .unrecognized(let stored):
            return stored.payload
        default:
            return payloadValue.encoded()
        }
    }

    /// The payload as a CBOR tree (for every type; `payloadCBOR()` is the
    /// fast path that writes the frequent ones directly).
    public var payloadValue: CBORValue {
        switch self {
        case .started(let e): e.cbor
        case .templatePinned(let e): e.cbor
        case .fieldSet(let e): e.cbor
        case .fieldCleared(let e): e.cbor
        case .photoCaptured(let e): e.cbor
        case .issueFlagged(let e): e.cbor
        case .submitted(let e): e.cbor
        case .discarded(let e): e.cbor
        case .photoUploaded(let e): e.cbor
        case .inspectionAccepted(let e): e.cbor
        case .issueAccepted(let e): e.cbor
        case .syncAttemptFailed(let e): e.cbor
        case .syncGaveUp(let e): e.cbor
        case .syncRetryRequested(let e): e.cbor
        case .syncDismissed(let e): e.cbor
        case .handedOver(let e): e.cbor
        case .received(let e): e.cbor
        case .sendAdopted(let e): e.cbor
        case .unrecognized(let stored):
            // Stored bytes are one CBOR item; if not, show them as bytes.
            Self.storedValue(stored.payload)
        }
    }

    private static func storedValue(_ payload: [UInt8]) -> CBORValue {
        do {
            return try CBORValue(decoding: payload)
        } catch {
            return .bytes(payload)
        }
    }
}

extension CBORValue {
    static func optionalText(_ text: String?) -> CBORValue {
        text.map(CBORValue.text) ?? .null
    }
}

// MARK: - Keys

extension InspectionEventType {
    /// The keys of this type's payload map, in its `Key` enum's order: the
    /// switch is exhaustive, so no type is added without one (a test compares
    /// each set with what the type's encoder writes).
    var payloadKeys: [String] {
        switch self {
        case .started: InspectionStarted.Key.names
        case .templatePinned: TemplatePinned.Key.names
        case .fieldSet: FieldAnswer.Key.names
        case .fieldCleared: FieldCleared.Key.names
        case .photoCaptured: PhotoCaptured.Key.names
        case .issueFlagged: IssueFlagged.Key.names
        case .submitted: InspectionSubmitted.Key.names
        case .discarded: InspectionDiscarded.Key.names
        case .photoUploaded: PhotoUploaded.Key.names
        case .inspectionAccepted: InspectionAccepted.Key.names
        case .issueAccepted: IssueAccepted.Key.names
        case .syncAttemptFailed: SyncAttemptFailed.Key.names
        case .syncGaveUp: SyncGaveUp.Key.names
        case .syncRetryRequested: SyncRetryRequested.Key.names
        case .syncDismissed: SyncDismissed.Key.names
        case .handedOver: InspectionHandedOver.Key.names
        case .received: InspectionReceived.Key.names
        case .sendAdopted: InspectionSendAdopted.Key.names
        }
    }
}

// MARK: - Decoding

extension InspectionEvent {
    /// Decodes a payload of the current schema version of its type.
    ///
    /// Reads with `CBORReader` in place, without a `CBORValue` tree, because a
    /// rebuild replays every event of the log; the frequent types (field_set,
    /// field_cleared, started, submitted) also match their keys as bytes.
    /// About 2 million payloads a second on one core (release build, mostly
    /// field_set). A type this program does not
    /// know becomes `.unrecognized` (ignored by `apply`); a newer version of a
    /// known type is refused; an older one must go through
    /// `EventUpcaster.decode`, which has the template it may need.
    public static func decode(type: String, schemaVersion: Int, payload: [UInt8]) throws(DomainError)
        -> InspectionEvent
    {
        guard let known = InspectionEventType.named(type) else {
            return .unrecognized(StoredPayload(type: type, schemaVersion: schemaVersion, payload: payload))
        }
        guard schemaVersion == known.schemaVersion || EventUpcaster.readsInPlace(known, schemaVersion) else {
            if schemaVersion > known.schemaVersion || schemaVersion < 1 {
                throw .unsupportedSchemaVersion(type: type, schemaVersion: schemaVersion, newest: known.schemaVersion)
            }
            throw .upcastRequired(type: type, schemaVersion: schemaVersion)
        }
        var r = PayloadReader(payload, type: type, schemaVersion: schemaVersion)
        let event: InspectionEvent
        switch known {
        case .fieldSet: event = .fieldSet(try FieldAnswer.read(from: &r))
        case .fieldCleared: event = .fieldCleared(try FieldCleared.read(from: &r))
        case .started: event = .started(try InspectionStarted.read(from: &r))
        case .submitted: event = .submitted(try InspectionSubmitted.read(from: &r))
        case .templatePinned: event = .templatePinned(try TemplatePinned.read(from: &r))
        case .photoCaptured: event = .photoCaptured(try PhotoCaptured.read(from: &r))
        case .issueFlagged: event = .issueFlagged(try IssueFlagged.read(from: &r))
        case .discarded: event = .discarded(try InspectionDiscarded.read(from: &r))
        case .photoUploaded: event = .photoUploaded(try PhotoUploaded.read(from: &r))
        case .inspectionAccepted: event = .inspectionAccepted(try InspectionAccepted.read(from: &r))
        case .issueAccepted: event = .issueAccepted(try IssueAccepted.read(from: &r))
        case .syncAttemptFailed: event = .syncAttemptFailed(try SyncAttemptFailed.read(from: &r))
        case .syncGaveUp: event = .syncGaveUp(try SyncGaveUp.read(from: &r))
        case .syncRetryRequested: event = .syncRetryRequested(try SyncRetryRequested.read(from: &r))
        case .syncDismissed: event = .syncDismissed(try SyncDismissed.read(from: &r))
        case .handedOver: event = .handedOver(try InspectionHandedOver.read(from: &r))
        case .received: event = .received(try InspectionReceived.read(from: &r))
        case .sendAdopted: event = .sendAdopted(try InspectionSendAdopted.read(from: &r))
        }
        try r.finish()
        return event
    }

    /// Decodes a stored record's payload (current versions only; see `EventUpcaster`).
    public static func decode(_ record: EventRecord) throws(DomainError) -> InspectionEvent {
        try decode(type: record.type, schemaVersion: record.schemaVersion, payload: record.payload)
    }
}
