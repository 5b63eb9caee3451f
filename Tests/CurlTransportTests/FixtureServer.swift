import CurlTransport
import Foundation
import HTTPCore
import LedgerTestSupport

/// `Fixtures/echo_server.py`, running as a child process for one test
/// (`ScriptServer`: it exits after `lifetime` seconds or when its stdin
/// closes, and is terminated when this value goes away).
final class FixtureServer: @unchecked Sendable {
    enum Mode {
        case http
        case https(TestCertificate)
        /// A port bound without listening: every connection is refused.
        case closedPort
    }

    typealias StartFailure = ScriptServer.StartFailure

    static let script: String = {
        var url = URL(fileURLWithPath: #filePath)
        url.deleteLastPathComponent()
        return url.appendingPathComponent("Fixtures/echo_server.py").path
    }()

    let scheme: String
    private let server: ScriptServer
    var port: Int { server.port }

    init(_ mode: Mode = .http, lifetime: Int = 20) throws {
        var arguments = ["--lifetime", "\(lifetime)"]
        switch mode {
        case .http:
            scheme = "http"
        case .https(let certificate):
            scheme = "https"
            arguments += ["--cert", certificate.certificateFile, "--key", certificate.keyFile]
        case .closedPort:
            scheme = "http"
            arguments.append("--closed-port")
        }
        server = try ScriptServer(script: Self.script, arguments: arguments)
    }

    /// The URL of `path` on this server.
    func url(_ path: String) -> String { "\(scheme)://127.0.0.1:\(port)\(path)" }
}

/// A self-signed certificate for 127.0.0.1, made by the `openssl` CLI for
/// one test, in a directory removed with it.
struct TestCertificate: Sendable {
    let directory = TemporaryDirectory(prefix: "curl-tls")
    var certificateFile: String { directory.appending("cert.pem") }
    var keyFile: String { directory.appending("key.pem") }

    init() throws {
        let result = try ProcessRun.run(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", directory.appending("key.pem"), "-out",
                directory.appending("cert.pem"),
            ])
        guard result.status == 0 else {
            throw FixtureServer.StartFailure(description: "openssl failed: \(result.stderr)")
        }
    }
}

/// What `/echo` reports about the request it received.
struct Echo: Decodable {
    struct Part: Decodable, Equatable {
        var name: String?
        var filename: String?
        var contentType: String?
        var dataBase64: String
        var data: [UInt8] { Array(Data(base64Encoded: dataBase64) ?? Data()) }
    }

    var method: String
    var path: String
    var headers: [[String]]
    var bodyBase64: String
    var parts: [Part]?
    var clientPort: Int

    init(_ response: HTTPResponse) throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        self = try decoder.decode(Echo.self, from: Data(response.body))
    }

    var body: [UInt8] { Array(Data(base64Encoded: bodyBase64) ?? Data()) }

    /// The first value of a header as the server received it.
    func header(_ name: String) -> String? {
        headers.first { $0[0].lowercased() == name.lowercased() }?[1]
    }
}

extension CurlHTTPClient {
    /// The error `send` throws, or nil when it returns a response.
    func failure(of request: HTTPRequest) -> TransportError? {
        do {
            _ = try send(request)
            return nil
        } catch {
            return error
        }
    }
}

extension TransportError {
    /// The case's name, to compare cases regardless of their details.
    var caseName: String {
        switch self {
        case .couldNotConnect: "couldNotConnect"
        case .timedOut: "timedOut"
        case .connectionLost: "connectionLost"
        case .tls: "tls"
        case .redirectRefused: "redirectRefused"
        case .invalidURL: "invalidURL"
        case .invalidHeader: "invalidHeader"
        case .responseTooLarge: "responseTooLarge"
        case .stopped: "stopped"
        case .other: "other"
        }
    }
}
