import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// The background sync a user can trust (issue #33 items 1–3), through the
/// built `jqc` with real daemons against the development server's reference
/// profile: a submit made while its first pass runs is sent at once, not at
/// the periodic pass; `jqc sync` and `jqc sync retry` with a daemon running
/// ask it for a pass and print its outcome; `jqc status` names the daemon
/// and says what it is doing. Every wait is bounded, and every daemon is
/// killed when its test ends (the `defer`s; `BackgroundJQC` also on deinit).
@Suite struct SyncDaemonTests {
    /// The daemon's status file, as JSON.
    static func daemonFile(_ sample: SampleLedger) -> JSONValue? {
        guard let data = FileManager.default.contents(atPath: sample.path + "/sync-daemon.json") else { return nil }
        return try? JSONValue(parsing: [UInt8](data))
    }

    /// `jqc --json status`'s `background_sync`: what `status` says of the daemon.
    static func backgroundSync(_ sample: SampleLedger) throws -> JSONValue? {
        let status = try sample.jqc("--json", "status")
        #expect(status.status == 0, "\(status.stderr)")
        let said = try JSONValue(parsing: status.stdout)["background_sync"]
        return said?.isNull == true ? nil : said
    }

    /// The daemon's status as it wrote it last, while it runs.
    static func runningStatus(_ sample: SampleLedger) -> SyncDaemonStatus? {
        guard case .running(let status)? = SyncDaemonStatus.read(LedgerDirectory(path: sample.path)) else {
            return nil
        }
        return status
    }

