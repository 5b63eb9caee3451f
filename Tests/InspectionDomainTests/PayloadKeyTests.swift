import Foundation
import LedgerCore
import Testing

@testable import InspectionDomain

/// Every event type spells its payload keys once, in a `Key` enum
/// (`InspectionEventType.payloadKeys`), and its encoders write exactly those
/// keys: the table of each type's key set against what the sample events of
/// `InspectionEventTests.everyEvent()` encode to, in CBOR and in JSON.
@Suite struct PayloadKeyTests {
    static func cborKeys(_ value: CBORValue?) -> [String] {
        guard case .map(let entries)? = value else { return [] }
        return entries.compactMap(\.key.textValue)
    }

    static func jsonKeys(_ value: JSONValue?) -> [String] {
        guard case .object(let members)? = value else { return [] }
        return members.map(\.key)
    }

    static func first(_ value: CBORValue?) -> CBORValue? {
        guard case .array(let items)? = value else { return nil }
        return items.first
    }

    /// Events writing the keys written only when set that no recorded
    /// sample writes (so `event-payloads.txt` stays as recorded).
    static func optionalKeys() throws -> [InspectionEvent] {
        let office = try Samples.office()
        return [
            .started(
                InspectionStarted(
                    templateID: "22", templateHash: office.contentHash, facilityID: "3", facilityName: "Harbor Tower",
                    parentServerID: "481"))
        ]
    }

