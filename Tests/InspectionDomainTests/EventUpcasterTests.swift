import Foundation
import InspectionDomain
import LedgerCore
import Testing

@Suite struct EventUpcasterTests {
    /// `Fixtures/field_set-v1.cbor`: a CBOR array of six stored
    /// `inspection.field_set` version 1 payloads `{field: uint, value: text}`
    /// for template 11, written with Python's cbor2 (not this package):
    ///
    ///     a2 656669656c64 02 6576616c7565 6134          {"field": 2, "value": "4"}
    ///     … 05 … "PASS", 07 … "yes", 08 … "good", 09 … "Mop closet door sticks", 03 … ""
    static func storedV1Payloads() throws -> [[UInt8]] {
        let bytes = Array(try Data(contentsOf: try Samples.fixtureURL("field_set-v1.cbor")))
        guard case .array(let items) = try CBORValue(decoding: bytes) else {
            throw DomainError.invalidJSON(reason: "the fixture is not a CBOR array")
        }
        return items.map { item in
            guard case .bytes(let payload) = item else { return [] }
            return payload
        }
    }

    @Test func readsTheStoredVersion1FixtureAsVersion2() throws {
        let template = try Samples.restroom()
        let payloads = try Self.storedV1Payloads()
        #expect(payloads.count == 6)
        let events = try payloads.map { payload in
            try EventUpcaster.decode(
                type: "inspection.field_set", schemaVersion: 1, payload: payload, template: template)
        }
        #expect(
            events == [
                .fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(4))),
                .fieldSet(FieldAnswer(fieldID: "5", fieldType: .passFail, value: .passFail(.pass))),
                .fieldSet(FieldAnswer(fieldID: "7", fieldType: .checkbox, value: .bool(true))),
                .fieldSet(FieldAnswer(fieldID: "8", fieldType: .radio, value: .option("Good"))),
                .fieldSet(FieldAnswer(fieldID: "9", fieldType: .textarea, value: .text("Mop closet door sticks"))),
                .fieldCleared(FieldCleared(fieldID: "3")),
            ])
    }

    @Test func upcastPayloadsAreCurrentVersionBytes() throws {
        let first = try Self.storedV1Payloads()[0]
        let upcast = try EventUpcaster.upcast(
            type: "inspection.field_set", schemaVersion: 1, payload: first, template: try Samples.restroom())
        #expect(upcast.type == "inspection.field_set")
        #expect(upcast.schemaVersion == 2)
        #expect(
            upcast.payload
                == CBORValue.textMap([
                    ("field_id", .text("2")), ("field_type", .text("rating")), ("value", .unsigned(4)),
                ])
                .encoded())
    }

    @Test func replayingVersion1EventsFillsTheForm() throws {
        let template = try Samples.restroom()
        var inspection = try Inspection.started(template)
        for payload in try Self.storedV1Payloads() {
            let event = try EventUpcaster.decode(
                type: "inspection.field_set", schemaVersion: 1, payload: payload, template: inspection.state.template)
            inspection.state.apply(event, recordedAt: Samples.time(9), actor: Samples.actor)
        }
        #expect(inspection.state.values["2"] == .rating(4))
        #expect(inspection.state.values["3"] == nil)
        #expect(Score.compute(template: template, values: inspection.state.values) == 95)
    }

    @Test func currentVersionsPassStraightThrough() throws {
        let event = InspectionEvent.fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(3)))
        #expect(!EventUpcaster.needsUpcast(type: "inspection.field_set", schemaVersion: 2))
        #expect(EventUpcaster.needsUpcast(type: "inspection.field_set", schemaVersion: 1))
        #expect(!EventUpcaster.needsUpcast(type: "test.noted", schemaVersion: 1))
        #expect(
            try EventUpcaster.decode(
                type: event.typeName, schemaVersion: 2, payload: event.payloadCBOR(), template: nil) == event)
    }

    static func v1(field: UInt64, value: String) -> [UInt8] {
        CBORValue.textMap([("field", .unsigned(field)), ("value", .text(value))]).encoded()
    }

    static let failures: [(String, [UInt8], Bool, String)] = [
        ("no template", v1(field: 2, value: "4"), false, "needs the inspection's template"),
        ("field not in template", v1(field: 42, value: "4"), true, "field 42 is not in template 11 \"Restroom QC\""),
        ("value that never fit", v1(field: 2, value: "7"), true, "a rating is a whole number from 0 to 5"),
        ("photo path as text", v1(field: 10, value: "/photos/a.jpg"), true, "takes a captured file"),
    ]

    @Test(arguments: failures)
    func saysWhyAPayloadCannotBeUpcast(name: String, payload: [UInt8], withTemplate: Bool, reason: String) throws {
        let template = withTemplate ? try Samples.restroom() : nil
        let error = #expect(throws: DomainError.self, "\(name)") {
            try EventUpcaster.decode(
                type: "inspection.field_set", schemaVersion: 1, payload: payload, template: template)
        }
        guard case .upcastFailed(let type, let version, let why)? = error else {
            Issue.record("expected upcastFailed, got \(String(describing: error))")
            return
        }
        #expect(type == "inspection.field_set")
        #expect(version == 1)
        #expect(why.contains(reason), "\(why)")
    }

    @Test func aMalformedVersion1PayloadIsNamed() throws {
        let payload = CBORValue.textMap([("field", .text("2")), ("value", .text("4"))]).encoded()
        let error = #expect(throws: DomainError.self) {
            try EventUpcaster.decode(
                type: "inspection.field_set", schemaVersion: 1, payload: payload, template: try Samples.restroom())
        }
        let named = {
            if case .malformedPayload(type: "inspection.field_set", schemaVersion: 1, _)? = error {
                true
            } else {
                false
            }
        }()
        #expect(named, "\(String(describing: error))")
    }
}
