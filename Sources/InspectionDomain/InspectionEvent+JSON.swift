import Foundation
import LedgerCore

// MARK: - Logical JSON shape

extension InspectionEvent {
    /// The payload as JSON, with the same keys as the CBOR payload: what an
    /// export writes and what `Schemas/events/<type>.schema.json` checks.
    /// Hashes are lower-case hex, ids lower-case UUID text, timestamps
    /// integers of microseconds, `number` values JSON numbers with the exact
    /// digits recorded.
    public var jsonObject: JSONValue {
        switch self {
        case .started(let e):
            var members: [JSONValue.Member] = [
                .init("template_id", .string(e.templateID)), .init("template_hash", .string(e.templateHash)),
                .init("facility_id", .string(e.facilityID)), .init("facility_name", .string(e.facilityName)),
                .init("area_id", .optional(e.areaID)), .init("area_name", .optional(e.areaName)),
                .init("parent_inspection_id", .optional(e.parentInspectionID?.lowercased)),
            ]
            if let server = e.parentServerID { members.append(.init("parent_server_id", .string(server))) }
            return .object(
                members + [
                    .init(
                        "prefilled",
                        .object(
                            e.prefilled.map { answer in
                                .init(
                                    answer.fieldID.rawValue,
                                    .object([
                                        .init("field_type", .string(answer.fieldType.rawValue)),
                                        .init("value", answer.value.jsonValue),
                                    ]))
                            }))
                ])
        case .templatePinned(let e):
            return .object([.init("template_hash", .string(e.templateHash)), .init("template", e.template.jsonValue)])
        case .fieldSet(let e):
            return .object([
                .init("field_id", .string(e.fieldID.rawValue)), .init("field_type", .string(e.fieldType.rawValue)),
                .init("value", e.value.jsonValue),
            ])
        case .fieldCleared(let e):
            return .object([.init("field_id", .string(e.fieldID.rawValue))])
        case .photoCaptured(let e):
            return .object([
                .init("photo_id", .string(e.photo.photoID.lowercased)), .init("sha256", .string(e.photo.sha256.hex)),
                .init("size", .integer(e.photo.size)), .init("media_type", .string(e.photo.mediaType)),
                .init("kind", .string(e.kind.rawValue)), .init("field_id", .optional(e.fieldID?.rawValue)),
                .init("issue_id", .optional(e.issueID?.lowercased)),
            ])
        case .issueFlagged(let e):
            return .object([
                .init("issue_id", .string(e.issueID.lowercased)), .init("severity", .string(e.severity.rawValue)),
                .init("description", .string(e.description)), .init("photo_id", .optional(e.photoID?.lowercased)),
            ])
        case .submitted(let e):
            return .object([
                .init("score", e.score.map(JSONValue.double) ?? .null),
                .init("follow_up_required", .bool(e.followUpRequired)),
            ])
        case .discarded(let e):
            return .object([.init("reason", .optional(e.reason))])
        case .photoUploaded(let e):
            return .object([
                .init("photo_id", .string(e.photoID.lowercased)), .init("server_path", .string(e.serverPath)),
            ])
        case .inspectionAccepted(let e):
            return .object([.init("server_id", .string(e.serverID))])
        case .issueAccepted(let e):
            var members: [JSONValue.Member] = [
                .init("issue_id", .string(e.issueID.lowercased)), .init("server_id", .string(e.serverID)),
            ]
            if e.sentAgainAfterLostAnswer { members.append(.init("sent_again_after_lost_answer", .bool(true))) }
            return .object(members)
        case .syncAttemptFailed(let e):
            return .object(
                e.item.jsonMembers + [
                    .init("attempt", .integer(e.attempt)), .init("error", .string(e.error)),
                    .init("http_status", e.httpStatus.map { .integer($0) } ?? .null),
                    .init("will_retry", .bool(e.willRetry)),
                    .init("next_attempt_at", e.nextAttemptAt.map { .integer($0.microsecondsSinceEpoch) } ?? .null),
                ])
        case .syncGaveUp(let e):
            return .object(e.item.jsonMembers + [.init("error", .string(e.error))])
        case .syncRetryRequested(let e):
            return .object(e.item.jsonMembers)
        case .syncDismissed(let e):
            return .object(e.item.jsonMembers + [.init("reason", .string(e.reason))])
        case .handedOver(let e):
            return e.json
        case .received(let e):
            return e.json
        case .unrecognized:
            return JSONValue(cbor: payloadValue)
        }
    }
}

extension SyncItem {
    var jsonMembers: [JSONValue.Member] {
        [.init("item_kind", .string(kind.rawValue)), .init("item_id", .string(id.lowercased))]
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
