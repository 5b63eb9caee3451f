import HTTPCore
import Testing

@Suite struct RedactionTests {
    @Test func aRequestPrintsNoCredentialHoweverItIsPrinted() {
        let request = HTTPRequest(
            method: .post, url: "https://dana:pa55word@api.example.com/api/v1/auth/login?access_token=tok-in-query&x=1",
            headers: [
                "Authorization": "Bearer tok-in-header", "Cookie": "sid=tok-in-cookie", "X-Api-Key": "tok-in-key",
                "Idempotency-Key": "idem-1",
            ],
            body: .json(Array(#"{"username":"dana","password":"pw-in-body"}"#.utf8)))
        var dumped = ""
        dump(request, to: &dumped)
        let printed = [request.description, String(reflecting: request), "\(request)", dumped]
        for text in printed {
            for secret in ["pa55word", "tok-in-query", "tok-in-header", "tok-in-cookie", "tok-in-key", "pw-in-body"] {
                #expect(!text.contains(secret), "\(secret) appears in: \(text)")
            }
        }
        #expect(request.description.contains("Authorization: Bearer <redacted>"))
        #expect(request.description.contains("Idempotency-Key: idem-1"))
        #expect(request.description.contains("dana:<redacted>@api.example.com"))
        #expect(request.description.contains("(\(request.body.byteCount) bytes of application/json)"))
    }

    @Test func aResponsePrintsNeitherItsBodyNorItsCookies() {
        let response = HTTPResponse(
            status: 200, headers: ["Set-Cookie": "sid=cookie-secret", "Content-Type": "application/json"],
            body: Array(#"{"access_token":"body-secret"}"#.utf8))
        var dumped = ""
        dump(response, to: &dumped)
        for text in [response.description, dumped] {
            #expect(!text.contains("cookie-secret"))
            #expect(!text.contains("body-secret"))
        }
        #expect(response.description.contains("Content-Type: application/json"))
    }

    @Test(arguments: [
        ("Authorization", "Bearer abc.def", "Bearer <redacted>"),
        ("authorization", "Basic ZGFuYTpwdw==", "Basic <redacted>"),
        ("Authorization", "abc", "<redacted>"),
        ("Proxy-Authorization", "Digest x=y", "Digest <redacted>"),
        ("Cookie", "a=b; c=d", "<redacted>"),
        ("X-Refresh-Token", "r-1", "<redacted>"),
        ("Accept", "application/json", "application/json"),
        ("Idempotency-Key", "k-1", "k-1"),
    ])
    func headerValues(_ name: String, _ value: String, _ printed: String) {
        #expect(Redaction.headerValue(value, name: name) == printed)
    }

    @Test(arguments: [
        ("https://api.example.com/api/v1/x", "https://api.example.com/api/v1/x"),
        ("https://u:p@h:8443/x", "https://u:<redacted>@h:8443/x"),
        ("https://tok@h/x", "https://<redacted>@h/x"),
        ("http://h/x?token=t&page=2#frag", "http://h/x?token=<redacted>&page=2#frag"),
        (
            "http://h?refresh_token=t&password=p&limit=30",
            "http://h?refresh_token=<redacted>&password=<redacted>&limit=30"
        ),
        ("/relative?api_key=k", "/relative?api_key=<redacted>"),
    ])
    func urls(_ url: String, _ printed: String) {
        #expect(Redaction.url(url) == printed)
    }

    @Test(arguments: [
        (
            "Failed to connect to 127.0.0.1 port 1: Connection refused",
            "Failed to connect to 127.0.0.1 port 1: Connection refused"
        ),
        ("header was Bearer abc.def.ghi", "header was Bearer <redacted>"),
        (#"body {"password": "pw", "user": "dana"}"#, #"body {"password": "<redacted>", "user": "dana"}"#),
        ("refresh_token=abc&x=1", "refresh_token=<redacted>&x=1"),
        ("see https://u:pw@h/x?access_token=t", "see https://u:<redacted>@h/x?access_token=<redacted>"),
        // A server's own words are not garbled: redaction is by value, not by the word "token".
        ("refresh token already used", "refresh token already used"),
        ("invalid token: the session expired", "invalid token: the session expired"),
        ("token expired", "token expired"),
    ])
    func freeText(_ text: String, _ printed: String) {
        #expect(Redaction.text(text) == printed)
    }

    @Test func aSecretThisProcessHoldsIsHiddenWhereverItAppears() {
        let secret = "tok-\(UInt64.random(in: 1_000_000...9_999_999))"
        #expect(Redaction.text("server said: \(secret) is unknown") == "server said: \(secret) is unknown")
        Redaction.hide(secret, "abc")
        #expect(Redaction.text("server said: \(secret) is unknown") == "server said: <redacted> is unknown")
        #expect(Redaction.text("no abc here") == "no abc here", "values too short to be secrets are not registered")
    }
}
