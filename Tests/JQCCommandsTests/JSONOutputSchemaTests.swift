import Foundation
import LedgerTestSupport
import Testing

/// Every `--json` output of the built `jqc`, checked against its definition in
/// `Schemas/cli/jqc-json.schema.json` by `Tools/validate-json` (Python and
/// jsonschema, sharing no code with the Swift that prints it), on a ledger
/// that has a draft with an issue and a photo, a submitted inspection that
/// needs a follow-up, and its re-inspection.
@Suite struct JSONOutputSchemaTests {
    let directory = TemporaryDirectory(prefix: "cli-json")
    let jqc: JQCRunner
    var draft = ""
    var completed = ""

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try Self.require(jqc("init"))
        try Self.require(jqc("pull", "--from", SampleReference.path))
        let photo = try SampleReference.writePNG(in: directory.path, name: "leak.png", red: 10)
        completed = try start("--template", "Restroom QC", "--facility", "Riverside Medical Center")
        for (field, value) in [("Floors", "4"), ("3", "5"), ("5", "pass"), ("Notes", "Stall 3")] {
            try Self.require(jqc("--as", "Dana", "set", completed, field, value))
        }
        try Self.require(jqc("--as", "Dana", "photo", completed, "Photo of problem area", photo))
        try Self.require(jqc("--as", "Dana", "flag", completed, "--severity", "high", "--description", "Leak"))
        try Self.require(jqc("--as", "Dana", "submit", completed, "--follow-up"))
        _ = try start("--reinspect", completed)
        draft = try start("--template", "Office Area QC", "--facility", "Harbor Tower")
        try Self.require(jqc("--as", "Dana", "flag", draft, "--severity", "low", "--description", "Loose tile"))
    }

    static func require(_ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(result.status == 0, "jqc failed: \(result.stderr)", sourceLocation: sourceLocation)
    }

    func start(_ arguments: String...) throws -> String {
        let result = try jqc.run(["--as", "Dana", "--json", "start"] + arguments)
        try Self.require(result)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object?["id"] as? String)
    }

    func validate(_ definition: String, _ output: String) throws -> ProcessResult {
        try ProcessRun.run(
            "/usr/bin/env", ["python3", Products.repositoryFile("Tools/validate-json"), definition],
            input: Data(output.utf8))
    }

    /// (definition, command); `DRAFT` and `DONE` stand for the two inspections.
    static let outputs: [(String, [String])] = [
        ("show", ["show", "DRAFT"]), ("show", ["show", "DONE"]),
        ("inspections", ["inspections"]), ("inspections", ["drafts"]), ("inspections", ["followups"]),
        ("issues", ["issues"]), ("outbox", ["outbox"]), ("verify", ["verify"]), ("digest", ["digest"]),
        ("stats", ["stats"]), ("templates", ["templates"]), ("facilities", ["facilities"]),
        ("rebuild", ["rebuild"]), ("actors", ["log", "--actors"]),
        ("recorded", ["--as", "Dana", "set", "DRAFT", "Supervisor email", "lead@example.com"]),
        ("flag", ["--as", "Dana", "flag", "DRAFT", "--severity", "medium", "--description", "Door"]),
    ]

    @Test(arguments: outputs.indices)
    func everyJSONOutputMatchesItsSchema(index: Int) throws {
        let (definition, command) = Self.outputs[index]
        let arguments = command.map { $0 == "DRAFT" ? draft : $0 == "DONE" ? completed : $0 }
        let result = try jqc.run(["--json"] + arguments)
        try Self.require(result)
        let check = try validate(definition, result.stdout)
        #expect(check.status == 0, "jqc --json \(command.joined(separator: " ")): \(check.stderr)")
    }

    /// The validator is not a rubber stamp: a listing with a renamed field fails.
    @Test func aRenamedFieldFailsValidation() throws {
        let result = try jqc.run(["--json", "inspections"])
        try Self.require(result)
        let broken = result.stdout.replacingOccurrences(of: "\"template_name\"", with: "\"templateName\"")
        let check = try validate("inspections", broken)
        #expect(check.status == 1)
        #expect(check.stderr.contains("'template_name' is a required property"))
    }
}
