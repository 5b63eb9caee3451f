import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// The server as a witness (`CheckpointWitness`), through the built `jqc`
/// against the development server: a sync leaves the device's checkpoint
/// with the server; a log rewritten afterwards, consistently in itself, is
/// refused by the next sync and by `jqc audit --witness`. The witness is
/// asked only when one is configured (the legacy `jqc init --witness`; `StandardWitnessTests` has the C2SP witnesses).
@Suite struct WitnessEndToEndTests {
    /// `jqc --json sync`'s `witness` (checked against the schema): what the witness step came to.
    static func witnessStep(_ sync: ProcessResult) throws -> JSONValue {
        #expect(try JSONSchemaCheck.validate("sync", sync.stdout).status == 0, "\(sync.stdout)")
        return try #require(try JSONValue(parsing: sync.stdout)["witness"], "\(sync.stdout)")
    }

    /// `jqc audit ID --format json`'s `verification.witness`.
    static func auditedWitness(_ sample: SampleLedger, _ arguments: String...) throws -> JSONValue? {
        let audit = try sample.jqc.run(["audit"] + arguments + ["--format", "json"])
        return try JSONValue(parsing: audit.stdout)["verification"]?["witness"]
    }

    @Test func withoutAWitnessASyncSendsNothingOutsideTheContractAndSaysNothingOfIt() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 0, issues: 0).lowercased
        for _ in 0..<2 {
            let sync = try sample.jqc("sync")
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(!sync.stdout.lowercased().contains("witness"), "\(sync.stdout)")
            #expect(!sync.stderr.lowercased().contains("witness"), "\(sync.stderr)")
        }
        guard case .object(let members) = try server.stats()["requests"] else {
            Issue.record("the server's stats have no requests")
            return
        }
        let routes = members.map(\.key)
        #expect(!routes.isEmpty)
        #expect(!routes.contains { $0.contains("/ledger/checkpoints") }, "\(routes)")
        #expect(!(try sample.eventTypes()).contains("sync.checkpoint_witnessed"))
        let audit = try sample.jqc("audit", id)
        #expect(audit.status == 0, "\(audit.stderr)")
        let said = audit.stdout.components(separatedBy: "\n").filter { $0.contains("witness") }.map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(
            said == [
                "witness: the history was NOT witnessed (no witness is configured; add one with "
                    + "'jqc witness add URL --key VKEY')"
            ], "\(audit.stdout)")
    }

    /// The README's restore (`jqc backup`, then the copy put where the
    /// ledger was) keeps the device's identity: the next sync signs with the
    /// key the log published and the witness acknowledges it, no false alarm.
    @Test func aBackupRestoredAsTheREADMESaysSignsWithTheSameKeyAndTheWitnessAgrees() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL, witness: server.baseURL)
        try sample.login()
        _ = try sample.completedInspection(photos: 0, issues: 0)
        let first = try sample.jqc("--json", "sync")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try Self.witnessStep(first)["outcome"] == .string("acknowledged"), "\(first.stdout)")
        let keyBefore = try sample.jqc("--json", "key").stdout
        let backup = sample.directory.appending("backup")
        let made = try sample.jqc("backup", backup)
        #expect(made.status == 0, "\(made.stderr)")

        try FileManager.default.removeItem(atPath: sample.path)
        let copied = try ProcessRun.run("/bin/cp", ["-a", backup, sample.path])
        #expect(copied.status == 0, "\(copied.stderr)")
        let verified = try sample.jqc("verify")
        #expect(verified.status == 0, "\(verified.stderr)")
        // A backup holds no login: the README says to log in again.
        try sample.login()
        let started = try sample.jqc("start", "--template", "11", "--facility", "101")
        #expect(started.status == 0, "\(started.stderr)")

        let again = try sample.jqc("--json", "sync")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.witnessStep(again)["outcome"] == .string("acknowledged"), "\(again.stdout)")
        #expect(!(again.stdout + again.stderr).contains("REFUSED"), "\(again.stdout)\(again.stderr)")
        #expect(try sample.jqc("--json", "key").stdout == keyBefore)
    }

    @Test func aRewriteAfterASyncIsRefusedByTheWitness() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL, witness: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 1, issues: 0).lowercased

        let sync = try sample.jqc("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        let acknowledged = try Self.witnessStep(sync)
        #expect(
            acknowledged["outcome"] == .string("acknowledged") && acknowledged["previous"] == .null, "\(sync.stdout)")
        let witnessed = try sample.jqc("audit", id, "--witness")
        #expect(witnessed.status == 0, "\(witnessed.stderr)")
        #expect(witnessed.stdout.contains("against the server's latest checkpoint of "), "\(witnessed.stdout)")
        let plain = try #require(try Self.auditedWitness(sample, id))
        #expect(plain["witnessed"] == .bool(true), "\(plain)")
        #expect(plain["acknowledged_size"] == acknowledged["size"], "\(plain)")
        // Nothing new but the acknowledgement: nothing sent, nothing recorded.
        let types = try sample.eventTypes().count
        let idle = try sample.jqc("--json", "sync")
        #expect(idle.status == 0, "\(idle.stderr)")
        #expect(try Self.witnessStep(idle)["outcome"] == .string("up_to_date"), "\(idle.stdout)")
        #expect(try sample.eventTypes().count == types)
        try sample.completedInspection(photos: 0, issues: 0)
        let again = try sample.jqc("--json", "sync")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.witnessStep(again)["previous"] == acknowledged["size"], "\(again.stdout)")

        // The forger rewrites the inspection's second record and everything after it.
        sample.ledger.close()
        try LedgerForger.rewrite(store: sample.path + "/store", from: 2) { $0.event.actor.name = "Mallory" }
        #expect(try sample.jqc("stats").status == 0)  // a writable open derives the forged tree
        #expect(try sample.jqc("audit", id, "--full").status == 0)  // consistent in itself

        let refused = try sample.jqc.reportingKinds("--json", "sync")
        #expect(refused.status == 1)
        #expect(try Self.witnessStep(refused)["outcome"] == .string("refused"), "\(refused.stdout)")
        #expect(refused.errorKind == "JQCError.verificationFailed", "\(refused.stderr)")
        let audit = try sample.jqc("audit", id, "--witness", "--format", "json")
        #expect(audit.status == 1)
        #expect(try JSONValue(parsing: audit.stdout)["result"]?["verdict"] == .string("NOT INTACT"), "\(audit.stdout)")
        let recorded = try sample.jqc("audit", id)
        #expect(recorded.stdout.contains("the server REFUSED the checkpoint"), "\(recorded.stdout)")
    }

    @Test func aWitnessAnsweringWithAnotherCheckpointHasNotAcknowledged() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL, witness: server.baseURL)
        try sample.login()
        _ = try sample.completedInspection(photos: 0, issues: 0)
        try server.witnessAnswers("another_checkpoint")
        let sync = try sample.jqc.reportingKinds("--json", "sync")
        #expect(sync.status == 1)
        #expect(
            sync.stderr.contains(
                "WITNESS FAILED: the witness answered with a different checkpoint (999999 records, root QkJCQkJC"),
            "\(sync.stderr)")
        #expect(sync.errorKind == "JQCError.verificationFailed", "\(sync.stderr)")
        #expect(try Self.witnessStep(sync)["outcome"] == .string("wrong_answer"), "\(sync.stdout)")
        let log = try sample.jqc("log", "--json")
        #expect(log.stdout.contains("wrong_answer"), "\(log.stdout)")
        #expect(!log.stdout.contains("\"acknowledged\""), "\(log.stdout)")
        // An honest answer next time is an acknowledgement again.
        try server.witnessAnswers("honest")
        let again = try sample.jqc("--json", "sync")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.witnessStep(again)["outcome"] == .string("acknowledged"), "\(again.stdout)")
    }

    @Test func aServerWithoutTheWitnessIsSaidNotToWitness() throws {
        let server = try DevServer(["--profile", "reference"])
        let sample = try SampleLedger(serverURL: server.baseURL, witness: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 0, issues: 0).lowercased
        let sync = try sample.jqc("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try JSONValue(parsing: sync.stdout)["sent"]?["inspection"] == .integer(1), "\(sync.stdout)")
        #expect(try Self.witnessStep(sync)["outcome"] == .string("unsupported"), "\(sync.stdout)")
        let audit = try sample.jqc("audit", id)
        #expect(audit.status == 0, "\(audit.stderr)")
        #expect(try Self.auditedWitness(sample, id)?["witnessed"] == .bool(false), "\(audit.stdout)")
        let asked = try sample.jqc.reportingKinds("audit", id, "--witness")
        #expect(asked.status == 1)
        #expect(asked.errorKind == "AuditWitnessError.notWitnessing", "\(asked.stderr)")
        #expect(asked.errorMessage?.contains("HTTP 404") == true, "\(asked.stderr)")
    }
}
