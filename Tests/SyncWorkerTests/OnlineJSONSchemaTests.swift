import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// The `--json` outputs that need a server (`login`, `whoami`, `pull`,
/// `sync` with its progress lines, `sync retry`, `history`, `logout`), each
/// checked against its definition in `Schemas/cli/jqc-json.schema.json` by
/// `Tools/validate-json`, against the development server. The offline
/// outputs are `JSONOutputSchemaTests` in `JQCCommandsTests`.
@Suite struct OnlineJSONSchemaTests {
    func expectValid(
        _ definition: String, _ arguments: [String], input: Data? = nil, _ sample: SampleLedger,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ProcessResult {
        let result = try sample.jqc.run(["--json"] + arguments, input: input)
        try #require(result.status == 0, "jqc \(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        let check = try JSONSchemaCheck.validate(definition, result.stdout)
        #expect(
            check.status == 0, "jqc --json \(arguments.joined(separator: " ")): \(check.stderr)",
            sourceLocation: sourceLocation)
        return result
    }

    @Test func everyOnlineJSONOutputMatchesItsSchema() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        _ = try expectValid(
            "login", ["login", "-u", "inspector", "--password-stdin"], input: Data("inspector-pass\n".utf8), sample)
        _ = try expectValid("whoami", ["whoami"], sample)
        _ = try expectValid("whoami", ["whoami", "--check"], sample)
        _ = try expectValid("pull", ["pull"], sample)

        // An outage of the inspections route: the sync reports the
        // inspection as retrying (stalled), the outbox says what waits.
        let id = try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        try server.faults(
            .object(["fault_rate": .integer(1), "fault_paths": .array([.string("/api/v1/inspections")])]))
        let stalled = try expectValid("sync", ["sync", "--progress", "json"], sample)
        #expect(try JSONValue(parsing: stalled.stdout)["retrying"]?.arrayValue?.isEmpty == false)
        let progress = try JSONSchemaCheck.validate("sync_progress", stalled.stderr, lines: true)
        #expect(progress.status == 0, "sync --progress json: \(progress.stderr)")
        _ = try expectValid("outbox", ["outbox"], sample)
        _ = try expectValid("show", ["show", id.lowercased], sample)
        _ = try expectValid("inspections", ["inspections"], sample)
        let retry = try expectValid("sync_retry", ["sync", "retry", String(id.lowercased.prefix(8))], sample)
        #expect(try JSONValue(parsing: retry.stdout).arrayValue?.isEmpty == false)

        try server.resetFaults()
        let recovered = try expectValid("sync", ["sync"], sample)
        #expect(try JSONValue(parsing: recovered.stdout)["sent_total"]?.integerValue ?? 0 > 0)
        _ = try expectValid("history", ["history"], sample)
        _ = try expectValid("logout", ["logout"], sample)
    }
}
