import Foundation
import InspectionDomain
import LedgerCore
import Testing

@Suite struct InspectionEventTests {
    /// One event of every type, with every kind of field value inside
    /// `inspection.field_set`, and optional keys both present and absent.
    static func everyEvent() throws -> [InspectionEvent] {
        let office = try Samples.office()
        let item = SyncItem(kind: .photo, id: Samples.photo(1).photoID)
        var events: [InspectionEvent] = [
            .templatePinned(TemplatePinned(template: office)),
            .started(
                InspectionStarted(
                    templateID: "22", templateHash: office.contentHash, facilityID: "3", facilityName: "Harbor Tower")),
            .started(
                InspectionStarted(
                    templateID: "22", templateHash: office.contentHash, facilityID: "3", facilityName: "Harbor Tower",
                    areaID: "12", areaName: "Level 2", parentInspectionID: Samples.uuid(9),
                    prefilled: [
                        FieldAnswer(field: Samples.field(office, "12"), value: .table([["Soap", "4", "no"]])),
                        FieldAnswer(field: Samples.field(office, "2"), value: .text("Ann Lee")),
                        FieldAnswer(
                            field: Samples.field(office, "5"), value: .number(try ExactDecimal(parsing: "12.5"))),
                    ])),
            .fieldCleared(FieldCleared(fieldID: "8")),
            .photoCaptured(PhotoCaptured(photo: Samples.photo(1), kind: .photo, fieldID: "10")),
            .photoCaptured(PhotoCaptured(photo: Samples.photo(2), kind: .signature, fieldID: "14")),
            .photoCaptured(PhotoCaptured(photo: Samples.photo(3), kind: .photo, issueID: Samples.uuid(50))),
            .photoCaptured(PhotoCaptured(photo: Samples.photo(4), kind: .photo)),
            .issueFlagged(IssueFlagged(issueID: Samples.uuid(50), severity: .high, description: "Leak under sink")),
            .issueFlagged(
                IssueFlagged(
                    issueID: Samples.uuid(51), severity: .critical, description: "Exposed wiring",
                    photoID: Samples.photo(3).photoID)),
            .submitted(InspectionSubmitted(score: 83.33, followUpRequired: true)),
            .submitted(InspectionSubmitted(score: nil, followUpRequired: false)),
            .submitted(InspectionSubmitted(score: 100, followUpRequired: false)),
            .discarded(InspectionDiscarded(reason: "Started at the wrong facility")),
            .discarded(InspectionDiscarded()),
            .photoUploaded(
                PhotoUploaded(
                    photoID: Samples.photo(1).photoID, serverPath: "/uploads/\(Samples.photo(1).sha256.hex).jpg")),
            .inspectionAccepted(InspectionAccepted(serverID: "481")),
            .issueAccepted(IssueAccepted(issueID: Samples.uuid(50), serverID: "77")),
            // Sent again after a lost answer, to a server that may now hold it twice.
            .issueAccepted(IssueAccepted(issueID: Samples.uuid(51), serverID: "78", sentAgainAfterLostAnswer: true)),
            .syncAttemptFailed(
                SyncAttemptFailed(
                    item: item, attempt: 2, error: "HTTP 503: server busy", httpStatus: 503, willRetry: true,
                    nextAttemptAt: Samples.time(60))),
            .syncAttemptFailed(
                SyncAttemptFailed(
                    item: SyncItem(kind: .inspection, id: Samples.uuid(1)), attempt: 5, error: "timed out",
                    willRetry: false)),
            .syncGaveUp(
                SyncGaveUp(item: SyncItem(kind: .issue, id: Samples.uuid(50)), error: "parent inspection failed")),
            .syncRetryRequested(SyncRetryRequested(item: item)),
            .syncDismissed(SyncDismissed(item: item, reason: "the photo was of the wrong room")),
            .handedOver(InspectionHandedOver(mode: .handover, to: "Dana's tablet")),
            .handedOver(InspectionHandedOver(mode: .share, to: nil)),
            .handedOver(
                InspectionHandedOver(
                    mode: .handover, to: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
                    toDevice: UUID(uuidString: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"))),
            .received(Samples.received()),
            .sendAdopted(InspectionSendAdopted(submittedOnDevice: Samples.uuid(60), submitEvent: Samples.uuid(61))),
        ]
        for (field, value) in try FieldValueTests.everyKind() {
            events.append(.fieldSet(FieldAnswer(field: field, value: value)))
        }
        return events
    }

    @Test func coversEveryType() throws {
        let types = Set(try Self.everyEvent().compactMap(\.eventType))
        #expect(types == Set(InspectionEventType.allCases))
    }

    @Test func everyEventRoundTripsThroughCBOR() throws {
        for event in try Self.everyEvent() {
            let payload = event.payloadCBOR()
            let decoded = try InspectionEvent.decode(
                type: event.typeName, schemaVersion: event.schemaVersion, payload: payload)
            #expect(decoded == event, "\(event.typeName)")
        }
    }

    @Test func payloadsAreDeterministicCBOR() throws {
        for event in try Self.everyEvent() {
            let payload = event.payloadCBOR()
            // Re-encoding sorts map keys as RFC 8949 §4.2.1 requires: equal
            // bytes mean the hand-ordered writers got the order right.
            #expect(try CBORValue(decoding: payload).encoded() == payload, "\(event.typeName)")
            #expect(event.payloadValue.encoded() == payload, "\(event.typeName)")
        }
    }

    @Test func versionsAndNamesAreStable() {
        #expect(InspectionEventType.fieldSet.schemaVersion == 2)
        #expect(InspectionEventType.received.schemaVersion == 3)
        #expect(InspectionEventType.handedOver.schemaVersion == 2)
        #expect(
            InspectionEventType.allCases.filter { ![.fieldSet, .received, .handedOver].contains($0) }.allSatisfy {
                $0.schemaVersion == 1
            })
        #expect(
            InspectionEventType.allCases.map(\.rawValue) == [
                "inspection.started", "template.pinned", "inspection.field_set", "inspection.field_cleared",
                "photo.captured", "issue.flagged", "inspection.submitted", "inspection.discarded",
                "sync.photo_uploaded",
                "sync.inspection_accepted", "sync.issue_accepted", "sync.attempt_failed", "sync.gave_up",
                "sync.retry_requested", "sync.dismissed", "inspection.handed_over",
                "inspection.received", "inspection.send_adopted",
            ])
    }

    @Test func fieldSetPayloadHasTheDocumentedShape() throws {
        let event = InspectionEvent.fieldSet(
            FieldAnswer(fieldID: "5", fieldType: .number, value: .number(try ExactDecimal(parsing: "12.50"))))
        let expected = CBORValue.textMap([
            ("field_id", .text("5")), ("field_type", .text("number")), ("value", .text("12.5")),
        ])
        #expect(event.payloadCBOR() == expected.encoded())
        #expect(
            Hex.encode(event.payloadCBOR())
                == "a3" + "6576616c7565" + "6431322e35" + "686669656c645f6964" + "6135" + "6a6669656c645f74797065"
                + "666e756d626572")
    }

