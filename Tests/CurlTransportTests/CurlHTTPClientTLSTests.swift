import CurlTransport
import HTTPCore
import Testing

/// HTTPS against a server with a self-signed certificate made for the test.
@Suite struct CurlHTTPClientTLSTests {
    let certificate: TestCertificate
    let server: FixtureServer

    init() throws {
        certificate = try TestCertificate()
        server = try FixtureServer(.https(certificate))
    }

    @Test func anUntrustedCertificateIsRefused() throws {
        let client = try CurlHTTPClient(configuration: .init(connectTimeout: .seconds(5), totalTimeout: .seconds(10)))
        let error = try #require(client.failure(of: HTTPRequest(url: server.url("/echo"))))
        #expect(error.caseName == "tls")
        #expect(!error.isTransient)
        #expect(!error.requestMayHaveReachedServer)
    }

    @Test func theCertificateAsCertificateAuthorityIsTrusted() throws {
        let client = try CurlHTTPClient(
            configuration: .init(
                connectTimeout: .seconds(5), totalTimeout: .seconds(10),
                certificateAuthorityFile: certificate.certificateFile))
        let first = try client.send(HTTPRequest(method: .post, url: server.url("/echo"), body: .json(Array("{}".utf8))))
        let second = try client.send(HTTPRequest(url: server.url("/echo")))
        #expect(first.status == 200)
        #expect(try Echo(second).method == "GET")
        #expect(client.connectionsOpened == 1)
    }

    @Test func aMissingCertificateAuthorityFileIsATLSError() throws {
        let client = try CurlHTTPClient(
            configuration: .init(certificateAuthorityFile: certificate.directory.appending("missing.pem")))
        let error = try #require(client.failure(of: HTTPRequest(url: server.url("/echo"))))
        #expect(error.caseName == "tls")
    }
}
