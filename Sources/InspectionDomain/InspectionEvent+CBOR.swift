import Foundation
import LedgerCore

// MARK: - Encoding

extension InspectionEvent {
    /// The payload as one deterministic CBOR map (RFC 8949 §4.2.1), the bytes
    /// the hash chain covers: equal events always encode to equal bytes.
    public func payloadCBOR() -> [UInt8] {
        switch self {
        case .fieldSet(let answer):
            // The most frequent event is written by hand, keys in
            // deterministic order ("value" < "field_id" < "field_type").
            var writer = CBORWriter(reservingCapacity: 48)
            writer.writeMapHeader(count: 3)
            writer.write(text: "value")
            answer.value.write(to: &writer)
            writer.write(text: "field_id")
            writer.write(text: answer.fieldID.rawValue)
            writer.write(text: "field_type")
            writer.write(text: answer.fieldType.rawValue)
            return writer.bytes
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
        case .started(let e):
            var pairs: [(String, CBORValue)] = [
                ("template_id", .text(e.templateID)), ("template_hash", .text(e.templateHash)),
                ("facility_id", .text(e.facilityID)), ("facility_name", .text(e.facilityName)),
                ("area_id", .optionalText(e.areaID)), ("area_name", .optionalText(e.areaName)),
                ("parent_inspection_id", .optionalText(e.parentInspectionID?.lowercased)),
                (
                    "prefilled",
                    .textMap(
                        e.prefilled.map { answer in
                            (
                                answer.fieldID.rawValue,
                                .textMap([
                                    ("field_type", .text(answer.fieldType.rawValue)), ("value", answer.value.cbor),
                                ])
                            )
                        })
                ),
            ]
            // Written only when set, so every other start keeps the bytes it always had.
            if let server = e.parentServerID { pairs.append(("parent_server_id", .text(server))) }
            return .textMap(pairs)
        case .templatePinned(let e):
            return .textMap([("template_hash", .text(e.templateHash)), ("template", e.template.canonicalCBOR)])
        case .fieldSet(let e):
            return .textMap([
                ("field_id", .text(e.fieldID.rawValue)), ("field_type", .text(e.fieldType.rawValue)),
                ("value", e.value.cbor),
            ])
        case .fieldCleared(let e):
            return .textMap([("field_id", .text(e.fieldID.rawValue))])
        case .photoCaptured(let e):
            return .textMap([
                ("photo_id", .text(e.photo.photoID.lowercased)), ("sha256", .text(e.photo.sha256.hex)),
                ("size", .integer(Int64(e.photo.size))), ("media_type", .text(e.photo.mediaType)),
                ("kind", .text(e.kind.rawValue)), ("field_id", .optionalText(e.fieldID?.rawValue)),
                ("issue_id", .optionalText(e.issueID?.lowercased)),
            ])
        case .issueFlagged(let e):
            return .textMap([
                ("issue_id", .text(e.issueID.lowercased)), ("severity", .text(e.severity.rawValue)),
                ("description", .text(e.description)), ("photo_id", .optionalText(e.photoID?.lowercased)),
            ])
        case .submitted(let e):
            return .textMap([
                ("score", e.score.map(CBORValue.double) ?? .null), ("follow_up_required", .bool(e.followUpRequired)),
            ])
        case .discarded(let e):
            return .textMap([("reason", .optionalText(e.reason))])
        case .photoUploaded(let e):
            return .textMap([("photo_id", .text(e.photoID.lowercased)), ("server_path", .text(e.serverPath))])
        case .inspectionAccepted(let e):
            return .textMap([("server_id", .text(e.serverID))])
        case .issueAccepted(let e):
            var pairs: [(String, CBORValue)] = [
                ("issue_id", .text(e.issueID.lowercased)), ("server_id", .text(e.serverID)),
            ]
            // Written only when true, so every other acceptance keeps its bytes.
            if e.sentAgainAfterLostAnswer { pairs.append(("sent_again_after_lost_answer", .bool(true))) }
            return .textMap(pairs)
        case .syncAttemptFailed(let e):
            return .textMap(
                e.item.cborPairs + [
                    ("attempt", .integer(Int64(e.attempt))), ("error", .text(e.error)),
                    ("http_status", e.httpStatus.map { .integer(Int64($0)) } ?? .null),
                    ("will_retry", .bool(e.willRetry)),
                    ("next_attempt_at", e.nextAttemptAt.map { .integer($0.microsecondsSinceEpoch) } ?? .null),
                ])
        case .syncGaveUp(let e):
            return .textMap(e.item.cborPairs + [("error", .text(e.error))])
        case .syncRetryRequested(let e):
            return .textMap(e.item.cborPairs)
        case .syncDismissed(let e):
            return .textMap(e.item.cborPairs + [("reason", .text(e.reason))])
        case .handedOver(let e):
            return e.cbor
        case .received(let e):
            return e.cbor
        case .unrecognized(let stored):
            // Stored bytes are one CBOR item; if not, show them as bytes.
            do {
                return try CBORValue(decoding: stored.payload)
            } catch {
                return .bytes(stored.payload)
            }
        }
    }
}

