import Foundation
import InspectionDomain
import LedgerCore
import Testing

/// `EventExport.appendJSONLine` (what `jqc --json log` writes) gives the
/// bytes of `jsonLine`, the envelope serialized as a `JSONValue`.
@Suite struct EventExportBytesTests {
    /// Person-written text that JSON escapes, or passes on as it is.
    static let hostileTexts = [
        "plain", "", "quote \" and backslash \\", "line\nbreak\r\ttab", "esc \u{1B}[8m nul \u{0}", "del \u{7F}",
        "é, 漢字, 🧯", "bidi \u{202E}override", "c1 \u{85}", "csi \u{9B}2J", "nbsp\u{A0}", "mark \u{61C}\u{200F}",
        "isolate \u{2066}x\u{2069} \u{2028}\u{2029} \u{2027}\u{202F}",
    ]

    static func record(_ event: InspectionEvent, _ n: Int, actor: Actor = Samples.actor) -> EventRecord {
        let pending = event.pending(
            stream: Samples.uuid(1), actor: actor, device: Samples.uuid(3), recordedAt: Samples.time(n))
        return EventRecord(position: UInt64(n + 1), streamVersion: UInt64(n + 7), event: pending)
    }

    static func bytes(_ record: EventRecord, _ event: InspectionEvent) -> String {
        var out: [UInt8] = Array("x".utf8)
        EventExport.appendJSONLine(for: record, event: event, to: &out)
        return String(decoding: out.dropFirst(), as: UTF8.self)
    }

    @Test func everyEventIsTheSameBytes() throws {
        for (n, event) in try InspectionEventTests.everyEvent().enumerated() {
            let record = Self.record(event, n)
            #expect(Self.bytes(record, event) == EventExport.jsonLine(for: record, event: event), "\(event.typeName)")
        }
    }

    @Test(arguments: hostileTexts)
    func hostileTextIsEscapedTheSameWay(text: String) {
        let event = InspectionEvent.issueFlagged(
            IssueFlagged(issueID: Samples.uuid(50), severity: .high, description: text))
        for verified in [true, false] {
            let record = Self.record(event, 3, actor: Actor(id: "id " + text, name: text, verified: verified))
            #expect(Self.bytes(record, event) == EventExport.jsonLine(for: record, event: event))
        }
    }

    /// The payloads written member by member (answers, photos, issues)
    /// with person-written text in every string they hold.
    @Test(arguments: hostileTexts)
    func hostileTextInAPayloadIsEscapedTheSameWay(text: String) {
        let events: [InspectionEvent] = [
            .fieldSet(FieldAnswer(fieldID: FieldID(rawValue: text), fieldType: .textarea, value: .text(text))),
            .fieldSet(FieldAnswer(fieldID: "8", fieldType: .radio, value: .option(text))),
            .fieldSet(FieldAnswer(fieldID: "8", fieldType: .checkboxGroup, value: .options([text, "b"]))),
            .fieldSet(FieldAnswer(fieldID: "9", fieldType: .table, value: .table([[text], []]))),
            .fieldCleared(FieldCleared(fieldID: FieldID(rawValue: text))),
            .photoCaptured(PhotoCaptured(photo: Samples.photo(2), kind: .photo, fieldID: FieldID(rawValue: text))),
            .issueFlagged(
                IssueFlagged(issueID: Samples.uuid(5), severity: .low, description: text, photoID: Samples.uuid(6))),
        ]
        for (n, event) in events.enumerated() {
            let record = Self.record(event, n)
            #expect(Self.bytes(record, event) == EventExport.jsonLine(for: record, event: event), "\(event)")
        }
    }

    /// One `SharedParts` through a listing whose type, actor and device
    /// change from line to line, or stay: each line is still `jsonLine`'s.
    @Test func sharedPartsFollowEveryChange() throws {
        let actors = [
            Samples.actor, Actor(id: "local:x", name: "x \"y\"\n", verified: false), Samples.actor,
            Actor(id: Samples.actor.id, name: Samples.actor.name, verified: false),
        ]
        let unknown = InspectionEvent.unrecognized(
            StoredPayload(type: "inspection.field_set", schemaVersion: 9, payload: [0xA0]))
        let events = try InspectionEventTests.everyEvent()
        var parts = EventExport.SharedParts()
        var out: [UInt8] = []
        for (n, event) in (events + [unknown] + events.reversed()).enumerated() {
            let pending = event.pending(
                stream: Samples.uuid(1), actor: actors[n / 3 % actors.count],
                device: n % 5 == 0 ? Samples.uuid(4) : Samples.uuid(3), recordedAt: Samples.time(n))
            let record = EventRecord(position: UInt64(n + 1), streamVersion: UInt64(n + 7), event: pending)
            out.removeAll()
            EventExport.appendJSONLine(for: record, event: event, sharing: &parts, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == EventExport.jsonLine(for: record, event: event), "\(n)")
        }
    }

    @Test func anUnrecognizedEventIsTheSameBytes() {
        let stored = InspectionEvent.unrecognized(
            StoredPayload(type: "future.thing\u{1}", schemaVersion: 3, payload: [0xA1, 0x61, 0x61, 0x20]))
        let record = Self.record(stored, 5)
        #expect(Self.bytes(record, stored) == EventExport.jsonLine(for: record, event: stored))
    }
}
