import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// Follows recipes 1, 2 and 5 of `docs/developer-guide.md` over every event
/// type (an inspection's and a device stream's) and every old event version:
/// a step skipped for a new one fails here, naming the step.
@Suite struct DeveloperGuideTests {
    static let events = Products.repositoryFile("Schemas/events")

    static func schema(_ file: String) throws -> [String: Any]? {
        let path = events + "/" + file
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: path)))
            as? [String: Any]
    }

    @Test(arguments: InspectionEventType.allCases)
    func everyEventTypeHasEveryPiece(_ type: InspectionEventType) throws {
        // Step 4: its schema, naming the version this code writes.
        let schema = try Self.schema("\(type.rawValue).schema.json")
        #expect(schema != nil, "recipe 1 step 4: write Schemas/events/\(type.rawValue).schema.json")
        #expect(
            schema?["x-schema-version"] as? Int == type.schemaVersion,
            "recipe 1 step 4 / recipe 2 step 1: x-schema-version of \(type.rawValue) is not \(type.schemaVersion)")
        #expect(schema?["$id"] is String, "recipe 1 step 4: \(type.rawValue).schema.json has no $id")
        // Step 8: a sample, which round-trips through its CBOR (step 2).
        let samples = try InspectionEventTests.everyEvent().filter { $0.eventType == type }
        #expect(!samples.isEmpty, "recipe 1 step 8: add a \(type.rawValue) to InspectionEventTests.everyEvent()")
        for sample in samples {
            let decoded = try InspectionEvent.decode(
                type: sample.typeName, schemaVersion: sample.schemaVersion, payload: sample.payloadCBOR())
            #expect(decoded == sample, "recipe 1 step 2: \(type.rawValue) does not read back as written")
        }
    }

    @Test(arguments: DeviceStreamEventType.allCases)
    func everyDeviceStreamEventTypeHasEveryPiece(_ type: DeviceStreamEventType) throws {
        // Step 3: its schema, naming the version this code writes, and what it is in the README.
        let schema = try Self.schema("\(type.rawValue).schema.json")
        #expect(schema != nil, "recipe 5 step 3: write Schemas/events/\(type.rawValue).schema.json")
        #expect(
            schema?["x-schema-version"] as? Int == type.schemaVersion,
            "recipe 5 step 3: x-schema-version of \(type.rawValue) is not \(type.schemaVersion)")
        let readme = try String(contentsOfFile: Self.events + "/README.md", encoding: .utf8)
        #expect(readme.contains("`\(type.rawValue)`"), "recipe 5 step 3: say what \(type.rawValue) is in the README")
        // Step 1: a name of its own, never an inspection event's too.
        #expect(InspectionEventType.named(type.rawValue) == nil, "recipe 5 step 1: \(type.rawValue) is both")
        // Step 5: a sample, which reads back as written (step 2); the bytes
        // and schema of each are checked by DeviceStreamEventTests.
        let samples = DeviceStreamEventTests.everyEvent().map(\.0).filter { $0.eventType == type }
        #expect(!samples.isEmpty, "recipe 5 step 5: add a \(type.rawValue) to DeviceStreamEventTests.everyEvent()")
        for sample in samples {
            let decoded = try DeviceStreamEvent.decode(
                type: type.rawValue, schemaVersion: type.schemaVersion, payload: sample.payloadCBOR())
            #expect(decoded == sample, "recipe 5 step 2: \(type.rawValue) does not read back as written")
        }
    }

    /// Every `<type>.v<N>.schema.json` kept in `Schemas/events`.
    static func oldVersions() throws -> [(type: String, version: Int)] {
        try FileManager.default.contentsOfDirectory(atPath: events).sorted().compactMap { file in
            guard file.hasSuffix(".schema.json") else { return nil }
            let stem = file.dropLast(".schema.json".count)
            guard let dot = stem.range(of: ".v", options: .backwards), let version = Int(stem[dot.upperBound...])
            else { return nil }
            return (String(stem[..<dot.lowerBound]), version)
        }
    }

    @Test func everyOldVersionIsKeptAndUpcast() throws {
        let old = try Self.oldVersions()
        #expect(!old.isEmpty, "Schemas/events keeps no old version: the test would check nothing")
        let readme = try String(contentsOfFile: Self.events + "/README.md", encoding: .utf8)
        let template = try Samples.restroom()
        for (typeName, version) in old {
            let type = try #require(InspectionEventType(rawValue: typeName), "\(typeName) is not an event type")
            #expect(
                version < type.schemaVersion, "recipe 2 step 2: \(typeName) v\(version) is not older than the code's")
            let inPlace = EventUpcaster.readsInPlace(type, version)
            #expect(inPlace != EventUpcaster.needsUpcast(type: typeName, schemaVersion: version))
            #expect(
                readme.contains("`\(typeName)` | \(type.schemaVersion)"), "recipe 2 step 5: README row for \(typeName)")
            // Step 4: a fixture of stored payloads, each read as the current version (step 3).
            let name = typeName.split(separator: ".").last.map(String.init) ?? typeName
            let url = try Samples.fixtureURL("\(name)-v\(version).cbor")
            guard case .array(let items) = try CBORValue(decoding: Array(try Data(contentsOf: url))) else {
                Issue.record("recipe 2 step 4: \(url.lastPathComponent) is not a CBOR array of payloads")
                continue
            }
            #expect(!items.isEmpty)
            for item in items {
                guard case .bytes(let payload) = item else {
                    Issue.record("recipe 2 step 4: an item of \(url.lastPathComponent) is not a byte string")
                    continue
                }
                if inPlace {
                    // Read as it stands, as the current version's event.
                    let event = try InspectionEvent.decode(type: typeName, schemaVersion: version, payload: payload)
                    #expect(event.schemaVersion == type.schemaVersion, "recipe 2 step 3: \(typeName) v\(version)")
                    continue
                }
                let upcast = try EventUpcaster.upcast(
                    type: typeName, schemaVersion: version, payload: payload, template: template)
                let current = try #require(InspectionEventType(rawValue: upcast.type))
                #expect(upcast.schemaVersion == current.schemaVersion, "recipe 2 step 3: \(typeName) v\(version)")
                _ = try InspectionEvent.decode(
                    type: upcast.type, schemaVersion: upcast.schemaVersion, payload: upcast.payload)
            }
        }
    }
}
