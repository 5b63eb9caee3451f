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

extension EventPayloadBytesTests {
    /// `inspection.received` version 1 embedded each carried record's bytes
    /// (`Fixtures/received-v1.cbor`, the sample as jqc wrote it before
    /// version 2): still read, as the version-2 sample (its records by leaf),
    /// the bytes kept as its closure, so what it carries resolves.
    @Test func theFirstVersionOfAReceptionReadsAsItsSample() throws {
        let url = try Samples.fixtureURL("received-v1.cbor")
        guard case .array(let items) = try CBORValue(decoding: Array(try Data(contentsOf: url))) else {
            throw CocoaError(.coderReadCorrupt)
        }
        #expect(items.count == 1)
        let sample = Samples.received()
        for case .bytes(let payload) in items {
            let event = try EventUpcaster.decode(
                type: InspectionEventType.received.rawValue, schemaVersion: 1, payload: payload, template: nil)
            #expect(event == .received(sample))
            guard case .received(let received) = event else { continue }
            #expect(received.records.map(\.leaf) == sample.records.map(\.leaf))
            #expect(try received.resolvedBytes() == [[0xA0], [0xA1, 0x00, 0x00]])
            // Written again it is version 2: references, no bytes.
            #expect(event.payloadCBOR() != payload)
            #expect(event.jsonObject.serialized().contains("\"leaf\":\"\(sample.records[0].leaf.hex)\""))
        }
    }
}