extension CBORValue {
    static func optionalText(_ text: String?) -> CBORValue {
        text.map(CBORValue.text) ?? .null
    }
}

extension SyncItem {
    var cborPairs: [(String, CBORValue)] {
        [("item_kind", .text(kind.rawValue)), ("item_id", .text(id.lowercased))]
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
        guard schemaVersion == known.schemaVersion else {
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
        }
        try r.finish()
        return event
    }

    /// Decodes a stored record's payload (current versions only; see `EventUpcaster`).
    public static func decode(_ record: EventRecord) throws(DomainError) -> InspectionEvent {
        try decode(type: record.type, schemaVersion: record.schemaVersion, payload: record.payload)
    }
}

extension FieldAnswer {
    enum Key: String, PayloadKey {
        case fieldID = "field_id", fieldType = "field_type", value
        static let encodedKeys = encode()
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> FieldAnswer {
        var fieldID: FieldID?
        var fieldType: FieldType?
        var valueOffset: Int?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .fieldID?: fieldID = FieldID(rawValue: try r.text())
            case .fieldType?: fieldType = try FieldType.read(from: &r)
            // Deterministic order puts "value" before "field_type", and the
            // value's meaning depends on the type: come back to it.
            case .value?: valueOffset = try r.skip()
            case nil: try r.skip()
            }
        }
        let type = try r.required(fieldType, "field_type")
        var valueReader = r.rewound(to: try r.required(valueOffset, "value"))
        let value = try FieldValue.read(from: &valueReader, type: type)
        return FieldAnswer(fieldID: try r.required(fieldID, "field_id"), fieldType: type, value: value)
    }
}

extension FieldType {
    static let encodedNames = allCases.map { Array($0.rawValue.utf8) }

    /// Reads a field type's name without making a `String` of it.
    static func read(from r: inout PayloadReader) throws(DomainError) -> FieldType {
        let start = r.reader.offset
        guard let index = try r.matchText(encodedNames) else {
            var again = r.rewound(to: start)
            throw r.malformed("unknown field type \"\(try again.text())\"")
        }
        return allCases[index]
    }
}

extension FieldCleared {
    enum Key: String, PayloadKey {
        case fieldID = "field_id"
        static let encodedKeys = encode()
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> FieldCleared {
        var fieldID: FieldID?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .fieldID?: fieldID = FieldID(rawValue: try r.text())
            case nil: try r.skip()
            }
        }
        return FieldCleared(fieldID: try r.required(fieldID, "field_id"))
    }
}

extension InspectionStarted {
    enum Key: String, PayloadKey {
        case templateID = "template_id", templateHash = "template_hash", facilityID = "facility_id"
        case facilityName = "facility_name", areaID = "area_id", areaName = "area_name"
        case parent = "parent_inspection_id", parentServerID = "parent_server_id", prefilled
        static let encodedKeys = encode()
    }

    enum PrefilledKey: String, PayloadKey {
        case fieldType = "field_type", value
        static let encodedKeys = encode()
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionStarted {
        var templateID: String?
        var templateHash: String?
        var facilityID: String?
        var facilityName: String?
        var areaID: String??
        var areaName: String??
        var parent: UUID??
        var parentServerID: String?
        var prefilled: [FieldAnswer]?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .templateID?: templateID = try r.text()
            case .templateHash?: templateHash = try r.text()
            case .facilityID?: facilityID = try r.text()
            case .facilityName?: facilityName = try r.text()
            case .areaID?: areaID = .some(try r.nullableText())
            case .areaName?: areaName = .some(try r.nullableText())
            case .parent?: parent = .some(try r.nullableUUID("parent_inspection_id"))
            case .parentServerID?: parentServerID = try r.text()
            case .prefilled?: prefilled = try readPrefilled(from: &r)
            case nil: try r.skip()
            }
        }
        return InspectionStarted(
            templateID: try r.required(templateID, "template_id"),
            templateHash: try r.required(templateHash, "template_hash"),
            facilityID: try r.required(facilityID, "facility_id"),
            facilityName: try r.required(facilityName, "facility_name"), areaID: try r.required(areaID, "area_id"),
            areaName: try r.required(areaName, "area_name"),
            parentInspectionID: try r.required(parent, "parent_inspection_id"), parentServerID: parentServerID,
            prefilled: try r.required(prefilled, "prefilled"))
    }

    /// `{field_id: {field_type, value}}`.
    static func readPrefilled(from r: inout PayloadReader) throws(DomainError) -> [FieldAnswer] {
        let count = try r.mapCount()
        var answers: [FieldAnswer] = []
        answers.reserveCapacity(count)
        for _ in 0..<count {
            let fieldID = FieldID(rawValue: try r.text())
            var fieldType: FieldType?
            var valueOffset: Int?
            for _ in 0..<(try r.mapCount()) {
                switch try r.key(PrefilledKey.self) {
                case .fieldType?: fieldType = try FieldType.read(from: &r)
                case .value?: valueOffset = try r.skip()
                case nil: try r.skip()
                }
            }
            let type = try r.required(fieldType, "prefilled.\(fieldID).field_type")
            var valueReader = r.rewound(to: try r.required(valueOffset, "prefilled.\(fieldID).value"))
            answers.append(
                FieldAnswer(
                    fieldID: fieldID, fieldType: type, value: try FieldValue.read(from: &valueReader, type: type)))
        }
        return answers
    }
}