    @Test(arguments: InspectionEventType.allCases)
    func everyTypeDeclaresTheKeysItsEncoderWrites(type: InspectionEventType) throws {
        let keys = type.payloadKeys
        #expect(!keys.isEmpty, "\(type.rawValue) declares no keys")
        #expect(Set(keys).count == keys.count, "\(type.rawValue) declares a key twice: \(keys)")
        let samples = try (InspectionEventTests.everyEvent() + Self.optionalKeys()).filter { $0.eventType == type }
        try #require(!samples.isEmpty, "no sample of \(type.rawValue)")
        var written: Set<String> = []
        for sample in samples {
            let cbor = Self.cborKeys(try CBORValue(decoding: sample.payloadCBOR()))
            #expect(Set(cbor).isSubset(of: keys), "\(type.rawValue) writes keys it does not declare: \(cbor)")
            #expect(Set(Self.jsonKeys(sample.jsonObject)) == Set(cbor), "\(type.rawValue): JSON and CBOR keys differ")
            written.formUnion(cbor)
        }
        #expect(
            written == Set(keys), "\(type.rawValue) declares keys no sample writes: \(Set(keys).subtracting(written))")
    }

    /// The maps inside a reception: each is one `Key` enum too.
    @Test func theMapsInsideAReceptionAreTheirKeyEnums() throws {
        let hash = SHA256Hasher().digest(Array("held".utf8))
        let received = Samples.received([[0xA0], [0xA0], [0xA1, 0x00, 0x00]]).continuing(from: 2, leaf: hash)
        let payload = try CBORValue(decoding: InspectionEvent.received(received).payloadCBOR())
        let json = InspectionEvent.received(received).jsonObject
        let tables: [(String, [String], [String], [String])] = [
            (
                "key_record", Self.cborKeys(payload["key_record"]), Self.jsonKeys(json["key_record"]),
                CarriedRecord.Key.names
            ),
            (
                "template_record", Self.cborKeys(payload["template_record"]), Self.jsonKeys(json["template_record"]),
                CarriedRecord.Key.names
            ),
            (
                "records[0]", Self.cborKeys(Self.first(payload["records"])),
                Self.jsonKeys(json["records"]?.arrayValue?.first), CarriedReference.Key.names
            ),
            (
                "continues", Self.cborKeys(payload["continues"]), Self.jsonKeys(json["continues"]),
                InspectionReceived.Continuation.Key.names
            ),
        ]
        for (path, cbor, jsonMembers, keys) in tables {
            #expect(Set(keys).count == keys.count, "\(path) declares a key twice: \(keys)")
            #expect(Set(cbor) == Set(keys), "\(path): CBOR \(cbor), keys \(keys)")
            #expect(Set(jsonMembers) == Set(keys), "\(path): JSON \(jsonMembers), keys \(keys)")
        }
    }

    // MARK: - The strict decoders

    static let hashBytes = CBORValue.bytes(Array(repeating: 7, count: 32))
    static let reference = CBORValue.textMap([
        ("position", .unsigned(3)), ("leaf", hashBytes), ("inclusion", .array([])),
    ])

    /// A version-3 reception payload with `changes` made to its top-level map.
    static func received(_ changes: [(String, CBORValue?)]) -> [UInt8] {
        guard case .map(let entries) = InspectionEvent.received(Samples.received()).payloadValue else { return [] }
        var members = entries.compactMap { entry in entry.key.textValue.map { ($0, entry.value) } }
        for (key, value) in changes {
            members.removeAll { $0.0 == key }
            if let value { members.append((key, value)) }
        }
        return CBORValue.textMap(members).encoded()
    }

    /// A malformed payload and what the refusal must name.
    struct Malformed: CustomTestStringConvertible, Sendable {
        var type: String
        var version: Int
        var payload: [UInt8]
        var reason: String
        init(_ type: String, _ version: Int, _ payload: [UInt8], _ reason: String) {
            (self.type, self.version, self.payload, self.reason) = (type, version, payload, reason)
        }
        var testDescription: String { "\(type) v\(version): \(reason)" }
    }

    static let malformed: [Malformed] = [
        .init("inspection.received", 3, received([("continues", nil)]), "the key \"continues\" is missing"),
        .init("inspection.received", 3, received([("key_record", nil)]), "the key \"key_record\" is missing"),
        .init("inspection.received", 3, received([("mode", .text("lend"))]), "unknown mode \"lend\""),
        .init(
            "inspection.received", 3, received([("continues", .textMap([("stream_version", .unsigned(2))]))]),
            "the key \"continues.leaf\" is missing"
        ),
        .init(
            "inspection.received", 3,
            received([("records", .array([reference, .textMap([("position", .unsigned(4)), ("leaf", hashBytes)])]))]),
            "the key \"records[1].inclusion\" is missing"
        ),
        .init(
            "inspection.received", 3, received([("records", .array([.textMap([("position", .unsigned(0))])]))]),
            "records[0].position is not a position: 0"
        ),
        .init(
            "inspection.received", 2,
            received([("records", .array([.textMap([("position", .unsigned(3)), ("leaf", .bytes([1, 2]))])]))]),
            "records[0].leaf is not a 32-byte hash: it holds 2 bytes"
        ),
        .init(
            "inspection.received", 3,
            received([("key_record", .textMap([("position", .unsigned(1)), ("record", .text("a0"))]))]),
            "key_record.record is not bytes"
        ),
        .init(
            "inspection.received", 3,
            received([
                (
                    "template_record",
                    .textMap([
                        ("position", .unsigned(2)), ("record", .bytes([0xA0])), ("inclusion", .array([.bytes([1])])),
                    ])
                )
            ]),
            "template_record.inclusion[0] is not a 32-byte hash"
        ),
        .init(
            "inspection.handed_over", 2, CBORValue.textMap([("mode", .text("share")), ("to_device", .null)]).encoded(),
            "the key \"to\" is missing"
        ),
        .init(
            "inspection.handed_over", 2,
            CBORValue.textMap([("mode", .text("share")), ("to", .null), ("to_device", .text("tablet"))]).encoded(),
            "\"to_device\" is \"tablet\", not a UUID"
        ),
    ]

    @Test(arguments: malformed)
    func theHandoverDecodersNameWhatIsWrong(_ bad: Malformed) {
        let (type, version, reason) = (bad.type, bad.version, bad.reason)
        let error = #expect(throws: DomainError.self) {
            try InspectionEvent.decode(type: type, schemaVersion: version, payload: bad.payload)
        }
        guard case .malformedPayload(let named, let read, let why)? = error else {
            Issue.record("expected malformedPayload, got \(String(describing: error))")
            return
        }
        #expect(named == type && read == version)
        #expect(why.contains(reason), "\(why)")
    }

    /// Version 2 has no `continues` (nor does version 1): it reads as
    /// starting at version 1 whatever a stray key says.
    @Test func versionTwoReadsWithoutContinues() throws {
        let payload = Self.received([("continues", nil)])
        guard
            case .received(let read) = try InspectionEvent.decode(
                type: "inspection.received", schemaVersion: 2, payload: payload)
        else {
            Issue.record("not a reception")
            return
        }
        #expect(read == Samples.received())
        #expect(read.continues == nil && read.firstVersion == 1)
    }
}
