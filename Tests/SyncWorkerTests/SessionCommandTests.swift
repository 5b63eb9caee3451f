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
        let told = try sample.jqc("--json", "logout")
        #expect(told.status == 0)
        let logout = try JSONValue(parsing: told.stdout)
        #expect(logout["logged_out"] == .string("inspector"), "\(told.stdout)")
        #expect(logout["revoked_on_server"] == .bool(true), "\(told.stdout)")
        #expect(logout["server_error"] == .null, "\(told.stdout)")

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
        #expect(wrong.errorKind == "JQCError.loginRefused", "\(wrong.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sample.credentialsPath))

        let login = try jqc.run(["login", "-u", "inspector", "--password-stdin"], input: Data("inspector-pass\n".utf8))
        #expect(login.status == 0, "\(login.stderr)")
        let loggedIn = try JSONValue(parsing: try jqc("--json", "whoami").stdout)
        #expect(loggedIn["display_name"] == .string("Dana Inspector"), "\(login.stdout)")
        let mode = try FileManager.default.attributesOfItem(atPath: sample.credentialsPath)[.posixPermissions]
        #expect(mode as? Int == 0o600)

        let whoami = try jqc("--json", "whoami")
        #expect(whoami.status == 0)
        let saved = try JSONValue(parsing: whoami.stdout)
        #expect(saved["display_name"] == .string("Dana Inspector") && saved["username"] == .string("inspector"))
        #expect(saved["role"] == .string("inspector"), "\(whoami.stdout)")
        #expect(saved["checked"] == .bool(false), "from the saved session: \(whoami.stdout)")
        let checked = try jqc("--json", "whoami", "--check")
        #expect(try JSONValue(parsing: checked.stdout)["checked"] == .bool(true))

        let logout = try jqc("--json", "logout")
        #expect(logout.status == 0)
        #expect(try JSONValue(parsing: logout.stdout)["logged_out"] == .string("inspector"), "\(logout.stdout)")
        #expect(!FileManager.default.fileExists(atPath: sample.credentialsPath))
        #expect(try server.stats()["active_refresh_tokens"] == .integer(0), "the server revoked it")
        let nobody = try jqc("whoami")
        #expect(nobody.status == 1)
        #expect(nobody.errorKind == "JQCError.nobodyLoggedIn", "\(nobody.stderr)")
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
            Products.python.executable, Products.python.arguments + ["-c", script, Products.executable("jqc")],
            environment: sample.jqc.environment)
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

        let whoami = try jqc("--json", "whoami", "--check")
        #expect(whoami.status == 0)
        let known = try JSONValue(parsing: whoami.stdout)
        #expect(known["display_name"] == .string("Dana Inspector"), "\(whoami.stdout)")
        #expect(known["checked"] == .bool(false), "offline, not checked: \(whoami.stdout)")

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
        let sync = try jqc("--json", "sync")
        #expect(sync.status == 0, "offline is not a failure: \(sync.stderr)")
        let stopped = try JSONValue(parsing: sync.stdout)["stopped"]
        #expect(stopped?["reason"] == .string("server_unreachable"), "\(sync.stdout)")

        let logout = try jqc("--json", "logout")
        #expect(logout.status == 0)
        let removed = try JSONValue(parsing: logout.stdout)
        #expect(removed["revoked_on_server"] == .bool(false), "removed from this device only: \(logout.stdout)")
        #expect(removed["server_error"]?.stringValue != nil, "\(logout.stdout)")
    }

    @Test func pullAndHistoryOnline() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 0, issues: 0)
        try sample.completedInspection(photos: 0, issues: 0)
        #expect(try sample.jqc("sync").status == 0)

        let pull = try sample.jqc("--json", "pull")
        #expect(pull.status == 0, "\(pull.stderr)")
        let held = try JSONValue(parsing: pull.stdout)
        #expect(held == .object(["facilities": .integer(2), "templates": .integer(2)]), "\(pull.stdout)")

        let history = try sample.jqc("--json", "history", "--limit", "1", "--offset", "1")
        #expect(history.status == 0, "\(history.stderr)")
        let page = try JSONValue(parsing: history.stdout)
        #expect(page["total"] == .integer(2) && page["offset"] == .integer(1), "\(history.stdout)")
        let listed = try #require(page["inspections"]?.arrayValue)
        #expect(listed.count == 1, "\(history.stdout)")
        #expect(listed.first?["template_name"] == .string("Restroom QC"), "\(history.stdout)")
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
