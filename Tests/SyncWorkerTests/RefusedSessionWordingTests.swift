import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// Issue #33 item 8, through the built `jqc` against the development
/// server: once the server refused the session, every line that says so
/// quotes the server's reason, never the whole sentence a sync ends with
/// ("The server no longer accepts this session (…) … Log in again with
/// 'jqc login'"), so "log in again" is said once, not inside itself.
@Suite struct RefusedSessionWordingTests {
    /// What says that the session was refused, and how to find its line.
    struct Saying: Sendable, CustomStringConvertible {
        let description: String
        let arguments: [String]
        let marker: String
    }

    static let sayings = [
        Saying(description: "jqc status", arguments: ["status"], marker: "REFUSED this session"),
        Saying(description: "jqc whoami", arguments: ["whoami"], marker: "REFUSED this session"),
    ]

    @Test(arguments: sayings) func theRefusalIsSaidOnceNotInsideItself(_ saying: Saying) throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 0, issues: 0)
        try server.faults(.object(["expire_tokens_now": .bool(true), "refuse_refresh": .bool(true)]))
        let sync = try sample.jqc("sync")
        #expect(sync.status == 1, "\(sync.stderr)")
        let result = try sample.jqc.run(saying.arguments)
        let line = result.stdout.split(separator: "\n").map(String.init).first { $0.contains(saying.marker) }
        #expect(line != nil, "\(result.stdout)")
        Self.expectSaidOnce(line ?? "")
    }

    @Test func theBackgroundSyncSaysItOnceInItsJournalAndStatus() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 0, issues: 0)
        try server.faults(.object(["expire_tokens_now": .bool(true), "refuse_refresh": .bool(true)]))
        let daemon = try BackgroundJQC(sample.jqc, ["sync", "--daemon"])
        defer { daemon.send(SIGKILL) }
        #expect(
            eventually(timeout: 20) { daemon.stderr.contains("the server refused the session (") },
            "\(daemon.stderr)")
        let line = daemon.stderr.split(separator: "\n").map(String.init).first {
            $0.contains("the server refused the session (")
        }
        Self.expectSaidOnce(line ?? "")
        let status = try sample.jqc("status")
        let daemonLine = status.stdout.split(separator: "\n").map(String.init).first {
            $0.contains("the server refused the session (")
        }
        #expect(daemonLine != nil, "\(status.stdout)")
        Self.expectSaidOnce(daemonLine ?? "")
    }

    /// One "jqc login", and no sentence of the sync's own inside the line.
    static func expectSaidOnce(_ line: String) {
        #expect(line.components(separatedBy: "jqc login").count - 1 == 1, "\(line)")
        #expect(!line.contains("no longer accepts this session"), "\(line)")
        #expect(line.contains("HTTP 401"), "the server's reason is quoted: \(line)")
    }
}
