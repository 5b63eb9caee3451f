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

/// Free text from a hostile server: redaction takes time in proportion to
/// the text (never a backtracking pattern), cuts what is too long, and still
/// hides every secret.
@Suite struct LongTextRedactionTests {
    /// Inputs that made the old pattern backtrack (runs of word characters,
    /// of credential names, of scheme characters, of separators), 50 KB each.
    static let hostileTexts: [(String, String)] = [
        ("word characters", String(repeating: "a", count: 50_000)),
        ("credential names", String(repeating: "token", count: 10_000)),
        ("names without values", String(repeating: "password=", count: 6_000)),
        ("JSON pairs without values", String(repeating: #""secret": ""#, count: 4_000)),
        ("scheme characters", String(repeating: "a+.-", count: 12_500) + "://"),
        ("URLs", String(repeating: "https://u:p@h/?token=x&", count: 2_200)),
        ("schemes without values", String(repeating: "Bearer ", count: 7_000)),
        ("dashes", String(repeating: "-", count: 50_000) + "auth=x"),
        ("non-ASCII", String(repeating: "é", count: 25_000)),
    ]

    @Test(arguments: hostileTexts)
    func aHugeTextIsRedactedAtOnceAndCut(_ name: String, _ text: String) {
        let started = ContinuousClock.now
        let printed = Redaction.text(text)
        // A generous bound: the old pattern took minutes on these; a hang never meets it.
        #expect(ContinuousClock.now - started < .seconds(5), "\(name)")
        #expect(printed.unicodeScalars.count <= Redaction.keptLength * 3 / 2 + 45, "\(name): \(printed.count)")
        #expect(printed.hasSuffix("more characters not shown)"), "\(name): \(printed.suffix(80))")
    }

    @Test func aLongMessageIsCutSayingHowMuchWasLeftOut() {
        let text = String(repeating: "x", count: 50_000)
        #expect(
            Redaction.text(text)
                == String(repeating: "x", count: Redaction.keptLength) + "… (49600 more characters not shown)")
        #expect(Redaction.text("short", keeping: 5) == "short")
        #expect(Redaction.text("shorter", keeping: 5) == "short… (2 more characters not shown)")
        // Scalars, not bytes: a cut never splits a character's encoding.
        #expect(Redaction.text("ééé", keeping: 2) == "éé… (1 more characters not shown)")
    }

    @Test func aCredentialInAHugeTextIsStillHidden() {
        let filler = String(repeating: "x ", count: 25_000)
        let cases = [
            "Authorization: Bearer abc.def.ghi " + filler,
            #"{"password": "pw-1234", "user": "dana"} "# + filler,
            "see https://u:pw-1234@h/x?access_token=t-5678 " + filler,
            "refresh_token=t-5678&x=1 " + filler,
        ]
        for text in cases {
            let printed = Redaction.text(text)
            for secret in ["abc.def.ghi", "pw-1234", "t-5678"] {
                #expect(!printed.contains(secret), "\(secret) in \(printed.prefix(100))")
            }
            #expect(printed.contains(Redaction.placeholder))
        }
    }

    /// Copies of a secret, then a piece of it, past the cut: the kept part
    /// never shows any of it, however much the placeholders shortened the
    /// text before it, nor a piece of it read only partly at the window's end.
    @Test(arguments: [0, 1, 7, 399])
    func aSecretNearTheCutNeverShowsAPiece(_ filler: Int) {
        let secret = "sec-" + (0..<36).map { _ in String(Int.random(in: 0...9)) }.joined()
        Redaction.hide(secret)
        let lead = String(repeating: "x", count: filler)
        for copies in [1, 10, 12, 40, 100] {
            // Shorter, the piece is within the kept part, where it is only text.
            for piece in [8, 20, secret.count - 1] where filler + copies * secret.count >= Redaction.keptLength {
                let text = lead + String(repeating: secret, count: copies) + secret.prefix(piece)
                let printed = Redaction.text(text)
                #expect(!printed.contains(secret.prefix(8)), "\(copies) copies, \(piece): \(printed)")
                #expect(printed.hasPrefix(lead))
            }
        }
    }

    @Test func aSecretStraddlingTheCutIsReplacedWhole() {
        let secret = "straddle-" + String(UInt64.random(in: 1_000_000...9_999_999))
        Redaction.hide(secret)
        let lead = String(repeating: "y", count: Redaction.keptLength - 4)
        let printed = Redaction.text(lead + secret + String(repeating: "z", count: 100))
        #expect(printed == lead + Redaction.placeholder + "… (100 more characters not shown)")
    }

    /// A secret the server chose to be long and self-similar, in a text made
    /// of it: still one scan per secret.
    @Test func aLongSelfSimilarSecretTakesNoLongerToFind() {
        let secret = String(repeating: "a", count: 4_000) + "b"
        Redaction.hide(secret)
        let started = ContinuousClock.now
        let printed = Redaction.text(String(repeating: "a", count: 60_000) + "b")
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(!printed.contains("b"))
    }
}
