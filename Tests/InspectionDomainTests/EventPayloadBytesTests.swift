import Foundation
import InspectionDomain
import LedgerCore
import Testing

/// The payload bytes and JSON of every sample event, compared with the ones
/// recorded in `Fixtures/event-payloads.txt` before the payload keys were
/// spelled once per event (`Key` enums): the bytes the hash chain covers
/// never change with the code that writes them.
@Suite struct EventPayloadBytesTests {
    struct Line: Hashable, CustomStringConvertible {
        var type: String
        var cbor: String
        var json: String
        var description: String { "\(type) \(cbor) \(json)" }
    }

    static func recorded() throws -> [Line] {
        let text = try String(contentsOf: try Samples.fixtureURL("event-payloads.txt"), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            return Line(type: parts[0], cbor: parts.count > 1 ? parts[1] : "", json: parts.count > 2 ? parts[2] : "")
        }
    }

    static func encoded() throws -> [Line] {
        try InspectionEventTests.everyEvent().map { event in
            Line(type: event.typeName, cbor: Hex.encode(event.payloadCBOR()), json: event.jsonObject.serialized())
        }
    }

    @Test func everySampleEncodesToTheRecordedBytesAndJSON() throws {
        let recorded = try Self.recorded()
        let encoded = try Self.encoded()
        #expect(recorded.count == encoded.count, "a sample was added or removed: add or remove its line")
        let known = Set(recorded)
        for line in encoded where !known.contains(line) {
            Issue.record("\(line.type) encodes to bytes or JSON not recorded: \(line)")
        }
        let made = Set(encoded)
        for line in recorded where !made.contains(line) {
            Issue.record("no sample encodes to the recorded \(line.type): \(line)")
        }
        // Every type is in the table.
        #expect(Set(recorded.map(\.type)) == Set(InspectionEventType.allCases.map(\.rawValue)))
    }

    @Test func everyRecordedPayloadReadsBackAsItsSample() throws {
        let samples = try InspectionEventTests.everyEvent()
        for line in try Self.recorded() {
            let payload = try #require(Hex.decode(line.cbor), "\(line.type): not hex")
            let type = try #require(InspectionEventType.named(line.type))
            let event = try InspectionEvent.decode(type: line.type, schemaVersion: type.schemaVersion, payload: payload)
            #expect(samples.contains(event), "\(line.type) reads as no sample")
        }
    }
}