    @Test func submittedScoreIsAFloat() throws {
        let payload = InspectionEvent.submitted(InspectionSubmitted(score: 87.5, followUpRequired: false)).payloadCBOR()
        #expect(try CBORValue(decoding: payload)["score"] == .double(87.5))
    }

    @Test func pendingEventsCarryTypeVersionAndPayload() throws {
        let event = InspectionEvent.fieldCleared(FieldCleared(fieldID: "3"))
        let pending = event.pending(
            stream: Samples.uuid(1), actor: Samples.actor, device: Samples.uuid(2), recordedAt: Samples.time(1))
        #expect(pending.type == "inspection.field_cleared")
        #expect(pending.schemaVersion == 1)
        let record = EventRecord(position: 1, streamVersion: 1, event: pending)
        #expect(try InspectionEvent.decode(EventRecord(decoding: record.encoded())) == event)
    }

    // MARK: - Versions and unknown types

    @Test func anUnknownTypeIsKeptAsItIs() throws {
        let payload = CBORValue.textMap([("note", .text("hi"))]).encoded()
        let event = try InspectionEvent.decode(type: "test.noted", schemaVersion: 3, payload: payload)
        #expect(event == .unrecognized(StoredPayload(type: "test.noted", schemaVersion: 3, payload: payload)))
        #expect(event.typeName == "test.noted")
        #expect(event.schemaVersion == 3)
        #expect(event.payloadCBOR() == payload)
        #expect(event.jsonObject == .object(["note": .string("hi")]))
    }

    @Test func aNewerVersionAsksForAnUpgrade() {
        #expect(throws: DomainError.unsupportedSchemaVersion(type: "inspection.submitted", schemaVersion: 2, newest: 1))
        {
            try InspectionEvent.decode(type: "inspection.submitted", schemaVersion: 2, payload: [0xA0])
        }
    }

