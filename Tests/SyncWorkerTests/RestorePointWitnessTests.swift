import CurlTransport
import Foundation
import HTTPCore
import InspectionDomain
import LedgerTestSupport
import Testing

/// A restored backup checked through C2SP witnesses (`RestorePointCheck`,
/// `byWitnesses`), through the built `jqc` against `Tools/witness` (written
/// from the specs only): what the witness cosigned of this device decides,
/// and without any witness the check is said once and confirmed by
/// `jqc restore-point clear`.
@Suite struct RestorePointWitnessTests {
    static let marker = "restore-point.json"

    /// A logged-in ledger of the reference server (no legacy witness) with
    /// `witness` configured, enrolled and cosigning once, and its backup.
    static func backedUp(_ server: DevServer, _ witness: SpecWitness) throws -> (SampleLedger, JQCRunner, String) {
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try #require(try sample.jqc("checkpoint").status == 0)
        let key = try #require(
            try JSONValue(parsing: Array(try sample.jqc("--json", "key").stdout.utf8))["in_force"]?.stringValue)
        try witness.enrol(origin: String(key.split(separator: "+")[0]), logKey: key)
        try #require(try sample.jqc("witness", "add", witness.url, "--key", witness.vkey).status == 0)
        _ = try sample.completedInspection(photos: 0, issues: 0)
        let synced = try sample.jqc("witness", "sync")
        try #require(synced.status == 0, "\(synced.stdout)\(synced.stderr)")
        let path = sample.directory.appending("backup")
        try #require(try sample.jqc("backup", path).status == 0)
        let copy = JQCRunner(ledger: path, environment: ["JQC_SYNC_BACKOFF_SCALE": "0"])
        let login = try copy.run(
            ["login", "--username", "inspector", "--password-stdin"], input: Data("inspector-pass\n".utf8))
        try #require(login.status == 0, "\(login.stderr)")
        return (sample, copy, path)
    }

    /// What happens after the backup, and what the copy's sync must say.
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        /// Records made by the original after the backup (then submitted to the witness).
        var originalRecords: Int
        /// Drafts started by the copy before its sync.
        var copyDrafts: Int
        /// What the sync's standard error holds, nil for a check that passes.
        var refusal: String?
    }

    static let cases: [Case] = [
        Case(
            description: "the original recorded more and the witness cosigned it", originalRecords: 1, copyDrafts: 0,
            refusal: "records of this device; this restored copy holds only"),
        Case(
            description: "the copy recorded more than the original: another root at the witness's size",
            originalRecords: 1, copyDrafts: 4, refusal: "whose root is not this copy's at that size"),
        Case(description: "nothing newer: the check passes", originalRecords: 0, copyDrafts: 1, refusal: nil),
    ]

    @Test(arguments: cases) func theCopysSyncAsksTheWitnessWhatItCosigned(_ test: Case) throws {
        let server = try DevServer(profile: .reference)
        let witness = try SpecWitness()
        let (sample, copy, path) = try Self.backedUp(server, witness)
        for _ in 0..<test.originalRecords {
            try #require(try sample.jqc("start", "--template", "11", "--facility", "101").status == 0)
        }
        if test.originalRecords > 0 { try #require(try sample.jqc("witness", "sync").status == 0) }
        for _ in 0..<test.copyDrafts {
            let started = try copy("start", "--template", "11", "--facility", "101")
            #expect(started.stderr.contains("'jqc sync' asks the witness first"), "\(started.stderr)")
        }
        let sync = try copy("sync")
        if let refusal = test.refusal {
            #expect(sync.status == 1, "\(sync.stdout)\(sync.stderr)")
            #expect(try RestorePointEndToEndTests.restorePoint(copy)["state"] == .string("found"), "\(sync.stderr)")
            #expect(
                sync.stderr.contains("the witness \(witness.name) (\(witness.url)) cosigned a checkpoint of "),
                "\(sync.stderr)")
            #expect(sync.stderr.contains(refusal), "\(sync.stderr)")
            #expect(FileManager.default.fileExists(atPath: path + "/" + Self.marker))
            let clear = try copy("restore-point", "clear")
            #expect(clear.status != 0, "\(clear.stderr)")
            let stays = try RestorePointEndToEndTests.restorePoint(copy)
            #expect(
                stays["restored_backup"] == .bool(true) && stays["state"] == .string("found"),
                "the mark stays: \(stays)")
        } else {
            #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
            #expect(!sync.stderr.contains("restore point"), "\(sync.stderr)")
            #expect(!FileManager.default.fileExists(atPath: path + "/" + Self.marker))
            let after = try copy("start", "--template", "11", "--facility", "101")
            #expect(!after.stderr.contains("warning"), "\(after.stderr)")
        }
    }

    /// The development server's witness (`/witness`) finds the original's later history as well.
    @Test func theDevelopmentServersWitnessFindsTheOriginalsLaterHistory() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try #require(try sample.jqc("checkpoint").status == 0)
        let client = try CurlHTTPClient(configuration: .init(connectTimeout: .seconds(2), totalTimeout: .seconds(10)))
        let base = "http://127.0.0.1:\(server.port)/witness"
        let vkey = String(decoding: try client.send(HTTPRequest(url: base + "/key")).body, as: UTF8.self)
        try #require(
            try sample.jqc("witness", "add", base, "--key", vkey.trimmingCharacters(in: .newlines)).status == 0)
        let logKey = try #require(
            try JSONValue(parsing: Array(try sample.jqc("--json", "key").stdout.utf8))["in_force"]?.stringValue)
        let enrolled = try client.send(
            HTTPRequest(
                method: .post, url: base + "/enrol",
                headers: ["Authorization": "Bearer \(try sample.session().tokens.accessToken)"],
                body: .bytes(Array("\(logKey.split(separator: "+")[0])\n\(logKey)\n".utf8), contentType: "text/plain")))
        try #require(enrolled.status == 200)
        try #require(try sample.jqc("witness", "sync").status == 0)
        let path = sample.directory.appending("backup")
        try #require(try sample.jqc("backup", path).status == 0)
        let copy = JQCRunner(ledger: path, environment: ["JQC_SYNC_BACKOFF_SCALE": "0"])
        let login = try copy.run(
            ["login", "--username", "inspector", "--password-stdin"], input: Data("inspector-pass\n".utf8))
        try #require(login.status == 0, "\(login.stderr)")
        try #require(try sample.jqc("start", "--template", "11", "--facility", "101").status == 0)
        try #require(try sample.jqc("witness", "sync").status == 0)
        let sync = try copy("sync")
        #expect(sync.status == 1, "\(sync.stdout)\(sync.stderr)")
        #expect(
            sync.stderr.contains("the witness devserver.jqc.invalid/witness (\(base)) cosigned a checkpoint of "),
            "\(sync.stderr)")
        #expect(try RestorePointEndToEndTests.restorePoint(copy)["state"] == .string("found"), "\(sync.stderr)")
    }

    @Test func withoutAnyWitnessTheCheckIsSaidOnceAndClearConfirmsIt() throws {
        let sample = try SampleLedger(serverURL: "http://127.0.0.1:9")
        let path = sample.directory.appending("backup")
        try #require(try sample.jqc("backup", path).status == 0)
        let copy = JQCRunner(ledger: path, environment: ["JQC_ACTOR": "Dana"])
        let first = try copy("start", "--template", "11", "--facility", "101")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("can NOT be checked: no witness is configured"), "\(first.stderr)")
        #expect(first.stderr.contains("'jqc restore-point clear'"), "\(first.stderr)")
        let second = try copy("start", "--template", "11", "--facility", "101")
        #expect(!second.stderr.contains("can NOT be checked"), "\(second.stderr)")
        #expect(second.stderr.contains("confirm with 'jqc restore-point clear'"), "\(second.stderr)")
        let clear = try copy("restore-point", "clear")
        #expect(clear.status == 0, "\(clear.stderr)")
        #expect(clear.stdout.contains("Confirmed"), "\(clear.stdout)")
        #expect(!FileManager.default.fileExists(atPath: path + "/" + Self.marker))
        let third = try copy("start", "--template", "11", "--facility", "101")
        #expect(third.status == 0 && !third.stderr.contains("warning"), "\(third.stderr)")
    }

    /// (step, the ledger it runs on, the `state` then, whether it is still a restored backup).
    static let jsonSteps: [(step: String, state: String?, restored: Bool)] = [
        ("the original", nil, false), ("the backup, not yet checked", "unchecked", true),
        ("after a recording command said it cannot be checked", "uncheckable", true),
        ("after restore-point clear", nil, false),
    ]

    /// `jqc restore-point --json` (and `clear --json`) say what the text
    /// says, in the shape `Schemas/cli/jqc-json.schema.json` defines.
    @Test func restorePointSaysItsStateInJSON() throws {
        let sample = try SampleLedger(serverURL: "http://127.0.0.1:9")
        let path = sample.directory.appending("backup")
        let backup = try sample.jqc("--json", "backup", path)
        try #require(backup.status == 0, "\(backup.stderr)")
        let events = try #require(try JSONValue(parsing: Array(backup.stdout.utf8))["events"]?.integerValue)
        let copy = JQCRunner(ledger: path, environment: ["JQC_ACTOR": "Dana"])
        for (index, step) in Self.jsonSteps.enumerated() {
            if index == 2 { try #require(try copy("start", "--template", "11", "--facility", "101").status == 0) }
            if index == 3 {
                let clear = try copy("--json", "restore-point", "clear")
                #expect(clear.status == 0, "\(clear.stderr)")
                #expect(try JSONSchemaCheck.validate("restore_point_clear", clear.stdout).status == 0)
                #expect(try JSONValue(parsing: Array(clear.stdout.utf8))["cleared"]?.boolValue == true)
            }
            let shown = try (index == 0 ? sample.jqc("--json", "restore-point") : copy("--json", "restore-point"))
            #expect(shown.status == 0, "\(step.step): \(shown.stderr)")
            let check = try JSONSchemaCheck.validate("restore_point", shown.stdout)
            #expect(check.status == 0, "\(step.step): \(check.stderr)")
            let json = try JSONValue(parsing: Array(shown.stdout.utf8))
            #expect(json["restored_backup"]?.boolValue == step.restored, "\(step.step)")
            #expect(json["state"]?.stringValue == step.state, "\(step.step): \(shown.stdout)")
            #expect(json["records"]?.integerValue == (step.restored ? events : nil), "\(step.step)")
            let text = try (index == 0 ? sample.jqc("restore-point") : copy("restore-point"))
            #expect(json["message"]?.stringValue == text.stdout.trimmingCharacters(in: .newlines), "\(step.step)")
        }
    }
}