    /// The issue's "a submit 50 ms after the daemon starts", proven by the
    /// schedule rather than a clock bound: with `--interval 60` the periodic
    /// pass cannot come before a minute after the daemon started, so an
    /// inspection and issue on the server before then were sent because the
    /// watch saw the submit (armed before the first pass).
    @Test func aSubmitMadeDuringTheFirstPassIsSentWithoutWaitingForThePeriodicPass() throws {
        // Each request takes 150 ms, so the first pass (the reference data) is still under way at the submit.
        let server = try DevServer(["--latency-ms", "150"], profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let daemon = try BackgroundJQC(sample.jqc, ["sync", "--daemon", "--interval", "60"])
        defer { daemon.send(SIGKILL) }
        #expect(eventually { Self.runningStatus(sample) != nil }, "started: \(daemon.stderr)")
        let started = try #require(Self.runningStatus(sample)).startedAt
        usleep(50_000)
        let id = try sample.completedInspection(photos: 1, issues: 1)

        #expect(eventually(timeout: 40) { (try? server.count("issues")) == 1 }, "\(daemon.stderr)")
        let sent = sample.clock.now()
        #expect(try server.count("inspections") == 1)
        let periodic = Timestamp(microsecondsSinceEpoch: started.microsecondsSinceEpoch + 60_000_000)
        #expect(sent < periodic, "sent \(sent.iso8601), the periodic pass not before \(periodic.iso8601)")
        #expect(try eventually { try sample.ledger.state(of: id)?.sync.serverID != nil })
        #expect(daemon.isRunning, "\(daemon.stderr)")
    }

    /// How the idle daemon learns of a submit: woken by inotify (the
    /// default) or looking once a second (`JQC_SYNC_WATCH=poll`).
    static let wakeModes: [[String: String]] = [[:], ["JQC_SYNC_WATCH": "poll"]]

    /// A submit made while the daemon sleeps after its first pass (the
    /// issue's "5 s after start"), with the periodic pass a minute away:
    /// on the server before the `until` the idle daemon published, so only
    /// the wake can have sent it. How soon is `Tools/bench daemon`'s figure
    /// (submit → server), not a bound here.
    @Test(arguments: wakeModes)
    func aSubmitWhileTheDaemonIsIdleIsSentBeforeItsPeriodicPass(_ environment: [String: String]) throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let daemon = try BackgroundJQC(
            JQCRunner(ledger: sample.path, environment: environment), ["sync", "--daemon", "--interval", "60"])
        defer { daemon.send(SIGKILL) }
        #expect(
            eventually { Self.runningStatus(sample).map { $0.lastPass != nil && $0.state == .idle } ?? false },
            "the first pass: \(daemon.stderr)")
        let until = try #require(Self.runningStatus(sample)?.until, "an idle daemon names its periodic pass")
        let id = try sample.completedInspection(photos: 0, issues: 0)
        #expect(eventually(timeout: 40) { (try? server.count("inspections")) == 1 }, "\(daemon.stderr)")
        let sent = sample.clock.now()
        #expect(sent < until, "sent \(sent.iso8601), the periodic pass at \(until.iso8601)")
        #expect(try eventually { try sample.ledger.state(of: id)?.sync.serverID != nil })
        #expect(daemon.isRunning, "\(daemon.stderr)")
    }

    /// The issue's "with the daemon backing off after an outage, `jqc sync`
    /// makes it send", proven by the daemon's own schedule rather than a
    /// clock bound: its offline waits are stretched (500 s, then doubling)
    /// far past this test, so when the inspection is on the server and
    /// `jqc sync` has returned before the `until` the daemon published,
    /// only the request can have sent it.
    @Test func syncWithADaemonBackingOffAfterAnOutageAsksItAndExitsZero() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let daemon = try BackgroundJQC(
            JQCRunner(ledger: sample.path, environment: ["JQC_SYNC_BACKOFF_SCALE": "100"]), ["sync", "--daemon"])
        defer { daemon.send(SIGKILL) }
        #expect(
            eventually { Self.daemonFile(sample)?["last_pass"]?["outcome"]?.stringValue != nil },
            "the first pass: \(daemon.stderr)")
        let idle = try #require(try Self.backgroundSync(sample), "a background sync is said to run")
        #expect(idle["running"] == .bool(true) && idle["started_at"]?.stringValue != nil, "\(idle)")
        #expect(idle["pid"]?.integerValue == Int64(daemon.pid) && idle["unit"] == .null, "started by hand: \(idle)")
        #expect(idle["state"] == .string("idle"), "\(idle)")

        server.stop()
        let id = try sample.completedInspection(photos: 1, issues: 1)
        let submitted = sample.clock.now()
        // Settled: each record of the submit woke it for a pass within 0.3 s, so once it has been offline
        // and written nothing for 2 s after the last one, the pass that found the server gone saw them all
        // and nothing but the request can end its wait.
        #expect(
            eventually(timeout: 30) {
                guard let status = Self.runningStatus(sample), status.state == .offline else { return false }
                let now = sample.clock.now().microsecondsSinceEpoch
                return now - status.updatedAt.microsecondsSinceEpoch >= 2_000_000
                    && now - submitted.microsecondsSinceEpoch >= 2_000_000
            }, "\(daemon.stderr)")
        #expect(daemon.stderr.contains("jqc sync: offline: "), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("trying again on a network change or in 500 s at the latest"))
        let offline = try sample.jqc("status")
        let said = try #require(try Self.backgroundSync(sample))
        #expect(said["unit"] == .null && said["since"]?.stringValue != nil, "started by hand, offline since: \(said)")
        #expect(offline.stdout.contains("on a network change"), "\(offline.stdout)")
        let json = try sample.jqc("--json", "status")
        #expect(try JSONSchemaCheck.validate("status", json.stdout).status == 0, "\(json.stdout)")
        let background = try JSONValue(parsing: json.stdout)["background_sync"]
        #expect(background?["running"]?.boolValue == true, "\(json.stdout)")
        #expect(background?["pid"]?.integerValue == Int64(daemon.pid))
        #expect(background?["state"]?.stringValue == "offline", "\(json.stdout)")
        #expect(background?["last_error"]?.stringValue?.isEmpty == false, "\(json.stdout)")
        let waiting = try #require(Self.runningStatus(sample))
        let until = try #require(waiting.until, "an offline daemon names when it tries again")

        // The server is back on the same port; the daemon waits out its back-off.
        try server.start()
        let sync = try sample.jqc("--json", "sync")
        let returned = sample.clock.now()
        #expect(sync.status == 0, "\(sync.stderr)\n\(daemon.stderr)")
        #expect(sync.stderr.contains("the background sync (pid \(daemon.pid), started by hand) runs this sync"))
        let pass = try JSONValue(parsing: sync.stdout)
        #expect(pass["sent"]?["inspection"] == .integer(1) && pass["sent"]?["issue"] == .integer(1), "\(sync.stdout)")
        #expect(try server.count("inspections") == 1)
        #expect(try sample.ledger.state(of: id)?.sync.serverID != nil)
        // Sent and answered while the daemon's own schedule still had it waiting, by the one pass asked for.
        #expect(returned < until, "returned \(returned.iso8601), the daemon waited until \(until.iso8601)")
        let after = try #require(Self.runningStatus(sample))
        #expect(after.passesStarted == waiting.passesStarted + 1, "\(daemon.stderr)")
        #expect(
            after.lastPass?.document?["sent"]?["inspection"] == .integer(1), "\(String(describing: after.lastPass))")
        #expect(daemon.isRunning, "\(daemon.stderr)")

        // A daemon that died leaves its file: status says it is not running.
        daemon.send(SIGKILL)
        _ = try daemon.wait()
        let dead = try JSONValue(parsing: try sample.jqc("--json", "status").stdout)["background_sync"]
        #expect(dead?["running"]?.boolValue == false)
        #expect(dead?["last_seen_at"]?.stringValue != nil, "\(String(describing: dead))")
        #expect(dead?["state"]?.isNull == true)
    }

    @Test func syncRetryWithADaemonBackingOffAsksItToSendTheItemNow() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        // A long back-off (a minute at first), not the tests' scale of 0: the daemon would not retry by itself.
        let daemon = try BackgroundJQC(
            JQCRunner(ledger: sample.path, environment: ["JQC_SYNC_BACKOFF_SCALE": "30"]), ["sync", "--daemon"])
        defer { daemon.send(SIGKILL) }
        #expect(eventually { Self.daemonFile(sample)?["last_pass"] != nil }, "\(daemon.stderr)")
        try server.faults(
            .object([
                "fault_rate": .integer(1), "fault_status": .integer(500),
                "fault_paths": .array([.string("/api/v1/inspections")]),
            ]))
        let id = try sample.completedInspection(photos: 0, issues: 0)
        #expect(eventually { Self.runningStatus(sample)?.lastError != nil }, "\(daemon.stderr)")
        #expect(eventually { Self.daemonFile(sample)?["state"]?.stringValue == "backing_off" }, "\(daemon.stderr)")
        let backingOff = try #require(try Self.backgroundSync(sample))
        #expect(backingOff["state"] == .string("backing_off") && backingOff["unit"] == .null, "\(backingOff)")
        #expect(backingOff["until"]?.stringValue != nil, "backing off until: \(backingOff)")

        try server.resetFaults()
        let retry = try sample.jqc("sync", "retry", String(id.uuidString.lowercased().prefix(8)))
        #expect(retry.status == 0, "\(retry.stderr)\n\(daemon.stderr)")
        // Queued again: the request is recorded in the inspection's stream.
        let requested = try sample.jqc("--json", "log", "--type", "sync.retry_requested").stdout.split(separator: "\n")
        let request = try JSONValue(parsing: try #require(requested.last.map(String.init), "\(retry.stdout)"))
        #expect(request["stream"] == .string(id.lowercased), "\(request)")
        #expect(
            request["payload"]?["item_kind"] == .string("inspection")
                && request["payload"]?["item_id"] == .string(id.lowercased), "\(request)")
        #expect(retry.stdout.contains("Sent "), "the daemon's pass: \(retry.stdout)")
        #expect(!retry.stdout.contains("Run 'jqc sync'"), "\(retry.stdout)")
        #expect(try server.count("inspections") == 1)
    }
}
