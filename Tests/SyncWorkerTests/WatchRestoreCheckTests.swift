import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// The restore-point check of a long-running sync (`SyncService`), through
/// the built `jqc` against the development server's reference profile, which
/// offers no witness: on a restored copy whose check cannot be made, `jqc
/// sync --watch` and `jqc sync --daemon` ask once when they start and again
/// only after the mark changed, not at every pass (review finding R2). Each
/// daemon runs with `--interval 1`, so passes come every second; every wait
/// is bounded.
@Suite struct WatchRestoreCheckTests {
    struct Case: CustomStringConvertible, Sendable {
        var arguments: [String]
        var description: String { arguments.joined(separator: " ") }
    }

    static let cases = [
        Case(arguments: ["sync", "--watch", "--interval", "1"]),
        Case(arguments: ["sync", "--daemon", "--interval", "1"]),
    ]

    /// Requests the server answered for the device's latest checkpoint (the check's one question), any status.
    static func checks(_ server: DevServer) throws -> Int {
        guard case .object(let requests)? = try server.stats()["requests"] else { return 0 }
        return requests.filter { $0.key.contains("/ledger/checkpoints/latest") }.reduce(0) { total, member in
            guard case .object(let statuses) = member.value else { return total }
            return total + statuses.reduce(0) { $0 + Int($1.value.integerValue ?? 0) }
        }
    }

    /// Passes run so far: the daemon counts its own in `sync-daemon.json`;
    /// each `--watch` pass pulls reference data, so its facilities are asked for once.
    static func passes(_ test: Case, ledger path: String, _ server: DevServer) throws -> Int {
        if test.arguments.contains("--daemon") {
            guard let data = FileManager.default.contents(atPath: path + "/sync-daemon.json"),
                let status = try? JSONValue(parsing: [UInt8](data))
            else { return 0 }
            return Int(status["passes_started"]?.integerValue ?? 0)
        }
        return try server.requests("GET /api/v1/facilities", status: "200")
    }

    @Test(arguments: cases)
    func aRestoredCopyIsCheckedOnceAndAgainOnlyAfterTheMarkChanges(_ test: Case) throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let path = sample.directory.appending("backup")
        let made = try sample.jqc("backup", path)
        #expect(made.status == 0, "\(made.stderr)")
        let copy = JQCRunner(ledger: path, environment: ["JQC_SYNC_BACKOFF_SCALE": "0"])
        let login = try copy.run(
            ["login", "--username", "inspector", "--password-stdin"], input: Data("inspector-pass\n".utf8))
        #expect(login.status == 0, "\(login.stderr)")
        let before = try Self.passes(test, ledger: path, server)

        let running = try BackgroundJQC(copy, test.arguments)
        defer { running.send(SIGKILL) }
        #expect(
            try eventually { try Self.passes(test, ledger: path, server) >= before + 3 },
            "three passes: \(running.stderr)")
        #expect(try Self.checks(server) == 1, "\(running.stderr)")
        #expect(running.stderr.components(separatedBy: "could NOT be checked").count - 1 == 1, "\(running.stderr)")

        // A changed mark (here: what the check wrote into it undone) is checked again, once.
        let markPath = path + "/restore-point.json"
        guard
            case .object(let members) = try JSONValue(
                parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: markPath))))
        else {
            Issue.record("\(markPath) holds no JSON object")
            return
        }
        #expect(members.contains { $0.key == "uncheckable" })
        let reset = JSONValue.object(members.filter { $0.key != "uncheckable" })
        try Data(reset.serialized().utf8).write(to: URL(fileURLWithPath: markPath))
        let changed = try Self.passes(test, ledger: path, server)
        #expect(
            try eventually { try Self.passes(test, ledger: path, server) >= changed + 3 },
            "three more passes: \(running.stderr)")
        #expect(try Self.checks(server) == 2, "\(running.stderr)")
        #expect(running.stderr.components(separatedBy: "could NOT be checked").count - 1 == 2, "\(running.stderr)")
        #expect(running.isRunning, "\(running.stderr)")
    }
}
