import Foundation
import InspectionDomain
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
    var image = ""
    /// A signed checkpoint of the ledger as set up, in a file.
    var checkpoint = ""

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try Self.require(jqc("init"))
        try Self.require(jqc("pull", "--from", SampleReference.path))
        let photo = try SampleReference.writePNG(in: directory.path, name: "leak.png", red: 10)
        image = photo
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
        try Self.require(jqc("--as", "Dana", "set", draft, "Dusting", "3"))
        let signed = try jqc("checkpoint")
        try Self.require(signed)
        checkpoint = directory.appending("checkpoint.txt")
        try signed.stdout.write(toFile: checkpoint, atomically: true, encoding: .utf8)
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
        try JSONSchemaCheck.validate(definition, output, lines: definition == "log_line")
    }

    /// (definition, command): every `--json` output that needs no server (the
    /// online ones are `OnlineJSONSchemaTests` in `SyncWorkerTests`). `DRAFT`
    /// and `DONE` stand for the two inspections, `PNG` for an image, `NEW/` for a path in a fresh
    /// directory of this test's own.
    static let outputs: [(String, [String])] = [
        ("show", ["show", "DRAFT"]), ("show", ["show", "DONE"]),
        ("show", ["--as", "Dana", "start", "--template", "Restroom QC", "--facility", "Harbor Tower"]),
        ("show", ["--as", "Dana", "submit", "DRAFT"]),
        ("inspections", ["inspections"]), ("inspections", ["drafts"]), ("inspections", ["followups"]),
        ("issues", ["issues"]), ("outbox", ["outbox"]), ("verify", ["verify"]), ("digest", ["digest"]),
        ("stats", ["stats"]), ("templates", ["templates"]), ("template", ["templates", "show", "Office Area QC"]),
        ("facilities", ["facilities"]), ("pull", ["pull", "--from", SampleReference.path]),
        ("rebuild", ["rebuild"]), ("views", ["rebuild", "--dry-run"]), ("views", ["views"]),
        ("views", ["views", "--check"]), ("actors", ["log", "--actors"]), ("log_line", ["log"]),
        ("audit", ["audit", "DONE"]), ("audit", ["audit", "DRAFT", "--format", "json"]),
        ("recorded", ["--as", "Dana", "set", "DRAFT", "Supervisor email", "lead@example.com"]),
        ("recorded", ["--as", "Dana", "set", "DRAFT", "Occupants present=12.50", "Dusting=4"]),
        ("recorded", ["--as", "Dana", "clear", "DRAFT", "Dusting"]),
        ("flag", ["--as", "Dana", "flag", "DRAFT", "--severity", "medium", "--description", "Door"]),
        ("recorded", ["--as", "Dana", "sign", "DRAFT", "Inspector signature", "PNG"]),
        ("discard", ["--as", "Dana", "discard", "DRAFT"]), ("check", ["check", "--photos"]),
        ("handover", ["--as", "Dana", "handover", "DRAFT", "-o", "NEW/handover.json", "--to", "Ben"]),
        ("backup", ["backup", "NEW/backup"]), ("salvage", ["salvage", "NEW/salvage"]),
        ("init", ["--ledger", "NEW/ledger", "init"]),
        ("init", ["--ledger", "NEW/witnessed", "init", "--witness", "https://w.example/api/v1"]),
        ("config", ["config"]), ("config", ["config", "list"]), ("config_value", ["config", "get", "witness"]),
        ("config_change", ["config", "set", "actor", "Dana"]), ("config_change", ["config", "unset", "server"]),
        ("status", ["status"]),
        ("checkpoint", ["checkpoint"]), ("checkpoint_verified", ["checkpoint", "--verify", "CHECKPOINT"]),
        ("verify_checkpoint", ["verify", "--checkpoint", "CHECKPOINT"]),
        ("verify", ["verify", "--full", "--checkpoint", "CHECKPOINT"]), ("prove", ["prove", "DONE"]),
        ("pull", ["pull", "--clear"]),
    ]

    @Test(arguments: outputs.indices)
    func everyJSONOutputMatchesItsSchema(index: Int) throws {
        let (definition, command) = Self.outputs[index]
        let stands = ["DRAFT": draft, "DONE": completed, "PNG": image, "CHECKPOINT": checkpoint]
        let arguments = command.map {
            stands[$0] ?? $0.replacingOccurrences(of: "NEW/", with: directory.path + "/new-")
        }
        let result = try jqc.run(["--json"] + arguments)
        try Self.require(result)
        let check = try validate(definition, result.stdout)
        #expect(check.status == 0, "jqc --json \(command.joined(separator: " ")): \(check.stderr)")
    }

    /// Numbers are printed as recorded: a decimal answer keeps its digits,
    /// a whole number has no fraction, and a score is a JSON number.
    @Test func numbersAreExact() throws {
        try Self.require(jqc("--as", "Dana", "set", draft, "Occupants present", "12.25"))
        let shown = try jqc.run(["--json", "show", draft])
        try Self.require(shown)
        #expect(shown.stdout.contains("\"value\": 12.25"))
        let done = try jqc.run(["--json", "show", completed])
        try Self.require(done)
        let object = try JSONValue(parsing: done.stdout)
        let score = try #require(object["score"])
        guard case .number(let literal) = score else {
            Issue.record("score is \(score.kindName), not a number")
            return
        }
        #expect(Double(literal) != nil)
        #expect(object["photos"]?.arrayValue?.first?["size"]?.integerValue != nil, "a size is an integer literal")
    }

    /// Keys are sorted at every depth, so the output is stable for diffs.
    @Test func keysAreSorted() throws {
        let result = try jqc.run(["--json", "show", completed])
        try Self.require(result)
        let keys = result.stdout.split(separator: "\n").filter { $0.hasPrefix("  \"") }.map {
            String($0.dropFirst(3).prefix { $0 != "\"" })
        }
        #expect(!keys.isEmpty)
        #expect(keys == keys.sorted())
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
