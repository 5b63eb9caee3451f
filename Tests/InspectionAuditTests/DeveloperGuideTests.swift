import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// Follows recipes 1, 4 and 5 of `docs/developer-guide.md` where they reach the
/// auditor's side: every event type is worded, every field type goes from
/// the CLI's input to the log, the score, the schema and the audit's words.
@Suite struct DeveloperGuideTests {
    /// Events kept out of `AuditSamples.everyEvent()`: one that ends an
    /// inspection (a timeline of samples goes on after it), and the
    /// dismissal, which needs a failure for good before it (whose positions
    /// `LogFilterTests` counts; `AuditTimelineTests` adds both), and the
    /// handover and reception (a handover ends the inspection on this device).
    static let endingEvents: [InspectionEvent] = [
        .discarded(InspectionDiscarded(reason: "wrong facility")),
        .syncDismissed(SyncDismissed(item: SyncItem(kind: .photo, id: AuditSamples.issue), reason: "lost")),
        // An adoption follows another device's submit, which the samples do not carry.
        .sendAdopted(InspectionSendAdopted(submittedOnDevice: AuditSamples.issue, submitEvent: AuditSamples.issue)),
        // A handover ends the inspection on this device; a reception starts it on another.
        .handedOver(InspectionHandedOver(mode: .handover, to: "Ben")),
        .received(
            InspectionReceived(
                fromDevice: AuditSamples.photo(9).photoID, mode: .handover, checkpoint: "", publicKey: "",
                keyRecord: CarriedRecord(position: 1, record: [], inclusion: []),
                templateRecord: CarriedRecord(position: 2, record: [], inclusion: []), records: [],
                fileSHA256: SHA256Hasher().digest([9]))),
    ]

    @Test func everyEventTypeIsWordedForAuditors() {
        // Recipe 1 step 8: a sample of every type in AuditSamples.everyEvent().
        let samples = AuditSamples.everyEvent().map(\.0) + Self.endingEvents
        let types = Set(samples.compactMap(\.eventType))
        for type in InspectionEventType.allCases {
            #expect(types.contains(type), "recipe 1 step 8: add a \(type.rawValue) to AuditSamples.everyEvent()")
        }
        // Step 6: worded, not shown as an unknown type.
        for event in samples {
            let text = EventWording.describe(event, stream: AuditSamples.inspection, template: AuditSamples.template)
            #expect(!text.isEmpty)
            #expect(!text.contains(event.typeName), "recipe 1 step 6: \(event.typeName) has no wording: \(text)")
        }
    }

    /// Recipe 5 step 4: `jqc log` words every event of a device's own stream
    /// (stored, the fold keeps it as `unrecognized`), never as an unknown type.
    @Test(arguments: DeviceStreamEventType.allCases)
    func everyDeviceStreamEventTypeIsWordedForAuditors(_ type: DeviceStreamEventType) {
        let readable = DeviceStreamWordingTests.cases.map(\.0).filter { event in
            guard case .unrecognized(let stored) = event else { return false }
            return stored.type == type.rawValue && DeviceStreamEvent(stored) != nil
        }
        #expect(!readable.isEmpty, "recipe 5 step 5: add a \(type.rawValue) to DeviceStreamWordingTests.cases")
        for event in readable {
            let text = EventWording.describe(event, stream: DeviceStreamWordingTests.device, template: nil)
            #expect(!text.isEmpty)
            #expect(!text.contains(type.rawValue), "recipe 5 step 4: \(type.rawValue) has no wording: \(text)")
        }
    }

    /// Recipe 4 step 9: what `jqc set` is given for each field type (photo
    /// types are captured with `jqc photo`/`jqc sign`, display types hold nothing).
    static let sampleInputs: [FieldType: String] = [
        .text: "Ana Ruiz", .email: "ana@example.com", .textarea: "Stall 3\nout of order", .number: "12.50",
        .date: "2026-11-02", .checkbox: "yes", .checkboxGroup: "Lobby, Desks", .radio: "Good", .select: "Day",
        .rating: "4", .passFail: "pass", .table: "Towels,4;Soap,1",
    ]

    static let commonSchema = Products.repositoryFile("Schemas/events/common.schema.json")

    @Test(arguments: FieldType.allCases)
    func everyFieldTypeWorksEndToEnd(_ type: FieldType) throws {
        // Step 4: the schemas name it, and give its value a shape.
        let schema = try String(contentsOfFile: Self.commonSchema, encoding: .utf8)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(schema.utf8)) as? [String: Any])
        let defs = try #require(object["$defs"] as? [String: Any])
        let names = (defs["field_type"] as? [String: Any])?["enum"] as? [String] ?? []
        #expect(names.contains(type.rawValue), "recipe 4 step 4: add \(type.rawValue) to field_type")
        let byType = try JSONSerialization.data(withJSONObject: defs["value_by_type"] ?? [:])
        if !type.isDisplayOnly {
            #expect(
                String(decoding: byType, as: UTF8.self).contains("\"\(type.rawValue)\""),
                "recipe 4 step 4: give \(type.rawValue) a value shape under value_by_type")
        }

        let field = TemplateField(
            id: "1", type: type, label: "Sample",
            options: type.offersOptions ? ["Good", "Day", "Lobby", "Desks"] : nil,
            columns: type == .table ? ["Item", "Count"] : nil)
        let value: FieldValue
        switch type {
        case .section, .label:
            #expect(throws: DomainError.self) { try FieldValue.parse("x", for: field) }
            return
        case .signature, .image:
            #expect(throws: DomainError.self) { try FieldValue.parse("x", for: field) }
            value = .photo(AuditSamples.photo(1))
        default:
            // Step 5: the CLI takes it.
            let input = try #require(
                Self.sampleInputs[type], "recipe 4 step 9: add a sample input for \(type.rawValue)")
            value = try FieldValue.parse(input, for: field)
        }
        // Step 2: it is stored and read back as it was.
        #expect(try FieldValue(cbor: value.cbor, for: field) == value, "recipe 4 step 2: \(type.rawValue) CBOR")
        let event = InspectionEvent.fieldSet(FieldAnswer(fieldID: field.id, fieldType: type, value: value))
        #expect(
            try InspectionEvent.decode(
                type: event.typeName, schemaVersion: event.schemaVersion, payload: event.payloadCBOR())
                == event)
        // Step 3: it scores exactly when the domain says it does.
        let template = Template(id: "1", name: "Sample", version: 1, fields: [field])
        let score = Score.compute(template: template, values: [field.id: value])
        #expect((score != nil) == type.isScoreable, "recipe 4 step 3: score of \(type.rawValue)")
        // Step 6: worded for auditors.
        let words = EventWording.describe(event, stream: AuditSamples.inspection, template: template)
        #expect(words.hasPrefix("set Sample (1) = "), "recipe 4 step 6: \(words)")
        #expect(EventWording.valueText(value) != "(unanswered)")
    }
}
