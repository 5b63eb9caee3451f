import Foundation
import HTTPCore
import LedgerTestSupport
import Testing

/// A connection error is one line, with what to do; `--verbose` gives the
/// whole story (the request, libcurl's words, what was and was not sent).
@Suite struct ConnectionErrorWordingTests {
    /// A ledger logged in to a development server that is then stopped.
    func offlineLedger() throws -> SampleLedger {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 0, issues: 0)
        server.stop()
        return sample
    }

    @Test func aCommandNeedingTheServerSaysWhyInOneLine() throws {
        let sample = try offlineLedger()
        let short = try sample.jqc("history")
        #expect(short.status == 1)
        #expect(
            short.stderr
                == "jqc: Could not list the server's history: the server could not be reached (Couldn't connect to "
                + "server). The history is online only; 'jqc inspections' lists what this device recorded. Run with "
                + "--verbose for details.\n")
        let long = try sample.jqc("--verbose", "history")
        #expect(long.status == 1)
        #expect(long.stderr.split(separator: "\n").count == 1)
        #expect(long.stderr.contains("Could not connect to the server (GET http://127.0.0.1:"), "\(long.stderr)")
        #expect(long.stderr.contains("nothing was sent"))
    }

    @Test func aSyncThatCannotReachTheServerSaysSoInOneLine() throws {
        let sample = try offlineLedger()
        let short = try sample.jqc("sync")
        #expect(short.status == 0, "offline is not a failure: \(short.stderr)")
        let lines = short.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.last
                == "The server could not be reached, so nothing was sent and no attempt was counted. Everything waits "
                + "for the next sync. Run with --verbose for details.", "\(short.stdout)")
        let long = try sample.jqc("--verbose", "sync")
        #expect(long.stdout.contains("Could not connect to the server (POST http://127.0.0.1:"), "\(long.stdout)")
    }
}
