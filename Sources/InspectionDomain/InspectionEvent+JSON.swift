import FoundationEssentials
import LedgerCore

// MARK: - Logical JSON shape

extension InspectionEvent {
    /// The payload as JSON, with the same keys as the CBOR payload: what an
    /// export writes and what `Schemas/events/<type>.schema.json` checks.
    /// Hashes are lower-case hex, ids lower-case UUID text, timestamps
    /// integers of microseconds, `number` values JSON numbers with the exact
    /// digits recorded. Each payload's members are written beside its CBOR,
    /// with the same `Key` enum (see `InspectionEvent+CBOR.swift`).
    public var jsonObject: JSONValue {
        switch self {
        case .started(let e): e.json
        case .templatePinned(let e): e.json
        case .fieldSet(let e): e.json
        case .fieldCleared(let e): e.json
        case .photoCaptured(let e): e.json
        case .issueFlagged(let e): e.json
        case .submitted(let e): e.json
        case .discarded(let e): e.json
        case .photoUploaded(let e): e.json
        case .inspectionAccepted(let e): e.json
        case .issueAccepted(let e): e.json
        case .syncAttemptFailed(let e): e.json
        case .syncGaveUp(let e): e.json
        case .syncRetryRequested(let e): e.json
        case .syncDismissed(let e): e.json
        case .handedOver(let e): e.json
        case .received(let e): e.json
        case .sendAdopted(let e): e.json
        case .unrecognized: JSONValue(cbor: payloadValue)
        }
    }
}

extension JSONValue {
    /// A CBOR item as JSON, for payloads of unknown types: byte strings
    /// become lower-case hex, non-text map keys their diagnostic text.
    public init(cbor: CBORValue) {
        switch cbor {
        case .unsigned(let value): self = .integer(value)
        case .negative(let n):
            // CBOR stores -1 - n; n + 1 may not fit in 64 bits, its text always does.
            self = .number("-" + (n == UInt64.max ? "18446744073709551616" : String(n + 1)))
        case .bytes(let bytes): self = .string(Hex.encode(bytes))
        case .text(let text): self = .string(text)
        case .array(let items): self = .array(items.map(JSONValue.init(cbor:)))
        case .map(let entries):
            self = .object(
                entries.map { entry in
                    .init(entry.key.textValue ?? "\(entry.key)", JSONValue(cbor: entry.value))
                })
        case .bool(let flag): self = .bool(flag)
        case .null: self = .null
        case .double(let value): self = .double(value)
        }
    }
}

// MARK: - Export

/// The exported form of a stored event: one JSON object per line, checked
/// by `Schemas/events/envelope.schema.json` and `Tools/validate-events`.
public enum EventExport {
    /// `{position, id, stream, stream_version, type, schema_version,
    /// actor {id, name, verified}, device, recorded_at, recorded_at_us,
    /// payload}`.
    ///
    /// `type`, `schema_version` and `payload` are the decoded event's, so an
    /// event stored in an old version is exported as the current version it
    /// reads as (the stored bytes stay in the log for `jqc verify`).
    public static func envelope(for record: EventRecord, event: InspectionEvent) -> JSONValue {
        .object([
            .init("position", .integer(record.position)), .init("id", .string(record.id.lowercased)),
            .init("stream", .string(record.stream.lowercased)), .init("stream_version", .integer(record.streamVersion)),
            .init("type", .string(event.typeName)), .init("schema_version", .integer(event.schemaVersion)),
            .init(
                "actor",
                .object([
                    .init("id", .string(record.actor.id)), .init("name", .string(record.actor.name)),
                    .init("verified", .bool(record.actor.verified)),
                ])),
            .init("device", .string(record.device.lowercased)),
            .init("recorded_at", .string(record.recordedAt.iso8601)),
            .init("recorded_at_us", .integer(record.recordedAt.microsecondsSinceEpoch)),
            .init("payload", event.jsonObject),
        ])
    }

    /// The envelope as one line of JSON (no trailing newline).
    public static func jsonLine(for record: EventRecord, event: InspectionEvent) -> String {
        envelope(for: record, event: event).serialized()
    }
}
