import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// The bytes `jqc --json log` writes for an event (`appendJSONLine`), read
/// back by another JSON parser (Foundation's), are the recorded envelope
/// and the event's payload as `jsonObject` has it: for every type of event,
/// and for hostile text in every string an actor or a person wrote.
@Suite struct EventExportRoundTripTests {
    static func readBack(_ record: EventRecord, _ event: InspectionEvent) throws -> [String: Any] {
        var out: [UInt8] = []
        EventExport.appendJSONLine(for: record, event: event, to: &out)
        return try #require(try JSONSerialization.jsonObject(with: Data(out)) as? [String: Any])
    }

    @Test func everyEventReadsBackAsRecorded() throws {
        for (n, event) in try InspectionEventTests.everyEvent().enumerated() {
            let record = EventExportBytesTests.record(event, n)
            let read = try Self.readBack(record, event)
            #expect(read["position"] as? Int == Int(record.position))
            #expect(read["id"] as? String == record.id.lowercased)
            #expect(read["stream"] as? String == record.stream.lowercased)
            #expect(read["stream_version"] as? Int == Int(record.streamVersion))
            #expect(read["type"] as? String == event.typeName)
            #expect(read["schema_version"] as? Int == event.schemaVersion)
            #expect(read["device"] as? String == record.device.lowercased)
            #expect(read["recorded_at"] as? String == record.recordedAt.iso8601)
            #expect(read["recorded_at_us"] as? Int == Int(record.recordedAt.microsecondsSinceEpoch))
            let payload = try #require(read["payload"])
            #expect(event.jsonObject.isFoundationReading(payload), "\(event.typeName): \(payload)")
        }
    }

    @Test(arguments: EventExportBytesTests.hostileTexts)
    func hostileTextReadsBackExactly(text: String) throws {
        let events: [InspectionEvent] = [
            .fieldSet(FieldAnswer(fieldID: FieldID(rawValue: text), fieldType: .textarea, value: .text(text))),
            .fieldSet(FieldAnswer(fieldID: "8", fieldType: .checkboxGroup, value: .options([text, "b"]))),
            .fieldSet(FieldAnswer(fieldID: "9", fieldType: .table, value: .table([[text], []]))),
            .fieldCleared(FieldCleared(fieldID: FieldID(rawValue: text))),
            .issueFlagged(IssueFlagged(issueID: Samples.uuid(5), severity: .low, description: text)),
            .discarded(InspectionDiscarded(reason: text)),
        ]
        for (n, event) in events.enumerated() {
            let actor = Actor(id: "local:" + text, name: text, verified: n % 2 == 0)
            let record = EventExportBytesTests.record(event, n, actor: actor)
            let read = try Self.readBack(record, event)
            let readActor = try #require(read["actor"] as? [String: Any])
            #expect(readActor["id"] as? String == actor.id)
            #expect(readActor["name"] as? String == text)
            #expect(readActor["verified"] as? Bool == actor.verified)
            let payload = try #require(read["payload"])
            #expect(event.jsonObject.isFoundationReading(payload), "\(event.typeName): \(payload)")
        }
    }
}