extension InspectionSubmitted {
    enum Key: String, PayloadKey {
        case score, followUpRequired = "follow_up_required"
        static let encodedKeys = encode()
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionSubmitted {
        var score: Double??
        var followUp: Bool?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .score?: score = .some(try r.isNull() ? nil : try r.double())
            case .followUpRequired?: followUp = try r.bool()
            case nil: try r.skip()
            }
        }
        return InspectionSubmitted(
            score: try r.required(score, "score"), followUpRequired: try r.required(followUp, "follow_up_required"))
    }
}

extension TemplatePinned {
    static func read(from r: inout PayloadReader) throws(DomainError) -> TemplatePinned {
        var hash: String?
        var template: Template?
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "template_hash": hash = try r.text()
            case "template":
                let value = try r.value()
                do {
                    template = try Template(cbor: value)
                } catch {
                    throw r.malformed("the template cannot be read: \(error)")
                }
            default: try r.skip()
            }
        }
        return TemplatePinned(
            templateHash: try r.required(hash, "template_hash"), template: try r.required(template, "template"))
    }
}

extension PhotoCaptured {
    static func read(from r: inout PayloadReader) throws(DomainError) -> PhotoCaptured {
        var id: UUID?
        var digest: Digest256?
        var size: Int?
        var mediaType: String?
        var kind: PhotoKind?
        var fieldID: String??
        var issueID: UUID??
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "photo_id": id = try r.uuid("photo_id")
            case "sha256": digest = try r.digest("sha256")
            case "size": size = try r.int()
            case "media_type": mediaType = try r.text()
            case "kind":
                let name = try r.text()
                guard let parsed = PhotoKind(rawValue: name) else {
                    throw r.malformed("unknown photo kind \"\(name)\"")
                }
                kind = parsed
            case "field_id": fieldID = .some(try r.nullableText())
            case "issue_id": issueID = .some(try r.nullableUUID("issue_id"))
            default: try r.skip()
            }
        }
        let photo = PhotoReference(
            photoID: try r.required(id, "photo_id"), sha256: try r.required(digest, "sha256"),
            size: try r.required(size, "size"), mediaType: try r.required(mediaType, "media_type"))
        return PhotoCaptured(
            photo: photo, kind: try r.required(kind, "kind"),
            fieldID: try r.required(fieldID, "field_id").map(FieldID.init(rawValue:)),
            issueID: try r.required(issueID, "issue_id"))
    }
}

extension IssueFlagged {
    static func read(from r: inout PayloadReader) throws(DomainError) -> IssueFlagged {
        var issueID: UUID?
        var severity: IssueSeverity?
        var description: String?
        var photoID: UUID??
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "issue_id": issueID = try r.uuid("issue_id")
            case "severity":
                let name = try r.text()
                guard let parsed = IssueSeverity(rawValue: name) else {
                    throw r.malformed("unknown severity \"\(name)\"")
                }
                severity = parsed
            case "description": description = try r.text()
            case "photo_id": photoID = .some(try r.nullableUUID("photo_id"))
            default: try r.skip()
            }
        }
        return IssueFlagged(
            issueID: try r.required(issueID, "issue_id"), severity: try r.required(severity, "severity"),
            description: try r.required(description, "description"), photoID: try r.required(photoID, "photo_id"))
    }
}

extension InspectionDiscarded {
    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionDiscarded {
        var reason: String??
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "reason": reason = .some(try r.nullableText())
            default: try r.skip()
            }
        }
        return InspectionDiscarded(reason: try r.required(reason, "reason"))
    }
}