    @Test func anOlderVersionNeedsTheUpcaster() {
        #expect(throws: DomainError.upcastRequired(type: "inspection.field_set", schemaVersion: 1)) {
            try InspectionEvent.decode(type: "inspection.field_set", schemaVersion: 1, payload: [0xA0])
        }
    }

    // MARK: - Malformed payloads

    static let malformed: [(String, CBORValue, String)] = [
        ("inspection.field_cleared", .textMap([]), "the key \"field_id\" is missing"),
        ("inspection.field_cleared", .textMap([("field_id", .unsigned(3))]), "expected a CBOR text string"),
        (
            "inspection.field_set",
            .textMap([("field_id", .text("2")), ("field_type", .text("slider")), ("value", .text("x"))]),
            "unknown field type \"slider\""
        ),
        (
            "inspection.field_set",
            .textMap([("field_id", .text("2")), ("field_type", .text("rating")), ("value", .text("4"))]),
            "expected a CBOR integer"
        ),
        (
            "inspection.field_set",
            .textMap([("field_id", .text("2")), ("field_type", .text("date")), ("value", .text("2026-02-30"))]),
            "not a calendar date"
        ),
        (
            "inspection.field_set",
            .textMap([("field_id", .text("1")), ("field_type", .text("section")), ("value", .text(""))]),
            "never holds a value"
        ),
        ("inspection.submitted", .textMap([("score", .null)]), "the key \"follow_up_required\" is missing"),
        (
            "issue.flagged",
            .textMap([
                ("issue_id", .text("not-a-uuid")), ("severity", .text("low")), ("description", .text("x")),
                ("photo_id", .null),
            ]), "not a UUID"
        ),
        (
            "issue.flagged",
            .textMap([
                ("issue_id", .text(Samples.uuid(1).lowercased)), ("severity", .text("urgent")),
                ("description", .text("x")), ("photo_id", .null),
            ]), "unknown severity"
        ),
        (
            "sync.gave_up",
            .textMap([
                ("item_kind", .text("facility")), ("item_id", .text(Samples.uuid(1).lowercased)), ("error", .text("x")),
            ]), "unknown item kind"
        ),
        ("inspection.discarded", .array([]), "expected a CBOR map"),
    ]

    @Test(arguments: malformed)
    func refusesMalformedPayloads(type: String, payload: CBORValue, reason: String) {
        let version = InspectionEventType(rawValue: type)!.schemaVersion
        let error = #expect(throws: DomainError.self) {
            try InspectionEvent.decode(type: type, schemaVersion: version, payload: payload.encoded())
        }
        guard case .malformedPayload(let named, _, let why)? = error else {
            Issue.record("expected malformedPayload, got \(String(describing: error))")
            return
        }
        #expect(named == type)
        #expect(why.contains(reason), "\(why)")
    }

    @Test func refusesTrailingBytes() {
        let payload = InspectionEvent.fieldCleared(FieldCleared(fieldID: "1")).payloadCBOR() + [0x00]
        #expect(throws: DomainError.self) {
            try InspectionEvent.decode(type: "inspection.field_cleared", schemaVersion: 1, payload: payload)
        }
    }

    @Test func ignoresKeysItDoesNotKnow() throws {
        let payload = CBORValue.textMap([("field_id", .text("4")), ("hint", .array([.null]))]).encoded()
        #expect(
            try InspectionEvent.decode(type: "inspection.field_cleared", schemaVersion: 1, payload: payload)
                == .fieldCleared(FieldCleared(fieldID: "4")))
    }

    // MARK: - JSON

    @Test func jsonObjectsUseThePayloadKeys() throws {
        for event in try Self.everyEvent() {
            guard case .object(let members) = event.jsonObject, case .map(let entries) = event.payloadValue else {
                Issue.record("\(event.typeName) is not an object")
                continue
            }
            #expect(Set(members.map(\.key)) == Set(entries.compactMap(\.key.textValue)), "\(event.typeName)")
        }
    }

    @Test func exportEnvelopeNamesTheRecord() throws {
        let event = InspectionEvent.fieldCleared(FieldCleared(fieldID: "3"))
        let record = EventRecord(
            position: 42, streamVersion: 7,
            event: event.pending(
                stream: Samples.uuid(1), actor: Samples.actor, device: Samples.uuid(2), recordedAt: Samples.time(0)))
        let envelope = EventExport.envelope(for: record, event: event)
        #expect(envelope["position"] == .integer(42))
        #expect(envelope["stream_version"] == .integer(7))
        #expect(envelope["recorded_at"] == .string("2026-11-18T11:06:40.123456Z"))
        #expect(envelope["recorded_at_us"] == .integer(1_795_000_000_123_456))
        #expect(envelope["actor"]?["verified"] == .bool(true))
        #expect(envelope["payload"] == .object(["field_id": .string("3")]))
    }
}
