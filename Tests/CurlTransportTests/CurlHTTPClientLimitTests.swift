import CurlTransport
import Dispatch
import HTTPCore
import Testing

/// A hostile answer (endless, huge) is given up at its limit while it
/// arrives, and a raised stop request ends a stalled transfer at once.
@Suite struct CurlHTTPClientLimitTests {
    let server: FixtureServer
    let client: CurlHTTPClient
    let stop = StopRequest()

    init() throws {
        server = try FixtureServer(lifetime: 30)
        client = try CurlHTTPClient(
            configuration: .init(connectTimeout: .seconds(5), totalTimeout: .seconds(60)), stop: stop)
    }

    @Test(arguments: [
        ("/endless", 1 << 20),
        ("/large?bytes=104857600", 1 << 20),  // refused on its Content-Length
        ("/large?bytes=70000", 65_536),
    ])
    func anAnswerPastItsLimitIsRefusedNamingTheLimitAndTheURL(_ path: String, _ limit: Int) throws {
        let started = ContinuousClock.now
        let request = HTTPRequest(url: server.url(path), maximumResponseBytes: limit)
        let error = try #require(client.failure(of: request))
        #expect(error == .responseTooLarge(url: server.url(path), limit: limit))
        #expect(!error.isTransient)
        #expect(error.requestMayHaveReachedServer)
        // Given up as soon as the limit was passed, not at the 60 s timeout.
        #expect(ContinuousClock.now - started < .seconds(20))
        let message = error.description
        #expect(message.contains(server.url(path)), "\(message)")
        #expect(message.contains("\(limit) bytes"), "\(message)")
        #expect(message.contains("JQC_MAX_RESPONSE_BYTES"), "\(message)")
    }

    @Test func anAnswerWithinItsLimitArrivesWhole() throws {
        let response = try client.send(HTTPRequest(url: server.url("/large?bytes=70000"), maximumResponseBytes: 70_000))
        #expect(response.body.count == 70_000)
    }

    @Test func aStopRequestEndsAStalledTransferWithinASecondOrSo() throws {
        let stop = self.stop
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { stop.raise("SIGTERM") }
        let started = ContinuousClock.now
        let error = try #require(client.failure(of: HTTPRequest(url: server.url("/stall"))))
        #expect(error.caseName == "stopped")
        guard case .stopped(let reason, _) = error else {
            Issue.record("expected a stop, got \(error)")
            return
        }
        #expect(reason == "SIGTERM", "\(error)")
        #expect(error.requestMayHaveReachedServer)
        // The transfer timeout is 60 s; only a transport deaf to the stop waits anything like it.
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func nothingIsSentOnceAStopWasRequested() throws {
        stop.raise("SIGINT")
        let error = try #require(client.failure(of: HTTPRequest(method: .post, url: server.url("/echo"))))
        #expect(error == .stopped(reason: "SIGINT", detail: "POST \(server.url("/echo")): not sent"))
        #expect(client.connectionsOpened == 0)
    }
}
