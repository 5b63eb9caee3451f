import CurlTransport
import Foundation
import HTTPCore
import Synchronization
import Testing

/// Round trips against the fixture server over plain HTTP: one server and
/// one client per test.
@Suite struct CurlHTTPClientTests {
    let server: FixtureServer
    let client: CurlHTTPClient

    init() throws {
        server = try FixtureServer()
        client = try CurlHTTPClient(
            configuration: .init(connectTimeout: .seconds(5), totalTimeout: .seconds(10)))
    }

    @Test func getCarriesHeadersInOrderAndCapturesResponseHeaders() throws {
        let request = HTTPRequest(
            url: server.url("/echo"),
            headers: ["X-First": "1", "Accept": "application/json", "X-Second": "2", "Idempotency-Key": "k-1"])
        let response = try client.send(request)
        #expect(response.status == 200)
        #expect(response.headers["x-request-method"] == "GET")
        #expect(response.headers["Content-Type"] == "application/json")

        let echo = try Echo(response)
        #expect(echo.method == "GET")
        #expect(echo.header("User-Agent") == "jqc/0.1")
        #expect(echo.header("Expect") == nil)
        let sent = echo.headers.map { $0[0] }.filter {
            ["X-First", "Accept", "X-Second", "Idempotency-Key"].contains($0)
        }
        #expect(sent == ["X-First", "Accept", "X-Second", "Idempotency-Key"])
    }

    /// A method, a body, and the content type the server must see.
    struct BodyCase: Sendable, CustomTestStringConvertible {
        var method: HTTPMethod
        var body: HTTPBody
        var expectedContentType: String?
        var testDescription: String { "\(method) \(body)" }
    }

