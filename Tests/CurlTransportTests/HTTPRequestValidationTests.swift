import HTTPCore
import Testing

@Suite struct HTTPRequestValidationTests {
    @Test(arguments: [
        HTTPRequest(url: "http://127.0.0.1:8080/api/v1/facilities"),
        HTTPRequest(url: "HTTPS://api.example.com", headers: ["X-Empty": ""]),
        HTTPRequest(method: .post, url: "https://h/x", body: .multipart([.field("a", "b")])),
    ])
    func acceptable(_ request: HTTPRequest) {
        #expect(throws: Never.self) { try request.validate() }
    }

    @Test(arguments: [
        (HTTPRequest(url: "ftp://h/x"), "invalidURL"),
        (HTTPRequest(url: "h/x"), "invalidURL"),
        (HTTPRequest(url: "https://h/a b"), "invalidURL"),
        (HTTPRequest(url: "https:///x"), "invalidURL"),
        (HTTPRequest(url: "https://h", headers: ["X-A": "1\r\nX-B: 2"]), "invalidHeader"),
        (HTTPRequest(url: "https://h", headers: ["Bad Name": "1"]), "invalidHeader"),
        (HTTPRequest(url: "https://h", headers: ["": "1"]), "invalidHeader"),
        (HTTPRequest(url: "https://h", headers: ["Content-Length": "5"]), "invalidHeader"),
        (
            HTTPRequest(
                method: .post, url: "https://h", headers: ["Content-Type": "multipart/form-data"],
                body: .multipart([.field("a", "b")])), "invalidHeader"
        ),
    ])
    func refused(_ request: HTTPRequest, _ expected: String) {
        #expect(throws: TransportError.self) { try request.validate() }
        do {
            try request.validate()
        } catch {
            #expect(error.caseName == expected)
        }
    }
}
