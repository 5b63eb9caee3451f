import Foundation
import HTTPCore
import Testing

@testable import JQCCommands

/// `ConnectionErrorLine`: a connection error in one line.
@Suite struct ConnectionErrorLineTests {
    @Test(arguments: [
        (
            "The server could not be reached, so nothing was sent and no attempt was counted: Could not connect "
                + "(x: y). Everything waits for the next sync.",
            "The server could not be reached, so nothing was sent and no attempt was counted"
        ),
        (
            "The server did not answer in time: The request timed out (POST u: Operation timed out). The remaining "
                + "items wait for the next sync.",
            "The server did not answer in time"
        ),
        (
            "The session's refresh got no complete answer (lost: reset). The saved session was kept.",
            "The session's refresh got no complete answer"
        ),
    ])
    func aSyncStopKeepsItsFirstClause(_ why: String, _ head: String) {
        #expect(
            ConnectionErrorLine.syncStop(why)
                == head + ". Everything waits for the next sync. Run with --verbose for details.")
    }
}

extension ConnectionErrorLineTests {
    @Test func theCauseKeepsTheTransportsLastWordsWithoutTheURL() {
        let cause = ConnectionErrorLine.cause(
            .couldNotConnect(
                detail: "POST http://127.0.0.1:9/api/v1/auth/login: Failed to connect: Couldn't connect to server"))
        #expect(cause == "the server could not be reached (Couldn't connect to server)")
        #expect(ConnectionErrorLine.cause(.timedOut(detail: "")) == "the server did not answer in time")
    }
}
