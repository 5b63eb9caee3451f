import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// `jqc sync --daemon`, the background service's command, through the built
/// `jqc` against the development server: it sends a submitted inspection
/// within seconds with nobody typing `sync`, keeps running through a
/// revoked session (saying so once; `status` and `whoami` say "log in
/// again"), and sends the queued work by itself after `jqc login`.
@Suite struct BackgroundSyncTests {
    @Test func theDaemonSendsBySelfWaitsThroughARevokedSessionAndResumesAfterLogin() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let daemon = try BackgroundJQC(sample.jqc, ["sync", "--daemon"])
        defer { daemon.send(SIGKILL) }
        #expect(eventually { SyncDaemonTests.runningStatus(sample) != nil }, "started: \(daemon.stderr)")

        try sample.completedInspection(photos: 1, issues: 1)
        #expect(eventually(timeout: 20) { (try? server.count("inspections")) == 1 }, "\(daemon.stderr)")
        #expect(
            eventually { daemon.stderr.contains("jqc sync: sent 2 photos, 1 inspection, 1 issue [") },
            "\(daemon.stderr)")
        #expect(eventually { (try? server.count("issues")) == 1 }, "\(daemon.stderr)")

        // The server revokes the session: every access token expires and no refresh is accepted.
        try server.faults(.object(["expire_tokens_now": .bool(true), "refuse_refresh": .bool(true)]))
        let queued = try sample.completedInspection(photos: 0, issues: 0)
        #expect(
            eventually(timeout: 20) { SyncDaemonTests.runningStatus(sample)?.state == .waitingForLogin },
            "\(daemon.stderr)")
        #expect(daemon.stderr.contains("log in again with 'jqc login'"))
        usleep(1_500_000)
        #expect(daemon.isRunning, "the daemon exited on a refused session: \(daemon.stderr)")
        let refusals = daemon.stderr.components(separatedBy: "the server refused the session").count - 1
        #expect(refusals == 1, "said once: \(daemon.stderr)")
        let whoami = try sample.jqc("--json", "whoami")
        #expect(whoami.status == 0)
        #expect(try JSONValue(parsing: whoami.stdout)["refused"]?["refused_at"]?.stringValue != nil, "\(whoami.stdout)")
        let status = try sample.jqc("status")
        #expect(status.stdout.contains("log in again with 'jqc login'"))
        #expect(status.stdout.contains("submitted, waiting    1 inspection"), "\(status.stdout)")
        #expect(try server.count("inspections") == 1)
        let json = try sample.jqc("--json", "status")
        #expect(try JSONSchemaCheck.validate("status", json.stdout).status == 0, "\(json.stdout)")
        let object = try JSONValue(parsing: json.stdout)
        #expect(object["session"]?["state"]?.stringValue == "refused")
        #expect(object["session"]?["refused_at"]?.stringValue != nil, "\(json.stdout)")
        #expect(object["not_on_server"]?["waiting"]?["inspections"]?.integerValue == 1)
        #expect(object["last_sync"]?["sent_at"]?.isNull == false)

        // A new login (refreshes are still refused): the daemon sees it and sends the queued work.
        try sample.login()
        #expect(eventually(timeout: 20) { (try? server.count("inspections")) == 2 }, "\(daemon.stderr)")
        #expect(try eventually { try sample.ledger.state(of: queued)?.sync.serverID != nil })
        #expect(try JSONValue(parsing: try sample.jqc("--json", "whoami").stdout)["refused"]?.isNull == true)
        let after = try JSONValue(parsing: try sample.jqc("--json", "status").stdout)
        #expect(after["not_on_server"]?["server_has_everything"] == .bool(true), "\(after)")

        daemon.send(SIGTERM)
        #expect(try daemon.wait() == 0, "\(daemon.stderr)")
        #expect(daemon.stderr.contains("jqc sync: stopped"))
        // One line per outcome, each with its time.
        for line in daemon.stderr.split(separator: "\n") {
            #expect(
                line.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z jqc sync: "#, options: .regularExpression)
                    != nil, "\(line)")
        }
    }

    @Test func aSecondDaemonIsRefusedAndWatchWithDaemonIsAUsageError() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let daemon = try BackgroundJQC(sample.jqc, ["sync", "--daemon"])
        defer { daemon.send(SIGKILL) }
        #expect(eventually { SyncDaemonTests.runningStatus(sample) != nil }, "started: \(daemon.stderr)")
        let second = try sample.jqc.reportingKinds("sync", "--daemon")
        #expect(second.status == 1)
        #expect(second.errorKind == "SyncLock.Failure.held", "\(second.stderr)")
        // A plain 'jqc sync' asks the daemon instead (SyncDaemonTests); '--watch' beside it is still refused.
        let manual = try sample.jqc("sync")
        #expect(manual.status == 0, "\(manual.stderr)")
        #expect(manual.stderr.contains("runs this sync; waiting for its pass"), "\(manual.stderr)")
        let watching = try sample.jqc.reportingKinds("sync", "--watch")
        #expect(watching.status == 1)
        #expect(watching.errorKind == "SyncLock.Failure.held", "\(watching.stderr)")
        let both = try sample.jqc.reportingKinds("sync", "--daemon", "--watch")
        #expect(both.status == 2)
        #expect(both.errorKind == "UsageError.unexpectedArgument", "\(both.stderr)")
    }

    @Test func whoamiCheckLearnsARefusalThatALoginEnds() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        #expect(try JSONValue(parsing: try sample.jqc("--json", "whoami").stdout)["refused"]?.isNull == true)
        try server.faults(.object(["expire_tokens_now": .bool(true), "refuse_refresh": .bool(true)]))
        let check = try sample.jqc("whoami", "--check")
        #expect(check.status == 1)
        let whoami = try sample.jqc("whoami")
        #expect(whoami.status == 0, "the identity is kept: \(whoami.stderr)")
        let kept = try JSONValue(parsing: try sample.jqc("--json", "whoami").stdout)
        #expect(kept["display_name"] == .string("Dana Inspector") && kept["id"] == .string("1"), "\(kept)")
        #expect(kept["username"] == .string("inspector") && kept["role"] == .string("inspector"), "\(kept)")
        #expect(
            whoami.stdout.contains("the server REFUSED this session at ")
                && whoami.stdout.contains(": log in again with 'jqc login'; recording goes on meanwhile"),
            "\(whoami.stdout)")
        let json = try sample.jqc("--json", "whoami")
        #expect(try JSONSchemaCheck.validate("whoami", json.stdout).status == 0, "\(json.stdout)")
        #expect(try JSONValue(parsing: json.stdout)["refused"]?["refused_at"]?.stringValue != nil)
        try sample.login()
        let status = try JSONValue(parsing: try sample.jqc("--json", "status").stdout)
        #expect(status["session"]?["state"] == .string("saved"), "\(status)")
        #expect(try JSONValue(parsing: try sample.jqc("--json", "whoami").stdout)["refused"]?.isNull == true)
    }
}