    static let bodyCases: [BodyCase] = [
        BodyCase(method: .get, body: .empty, expectedContentType: nil),
        BodyCase(
            method: .post, body: .json(Array(#"{"client_id":"c-1","severity":"high"}"#.utf8)),
            expectedContentType: "application/json"),
        BodyCase(method: .put, body: .json(Array(#"{"n":1}"#.utf8)), expectedContentType: "application/json"),
        BodyCase(method: .patch, body: .json(Array(#"{"n":2}"#.utf8)), expectedContentType: "application/json"),
        BodyCase(method: .delete, body: .empty, expectedContentType: nil),
        BodyCase(method: .post, body: .empty, expectedContentType: nil),
        BodyCase(
            method: .post,
            body: .bytes((0...255).map { UInt8($0) } + [0, 0, 13, 10], contentType: "application/octet-stream"),
            expectedContentType: "application/octet-stream"),
    ]

    @Test(arguments: bodyCases)
    func bodyArrivesByteForByte(_ bodyCase: BodyCase) throws {
        let response = try client.send(
            HTTPRequest(method: bodyCase.method, url: server.url("/echo"), body: bodyCase.body))
        let echo = try Echo(response)
        #expect(echo.method == bodyCase.method.rawValue)
        #expect(echo.header("Content-Type") == bodyCase.expectedContentType)
        #expect(echo.header("Expect") == nil)
        switch bodyCase.body {
        case .bytes(let bytes, _):
            #expect(echo.body == bytes)
            #expect(echo.header("Content-Length") == "\(bytes.count)")
        case .empty:
            #expect(echo.body.isEmpty)
            if [.post, .put, .patch].contains(bodyCase.method) { #expect(echo.header("Content-Length") == "0") }
        case .multipart:
            Issue.record("multipart has its own test")
        }
    }

    @Test func multipartUploadArrivesIntact() throws {
        // Every byte value, and the sequences a careless parser would split on.
        let photo = (0..<4096).map { UInt8($0 % 256) } + Array("\r\n--\r\n\r\n".utf8)
        let parts: [MultipartPart] = [
            .file("file", filename: "photo 1.jpg", contentType: "image/jpeg", data: photo),
            .field("entity_type", "inspection"),
            .field("field_id", "f-7"),
        ]
        let response = try client.send(
            HTTPRequest(method: .post, url: server.url("/echo"), body: .multipart(parts)))
        let echo = try Echo(response)
        #expect(echo.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        let received = try #require(echo.parts)
        #expect(received.count == 3)
        #expect(received.map(\.name) == ["file", "entity_type", "field_id"])
        #expect(received[0].filename == "photo 1.jpg")
        #expect(received[0].contentType == "image/jpeg")
        #expect(received[0].data == photo)
        #expect(received[1].filename == nil)
        #expect(received[1].data == Array("inspection".utf8))
        #expect(received[2].data == Array("f-7".utf8))
    }

    @Test func headGetsHeadersWithoutWaitingForABody() throws {
        let response = try client.send(HTTPRequest(method: .head, url: server.url("/echo")))
        #expect(response.status == 200)
        #expect(response.headers["X-Request-Method"] == "HEAD")
        #expect(response.body.isEmpty)
    }

    @Test(arguments: [200, 201, 400, 401, 404, 409, 422, 429, 500, 503])
    func everyStatusIsAResponse(_ status: Int) throws {
        let response = try client.send(
            HTTPRequest(method: .post, url: server.url("/status/\(status)"), body: .json([])))
        #expect(response.status == status)
        #expect(response.isSuccess == (200..<300).contains(status))
    }

    @Test func consecutiveRequestsReuseOneConnection() throws {
        let requests = [
            HTTPRequest(url: server.url("/echo")),
            HTTPRequest(method: .post, url: server.url("/echo"), body: .json(Array("{}".utf8))),
            HTTPRequest(method: .post, url: server.url("/echo"), body: .multipart([.field("a", "b")])),
            HTTPRequest(url: server.url("/status/404")),
            HTTPRequest(method: .delete, url: server.url("/echo")),
            HTTPRequest(url: server.url("/echo")),
        ]
        var ports: Set<Int> = []
        for request in requests {
            let response = try client.send(request)
            if response.status == 200 { ports.insert(try Echo(response).clientPort) }
        }
        #expect(client.connectionsOpened == 1)
        #expect(ports.count == 1)
    }

    @Test func concurrentSendsTakeTurnsOnOneConnection() throws {
        let statuses = StatusBox()
        let client = self.client
        let url = server.url("/echo")
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            do {
                let response = try client.send(
                    HTTPRequest(method: .post, url: url, body: .json(Array("{\"n\":\(index)}".utf8))))
                statuses.record(response.status)
            } catch {
                statuses.record(-1)
            }
        }
        #expect(statuses.all == Array(repeating: 200, count: 8))
        #expect(client.connectionsOpened == 1)
    }

    @Test func aPoolOfHandlesKeepsSeveralConnectionsAliveAndReusesThem() throws {
        let pooled = try CurlHTTPClient(
            configuration: .init(connectTimeout: .seconds(5), totalTimeout: .seconds(10)), connections: 4)
        let statuses = StatusBox()
        let url = server.url("/slow?ms=100")
        // Four rounds of four at once, on threads of their own.
        for _ in 0..<4 {
            let done = DispatchSemaphore(value: 0)
            for _ in 0..<4 {
                Thread {
                    defer { done.signal() }
                    do {
                        statuses.record(try pooled.send(HTTPRequest(url: url)).status)
                    } catch {
                        statuses.record(-1)
                    }
                }.start()
            }
            for _ in 0..<4 { done.wait() }
        }
        #expect(statuses.all == Array(repeating: 200, count: 16))
        // However the requests met the handles, no more than one connection per handle, each kept alive.
        #expect((1...4).contains(pooled.connectionsOpened))
        #expect(pooled.connections == 4)
    }

    @Test func aClientStillWorksAfterAFailure() throws {
        let impatient = try CurlHTTPClient(configuration: .init(totalTimeout: .milliseconds(200)))
        #expect(impatient.failure(of: HTTPRequest(url: server.url("/slow?ms=2000")))?.caseName == "timedOut")
        #expect(impatient.failure(of: HTTPRequest(url: server.url("/drop")))?.caseName == "connectionLost")
        #expect(try impatient.send(HTTPRequest(url: server.url("/echo"))).status == 200)
        // Neither failed connection could be reused, and both were counted.
        #expect(impatient.connectionsOpened == 3)
    }
}

/// Statuses recorded from several threads.
private final class StatusBox: Sendable {
    private let statuses = Mutex<[Int]>([])

    func record(_ status: Int) { statuses.withLock { $0.append(status) } }

    var all: [Int] { statuses.withLock { $0 } }
}
