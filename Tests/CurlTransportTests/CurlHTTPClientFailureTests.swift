import CurlTransport
import HTTPCore
import Testing

/// Requests that get no usable response, and what each error tells the caller.
@Suite struct CurlHTTPClientFailureTests {
    let server: FixtureServer
    let client: CurlHTTPClient

    init() throws {
        server = try FixtureServer()
        client = try CurlHTTPClient(
            configuration: .init(connectTimeout: .seconds(5), totalTimeout: .milliseconds(200)))
    }

    @Test func refusedConnectionIsCouldNotConnectAndTransient() throws {
        let closed = try FixtureServer(.closedPort)
        let error = try #require(
            client.failure(of: HTTPRequest(method: .post, url: closed.url("/echo"), body: .json([]))))
        #expect(error.caseName == "couldNotConnect")
        #expect(error.isTransient)
        #expect(!error.requestMayHaveReachedServer)
    }

    @Test func totalTimeoutTripsOnASlowServer() throws {
        let error = try #require(client.failure(of: HTTPRequest(url: server.url("/slow?ms=2000"))))
        #expect(error.caseName == "timedOut")
        #expect(error.isTransient)
        #expect(error.requestMayHaveReachedServer)
    }

    @Test func droppedConnectionIsConnectionLost() throws {
        let error = try #require(
            client.failure(of: HTTPRequest(method: .post, url: server.url("/drop"), body: .json(Array("{}".utf8)))))
        #expect(error.caseName == "connectionLost")
        #expect(error.isTransient)
        #expect(error.requestMayHaveReachedServer)
    }

    @Test(arguments: [HTTPMethod.get, .post, .put, .patch, .delete])
    func redirectsAreRefusedNotFollowed(_ method: HTTPMethod) throws {
        let body: HTTPBody = method == .get ? .empty : .json(Array("{}".utf8))
        let error = try #require(
            client.failure(of: HTTPRequest(method: method, url: server.url("/redirect"), body: body)))
        #expect(error == .redirectRefused(status: 302, location: server.url("/echo")))
        #expect(!error.isTransient)
    }

    /// Every way to fail, with credentials in the header, the user info and the query.
    @Test(arguments: ["/drop", "/slow?ms=2000", "/redirect", "closed"])
    func errorsNeverShowCredentials(_ path: String) throws {
        let token = "eyJhbGciOiJIUzI1NiJ9.secret-payload.sig"
        let closed = try FixtureServer(.closedPort)
        let target = path == "closed" ? closed.url("/echo") : server.url(path)
        let url =
            target.replacing("://", with: "://inspector:hunter2@") + (path.contains("?") ? "&" : "?")
            + "access_token=query-secret"
        let request = HTTPRequest(
            method: .post, url: url, headers: ["Authorization": "Bearer \(token)", "Cookie": "session=cookie-secret"],
            body: .json(Array(#"{"password":"body-secret"}"#.utf8)))
        let error = try #require(client.failure(of: request))
        for text in [String(describing: error), String(reflecting: error), "\(request)", String(reflecting: request)] {
            for secret in [token, "hunter2", "query-secret", "cookie-secret", "body-secret"] {
                #expect(!text.contains(secret), "\(secret) appears in: \(text)")
            }
        }
    }

    @Test(arguments: ["ftp://127.0.0.1/file", "file:///etc/passwd", "not a url", "http://", "http://[::1/echo"])
    func unusableURLsAreInvalidURL(_ url: String) throws {
        let error = try #require(client.failure(of: HTTPRequest(url: url)))
        #expect(error.caseName == "invalidURL")
        #expect(!error.isTransient)
    }

    @Test func aLineBreakInAHeaderIsRefusedBeforeSending() throws {
        let request = HTTPRequest(url: server.url("/echo"), headers: ["X-Note": "a\r\nX-Injected: 1"])
        let error = try #require(client.failure(of: request))
        #expect(error.caseName == "invalidHeader")
        #expect(client.connectionsOpened == 0)
    }
}
