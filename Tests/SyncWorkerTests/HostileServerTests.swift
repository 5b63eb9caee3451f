import Foundation
import HTTPCore
import InspectionDomain
import LedgerTestSupport
import SyncWorker
import Testing

/// The built `jqc` against a hostile server: a request that never gets an
/// answer, an answer without end, a 50 KB error message, ids that break the
/// contract. Each ends promptly, says why, and records nothing half-done.
@Suite struct HostileServerTests {
    /// A ledger whose server is `server`, with a saved session on it.
    static func ledger(on server: HostileServer) throws -> SampleLedger {
        let sample = try SampleLedger(serverURL: server.baseURL)
        try SessionStore(path: sample.credentialsPath).save(
            StoredSession(
                user: ServerUser(id: "1", username: "inspector", role: "inspector", displayName: "Dana Inspector"),
                tokens: SessionTokens(accessToken: "access-token-1", refreshToken: "refresh-token-1"),
                serverURL: server.baseURL, savedAt: "2026-12-01T08:00:00Z"))
        return sample
    }

    @Test(arguments: [
        (["pull"], SIGTERM), (["pull"], SIGINT), (["sync"], SIGTERM), (["sync"], SIGINT),
        (["sync", "--watch"], SIGTERM),
    ])
    func aSignalEndsAStalledRequestAtOnceRecordingNothing(_ arguments: [String], _ signal: Int32) throws {
        let command = arguments[0]
        let server = try HostileServer(.stall)
        let sample = try Self.ledger(on: server)
        if command == "sync" { try sample.completedInspection(photos: 0, issues: 0) }
        let before = try sample.eventTypes()
        let running = try BackgroundJQC(sample.jqc.reportingKinds, arguments)
        #expect(eventually { !server.requests.isEmpty }, "\(running.stderr)")
        let sent = ContinuousClock.now
        running.send(signal)
        let status = try running.wait(timeout: 30)
        // The transfer timeout is 60 s: only a process deaf to the signal comes near it.
        #expect(ContinuousClock.now - sent < .seconds(15))
        #expect(status == 1, "\(running.stderr)")
        let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
        let failure = try #require(running.stderr.split(separator: "\n").last { $0.hasPrefix("{\"error\":") })
        let error = try JSONValue(parsing: String(failure))["error"]
        #expect(error?["kind"] == .string("Stop.bySignal"), "\(running.stderr)")
        #expect(error?["message"]?.stringValue?.contains(name) == true, "\(running.stderr)")
        #expect(try sample.eventTypes() == before)
        if command == "pull" {
            let facilities = try sample.jqc("facilities", "--json")
            #expect(facilities.status == 0)
            #expect(facilities.stdout.contains("Riverside"), "the cache from before the pull is kept")
        }
    }

    @Test func anEndlessAnswerIsRefusedAtTheLimitWithMemoryBounded() throws {
        let server = try HostileServer(.endless)
        let sample = try Self.ledger(on: server)
        // The largest resident size jqc reached, read by its parent.
        let measure = """
            import resource, subprocess, sys
            result = subprocess.run(sys.argv[1:], capture_output=True, text=True)
            sys.stdout.write(result.stdout)
            sys.stderr.write(result.stderr)
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
            sys.exit(result.returncode)
            """
        let started = ContinuousClock.now
        let result = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + ["-c", measure, Products.executable("jqc"), "pull"],
            environment: sample.jqc.environment.merging(["JQC_MAX_RESPONSE_BYTES": "2097152"]) { $1 }, timeout: 120)
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("limit of 2 MiB (2097152 bytes)"), "\(result.stderr)")
        #expect(result.stderr.contains("\(server.baseURL)/facilities"), "\(result.stderr)")
        let kilobytes = try #require(Int(result.stderr.split(separator: "\n").last ?? ""))
        // Unbounded, it grew by gigabytes in seconds; bounded, it stays near its usual size.
        #expect(kilobytes < 300_000, "max RSS \(kilobytes) KB")
    }

    @Test func aFiftyKilobyteErrorEndsTheSyncWithACutMessage() throws {
        let server = try HostileServer(.hugeError)
        let sample = try Self.ledger(on: server)
        try sample.completedInspection(photos: 0, issues: 0)
        let started = ContinuousClock.now
        let result = try sample.jqc("--json", "sync")
        // Redacting the message took minutes before; a hang never meets this bound.
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            try JSONValue(parsing: result.stdout)["retrying"]?.arrayValue?.count == 1, "\(result.stdout.prefix(2000))")
        #expect(result.stdout.contains("more characters not shown)"), "\(result.stdout.prefix(2000))")
        #expect(result.stdout.utf8.count < 8_000, "\(result.stdout.utf8.count) bytes of output")
        let outbox = try sample.ledger.outbox()
        #expect(outbox.count == 1)
        #expect((outbox.first?.lastError ?? "").unicodeScalars.count < 1_000)
    }

    @Test func aTextIDForANewRecordIsRefusedNeverAdopted() throws {
        let server = try HostileServer(.textID)
        let sample = try Self.ledger(on: server)
        try sample.completedInspection(photos: 0, issues: 0)
        let result = try sample.jqc("sync")
        #expect(result.stdout.contains(#"the id "abc-1", not an integer ≥ 1"#), "\(result.stdout) \(server.requests)")
        #expect(result.stdout.contains("it was not adopted"), "\(result.stdout)")
        #expect(try !sample.eventTypes().contains("sync.inspection_accepted"))
    }

    @Test func aServerUserIDLikeAnOfflineActorsIsRefusedAtLogin() throws {
        let server = try HostileServer(.localUser)
        let sample = try SampleLedger(serverURL: server.baseURL)
        let login = try sample.jqc.run(
            ["login", "--username", "dan", "--password-stdin"], input: Data("pass-word\n".utf8))
        #expect(login.status == 1)
        #expect(login.stderr.contains(#"the id "local:Dan", not an integer ≥ 1"#), "\(login.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sample.credentialsPath))
    }

    @Test func aSavedSessionWhoseUserIDIsNotAnIntegerIsNotUsed() throws {
        let server = try HostileServer(.stall)
        let sample = try SampleLedger(serverURL: server.baseURL)
        let session = """
            {"user": {"id": "local:Dan", "username": "dan", "role": "inspector", "display_name": "Dan"},
             "tokens": {"access_token": "a", "refresh_token": "r"},
             "server_url": "\(server.baseURL)", "saved_at": "2026-12-01T08:00:00Z"}
            """
        #expect(
            FileManager.default.createFile(
                atPath: sample.credentialsPath, contents: Data(session.utf8), attributes: [.posixPermissions: 0o600]))
        let id = try sample.draft()
        let result = try sample.jqc("--as", "Dan", "set", id.lowercased, "Notes", "x")
        #expect(result.status == 1)
        #expect(result.stderr.contains("not an integer"), "\(result.stderr)")
        #expect(result.stderr.contains("jqc login"), "\(result.stderr)")
        #expect(try !sample.eventTypes().contains("field.set"))
    }

    @Test(arguments: [
        ("7", true), ("1", true), ("9007199254740993", true), ("0", false), ("-3", false), ("07", false),
        ("+7", false), ("7.0", false), ("", false), ("local:Dan", false), ("abc-1", false), (" 7", false),
    ])
    func whatCountsAsAServerID(_ text: String, _ accepted: Bool) {
        #expect(APIClient.isServerID(text) == accepted)
    }
}
