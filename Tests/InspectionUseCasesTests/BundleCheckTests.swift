import Foundation
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The bundle check of `jqc verify --bundle` on inputs that need no ledger;
/// `Tools/tests/test_proof_bundles.py` runs jqc's own bundles through it and
/// both bundle tools, requiring the same lines.
@Suite struct BundleCheckTests {
    static let cases: [(input: String, status: Int32, line: String)] = [
        ("", 2, "UNREADABLE: the file is not well-formed JSON"),
        ("[]", 2, "UNREADABLE: the bundle is not a JSON object"),
        ("{\"format\": 1}", 2, "UNREADABLE: format must be a string"),
        (
            "{\"format\": \"jqc-proof-bundle/3\"}", 2,
            "UNREADABLE: the bundle's format is \"jqc-proof-bundle/3\", not jqc-proof-bundle/1 or jqc-proof-bundle/2"
        ),
        ("{\"a\": 1, \"A\": 2}", 2, "UNREADABLE: member \"A\" differs from \"a\" only in case in the bundle"),
        ("{\"a\": 1, \"a\": 2}", 2, "UNREADABLE: member \"a\" appears twice in the bundle"),
        ("{\"\\u0007\\ud800\": 1}", 2, "UNREADABLE: unknown member \"\\u{7}\\u{fffd}\" in the bundle"),
        ("{\"format\": \"jqc-proof-bundle/1\"}", 2, "UNREADABLE: member \"inspection\" is missing from the bundle"),
        (
            String(repeating: "[", count: 65) + String(repeating: "]", count: 65), 2,
            "UNREADABLE: the bundle nests deeper than 64 levels"
        ),
    ]

    @Test(arguments: cases)
    func anUnreadableBundleIsNamedAsTheToolsNameIt(input: String, status: Int32, line: String) throws {
        let directory = TemporaryDirectory(prefix: "bundle-check")
        let path = directory.appending("bundle.json")
        try Data(input.utf8).write(to: URL(fileURLWithPath: path))
        let outcome = BundleCheck.check(file: path, key: nil, trustedFile: nil)
        #expect(outcome.status == status)
        #expect(outcome.lines == [line])
    }

    @Test(arguments: [
        ("jqc/x+0000+AAAA", "UNREADABLE: --key is not an Ed25519 verifier key (<name>+<key id>+<base64 key>)"),
        (
            "jqc/x+00000000+AT4AbsBwQTgbSVkhPOnfDtjv5LM8O+a8G+NoWs+7gO+V",
            "UNREADABLE: --key has a key id that does not match the key"
        ),
    ])
    func aMalformedPinnedKeyIsRefusedBeforeTheFileIsRead(key: String, line: String) {
        let outcome = BundleCheck.check(file: "/nonexistent/bundle.json", key: key, trustedFile: nil)
        #expect(outcome.status == 2)
        #expect(outcome.lines == [line])
    }

    @Test(arguments: ["QQ==", "QUI=", "QUJD", ""])
    func standardBase64IsRead(text: String) {
        #expect(StrictBase64.decode(text) == Data(base64Encoded: text).map { [UInt8]($0) })
    }

    @Test(arguments: ["QQ", "QQ=", "Q", "QU JD", "QUJD===", "QQ==QQ==", "é"])
    func base64WithoutItsPaddingOrWithOtherCharactersIsRefused(text: String) {
        #expect(StrictBase64.decode(text) == nil)
    }
}
