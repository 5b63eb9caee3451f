import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// Exports events as `jqc --json log` prints them and checks them with
/// `Tools/validate-events` (Python and jsonschema, sharing no code with the
/// Swift encoders) against `Schemas/events/`.
@Suite struct SchemaValidationTests {
    let directory = TemporaryDirectory(prefix: "domain-schemas")

    /// Every sample event as an exported JSON line, positions from 1.
    static func exportedLines() throws -> [String] {
        var versions: [UUID: UInt64] = [:]
        return try InspectionEventTests.everyEvent().enumerated().map { index, event in
            let stream = index.isMultiple(of: 3) ? Samples.uuid(1) : Samples.uuid(2)
            versions[stream, default: 0] += 1
            let pending = event.pending(
                stream: stream, actor: Samples.actor, device: Samples.uuid(3), recordedAt: Samples.time(index))
            let record = EventRecord(position: UInt64(index + 1), streamVersion: versions[stream]!, event: pending)
            return EventExport.jsonLine(for: record, event: event)
        }
    }

    func validate(_ lines: [String]) throws -> ProcessResult {
        let file = directory.appending("events.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        return try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + [Products.repositoryFile("Tools/validate-events"), file])
    }

    @Test func everyEventTypeMatchesItsSchema() throws {
        let lines = try Self.exportedLines()
        let result = try validate(lines)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ok: \(lines.count) events valid"))
    }

    @Test func readsStandardInputToo() throws {
        let lines = try Self.exportedLines()
        let result = try ProcessRun.run(
            Products.python.executable, Products.python.arguments + [Products.repositoryFile("Tools/validate-events")],
            input: Data(lines.joined(separator: "\n").utf8))
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// A valid exported field_set line whose payload or envelope is then broken.
    static func brokenLine(_ change: (inout [JSONValue.Member]) -> Void, envelope: Bool = false) -> String {
        let event = InspectionEvent.fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(4)))
        let pending = event.pending(
            stream: Samples.uuid(1), actor: Samples.actor, device: Samples.uuid(3), recordedAt: Samples.time(0))
        guard
            case .object(var members) = EventExport.envelope(
                for: EventRecord(position: 1, streamVersion: 1, event: pending), event: event),
            let payloadIndex = members.firstIndex(where: { $0.key == "payload" }),
            case .object(var payload) = members[payloadIndex].value
        else { return "" }
        if envelope {
            change(&members)
        } else {
            change(&payload)
            members[payloadIndex].value = .object(payload)
        }
        return JSONValue.object(members).serialized()
    }

    static func replace(_ key: String, _ value: JSONValue) -> (inout [JSONValue.Member]) -> Void {
        { members in
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = value
            } else {
                members.append(.init(key, value))
            }
        }
    }

    static let broken: [(String, String, String)] = [
        ("a rating of 7", brokenLine(replace("value", .integer(7))), "payload value"),
        ("a rating as text", brokenLine(replace("value", .string("4"))), "payload value"),
        (
            "a field type that does not exist", brokenLine(replace("field_type", .string("slider"))),
            "payload field_type"
        ),
        ("a key the schema lacks", brokenLine(replace("note", .string("x"))), "payload"),
        ("a missing key", brokenLine({ $0.removeAll { $0.key == "field_id" } }), "'field_id' is a required property"),
        (
            "an upper-case id", brokenLine(replace("id", .string(Samples.uuid(4).uuidString)), envelope: true),
            "envelope id"
        ),
        (
            "recorded_at disagrees",
            brokenLine(replace("recorded_at", .string("2026-01-01T00:00:00.000000Z")), envelope: true),
            "is not recorded_at_us"
        ),
        (
            "an unknown type", brokenLine(replace("type", .string("inspection.renamed")), envelope: true),
            "no schema for type inspection.renamed"
        ),
        (
            "a version with no schema", brokenLine(replace("schema_version", .integer(3)), envelope: true),
            "no schema for type inspection.field_set version 3"
        ),
        ("not JSON", "{\"position\": 1,", "not JSON"),
    ]

    @Test(arguments: broken)
    func namesTheFirstBrokenEvent(name: String, line: String, message: String) throws {
        let lines = try Self.exportedLines()
        let result = try validate(lines + [line] + lines)
        #expect(result.status == 1, "\(name)")
        #expect(result.stderr.contains("line \(lines.count + 1)"), "\(name): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
    }

    @Test func theVersion1FieldSetShapeIsDocumented() throws {
        let line = Self.brokenLine(
            { members in
                members = [.init("field", .integer(2)), .init("value", .string("4"))]
            })
        let result = try validate([line.replacingOccurrences(of: "\"schema_version\":2", with: "\"schema_version\":1")])
        #expect(result.status == 0, "\(result.stderr)")
    }
}
