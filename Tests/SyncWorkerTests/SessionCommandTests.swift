import Foundation
import InspectionDomain
import LedgerTestSupport
import SyncWorker
import Testing

/// `jqc login`, `logout`, `whoami`, `pull` and `history` through the built
/// binary, online and offline.
@Suite struct SessionCommandTests {
    @Test func aServerURLWithoutTheAPIPathGetsAHint() throws {
        let server = try DevServer()
        let root = server.baseURL.replacingOccurrences(of: "/api/v1", with: "")
        let sample = try SampleLedger(serverURL: server.baseURL)

        let login = try sample.jqc.run(
            ["login", "-u", "inspector", "--password-stdin", "--server", root], input: Data("inspector-pass\n".utf8))

        #expect(login.status == 1)
        #expect(
            login.stderr.contains(
                "not found: /auth/login was not found at \(root); the API usually lives under /api/v1 (try the "
                    + "server URL \(root)/api/v1 with 'jqc login --server')"))
        #expect(!login.stderr.contains("sync retry"))
    }

    @Test func logoutSaysWhetherTheServerWasTold() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let told = try sample.jqc("logout")
        #expect(told.status == 0)
        #expect(told.stdout.contains("Logged out Dana Inspector (inspector) on this device."))
        #expect(told.stdout.contains("The server revoked the session."))

        try sample.login()
        server.stop()
        let untold = try sample.jqc("logout")
        #expect(untold.status == 0)
        #expect(untold.stderr.contains("jqc: the server was NOT told of this logout, so the session may stay valid"))
        #expect(untold.stderr.contains("It was removed from this device only."))
        #expect(!FileManager.default.fileExists(atPath: sample.credentialsPath))
    }

    @Test func loginWhoamiAndLogout() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        let jqc = sample.jqc.reportingKinds

        let wrong = try jqc.run(["login", "-u", "inspector", "--password-stdin"], input: Data("nope\n".utf8))
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("refused the user name or password"))
        #expect(!FileManager.default.fileExists(atPath: sample.credentialsPath))

        let login = try jqc.run(["login", "-u", "inspector", "--password-stdin"], input: Data("inspector-pass\n".utf8))
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("Logged in as Dana Inspector"))
        let mode = try FileManager.default.attributesOfItem(atPath: sample.credentialsPath)[.posixPermissions]
        #expect(mode as? Int == 0o600)

        let whoami = try jqc("whoami")
        #expect(whoami.status == 0)
        #expect(whoami.stdout.contains("Dana Inspector (inspector, inspector"))
        #expect(whoami.stdout.contains("from the saved session"))
        let checked = try jqc("--json", "whoami", "--check")
        #expect(try JSONValue(parsing: checked.stdout)["checked"] == .bool(true))

        let logout = try jqc("logout")
        #expect(logout.status == 0)
        #expect(logout.stdout.contains("Logged out Dana Inspector"))
        #expect(!FileManager.default.fileExists(atPath: sample.credentialsPath))
        #expect(try server.stats()["active_refresh_tokens"] == .integer(0), "the server revoked it")
        let nobody = try jqc("whoami")
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("jqc login"))
        let noSync = try jqc("sync")
        #expect(noSync.status == 1)
        #expect(noSync.errorKind == "ServerAccessError.notLoggedIn", "\(noSync.stderr)")
    }

    /// On a terminal the password is asked for with the echo off: run under a
    /// pseudo-terminal (Python's `pty`), the typed password never comes back.
    @Test func onATerminalThePasswordIsAskedForWithoutEcho() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        let script = """
            import os, pty, signal, sys
            signal.alarm(30)  # never hang the suite, whatever jqc does
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], [sys.argv[1], "login", "--username", "inspector"])
            seen = b""
            while b"Password: " not in seen:
                seen += os.read(fd, 1024)
            os.write(fd, b"inspector-pass\\n")
            while True:
                try:
                    chunk = os.read(fd, 1024)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(seen.decode(errors="replace"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        let result = try ProcessRun.run(
            "/usr/bin/env", ["python3", "-c", script, Products.executable("jqc")], environment: sample.jqc.environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("Password: "))
        #expect(result.stdout.contains("Logged in as Dana Inspector"))
        #expect(!result.stdout.contains("inspector-pass"), "the password was echoed")
        #expect(try sample.session().user.username == "inspector")
    }

    @Test func offlineTheLastIdentityKeepsRecordingAndOnlineCommandsSaySo() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        server.stop()
        let jqc = sample.jqc.reportingKinds

        let whoami = try jqc("whoami", "--check")
        #expect(whoami.status == 0)
        #expect(whoami.stdout.contains("Dana Inspector"))
        #expect(whoami.stdout.contains("offline: the last known identity"))

        // Recording works, under the verified identity of the saved session.
        let started = try jqc("--json", "start", "-t", "11", "-f", "101")
        #expect(started.status == 0, "\(started.stderr)")
        let last = try sample.ledger.log.read { reader in try reader.record(at: UInt64(try reader.count())) }
        #expect(last?.actor.name == "Dana Inspector")
        #expect(last?.actor.verified == true)

        let history = try jqc("history")
        #expect(history.status == 1)
        #expect(history.errorKind == "ServerAccessError.offline", "\(history.stderr)")
        let pull = try jqc("pull")
        #expect(pull.status == 1)
        #expect(pull.errorKind == "ServerAccessError.offline", "\(pull.stderr)")
        let sync = try jqc("sync")
        #expect(sync.status == 0, "offline is not a failure: \(sync.stderr)")
        #expect(sync.stdout.contains("could not be reached"))

        let logout = try jqc("logout")
        #expect(logout.status == 0)
        #expect(logout.stderr.contains("removed from this device only"))
    }

    @Test func pullAndHistoryOnline() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 0, issues: 0)
        try sample.completedInspection(photos: 0, issues: 0)
        #expect(try sample.jqc("sync").status == 0)

        let pull = try sample.jqc("pull")
        #expect(pull.status == 0, "\(pull.stderr)")
        #expect(pull.stdout.contains("Pulled 2 facilities and 2 templates"))

        let history = try sample.jqc("history", "--limit", "1", "--offset", "1")
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout.contains("Restroom QC"))
        #expect(history.stdout.contains("2-2 of 2"))
        let json = try JSONValue(parsing: try sample.jqc("--json", "history").stdout)
        #expect(json["total"] == .integer(2))
    }

    @Test(arguments: [
        ["login", "--password", "secret"], ["login", "-u", "inspector", "secret"], ["login", "--password-stdin"],
        ["sync", "--interval", "5"], ["history", "--limit", "500"],
    ])
    func usageMistakesAreRefused(arguments: [String]) throws {
        let sample = TemporaryDirectory()
        let result = try JQCRunner(ledger: sample.appending("ledger")).run(arguments)
        #expect(result.status == 2, "\(result.stderr)")
    }
}
