import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// `jqc config` through the built `jqc`: its wording, the offline actor
/// from the config and `JQC_ACTOR` (a login still wins, `--as` before both),
/// and `init --witness`.
@Suite struct ConfigCommandTests {
    let directory = TemporaryDirectory(prefix: "config-command")
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        try #require(try jqc("init").status == 0)
        try #require(try jqc("pull", "--from", SampleReference.path).status == 0)
    }

    /// (arguments, status, stdout, stderr fragment): each line as the user sees it.
    static let wording: [([String], Int32, String, String)] = [
        (["config", "list"], 0, "server  (none)\nwitness (none)\nactor   (none)\n", ""),
        (
            ["config", "set", "server", "https://jqc.example/api/v1"], 0, "server set to https://jqc.example/api/v1.\n",
            ""
        ),
        (
            ["config", "set", "witness", "https://w.example/api/v1"], 1, "",
            "a witness is configured with its cosigner key now: run 'jqc witness add https://w.example/api/v1 "
                + "--key VKEY'"
        ),
        (["config", "set", "witness-quorum", "2"], 1, "", "witness-quorum must be a whole number from 1"),
        (["config", "set", "witness-quorum", "1"], 0, "witness-quorum: 0 of 0 configured witnesses\n", ""),
        (["config", "unset", "actor"], 0, "actor was not set; nothing was changed.\n", ""),
        (
            ["config", "get", "witness"], 1, "",
            "witness is not set (the legacy witness URL of earlier versions; C2SP witnesses are in 'jqc witness "
                + "list'). Add a C2SP witness with 'jqc witness add URL --key VKEY'."
        ),
        (
            ["config", "set", "server", "jqc.example"], 1, "",
            "server 'jqc.example' is not an http:// or https:// URL; nothing was changed."
        ),
        (["config", "get", "colour"], 1, "", "there is no setting 'colour'; nothing was changed."),
        (["config", "set", "actor"], 2, "", "VALUE"),
    ]

    @Test(arguments: wording.indices)
    func eachAnswerIsWorded(index: Int) throws {
        let (arguments, status, stdout, stderr) = Self.wording[index]
        let result = try jqc.run(arguments)
        #expect(result.status == status, "\(result.stderr)")
        if !stdout.isEmpty { #expect(result.stdout == stdout) }
        if !stderr.isEmpty { #expect(result.stderr.contains(stderr), "\(result.stderr)") }
    }

    /// A legacy `witness_url` (from `init --witness`) is read and unset as before; it is never set anew.
    @Test func getAndUnsetALegacyWitness() throws {
        let legacy = JQCRunner(ledger: directory.appending("legacy"))
        #expect(try legacy("init", "--witness", "https://w.example/api/v1").status == 0)
        let jqc = legacy
        let got = try jqc("config", "get", "witness")
        #expect(got.status == 0)
        #expect(got.stdout == "https://w.example/api/v1\n")
        let unset = try jqc("config", "unset", "witness")
        #expect(
            unset.stdout
                == "witness unset (was https://w.example/api/v1).\n"
                + "Syncs no longer send checkpoints to a witness; the history is not witnessed.\n")
        #expect(try jqc("config", "get", "witness").status == 1)
    }

    @Test func initTakesAWitness() throws {
        let other = JQCRunner(ledger: directory.appending("other"))
        let made = try other("--json", "init", "--witness", "https://w.example/api/v1")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try JSONValue(parsing: made.stdout)["witness_url"]?.stringValue == "https://w.example/api/v1")
        #expect(try other("config", "get", "witness").stdout == "https://w.example/api/v1\n")
        let refused = try JQCRunner(ledger: directory.appending("third")).reportingKinds(
            "init", "--witness", "w.example")
        #expect(refused.status == 2)
        #expect(refused.errorKind == "UsageError.invalidValue", "\(refused.stderr)")
    }

    /// Who a draft is started by, as `show --json` reports it.
    func startedBy(_ result: ProcessResult) throws -> String? {
        try #require(result.status == 0, "\(result.stderr)")
        return try JSONValue(parsing: result.stdout)["started_by"]?.stringValue
    }

    @Test func theOfflineActorComesFromAsThenTheEnvironmentThenTheConfig() throws {
        let start = ["--json", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center"]
        let none = try jqc.run(Array(start.dropFirst()))
        #expect(none.status == 1)
        #expect(none.errorKind == "JQCError.noActor", "\(none.stderr)")
        let set = try JSONValue(parsing: try jqc("--json", "config", "set", "actor", "  Casey  ").stdout)
        #expect(set["key"]?.stringValue == "actor" && set["value"]?.stringValue == "Casey", "actor set to Casey")
        #expect(try startedBy(jqc.run(start)) == "Casey")
        #expect(try startedBy(jqc.run(start, environmentOverride: ["JQC_ACTOR": "Robin"])) == "Robin")
        #expect(try startedBy(jqc.run(["--as", "Sam"] + start, environmentOverride: ["JQC_ACTOR": "Robin"])) == "Sam")
        let listed = try jqc.run(["--json", "config", "get", "actor"], environmentOverride: ["JQC_ACTOR": "Robin"])
        let actor = try JSONValue(parsing: listed.stdout)
        #expect(
            actor["value"]?.stringValue == "Robin" && actor["source"]?.stringValue == "environment",
            "actor Robin (from JQC_ACTOR): \(listed.stdout)")
        let blank = try jqc.run(start, environmentOverride: ["JQC_ACTOR": "\u{200B}"])
        #expect(blank.status == 1)
        #expect(blank.errorKind == "LedgerSettingError.invisibleName", "\(blank.stderr)")
    }
}
