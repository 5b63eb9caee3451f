import Foundation
import Testing

@testable import SyncWorker

/// The device's name in the witness's query string, percent-encoded by hand
/// (the jqc binary links only FoundationEssentials), held to Foundation's
/// encoding with RFC 3986's unreserved characters allowed.
@Suite struct WitnessQueryTests {
    @Test(arguments: [
        "", "jqc-device-0a1b2c3d", "Dana's iPad", "a&b=c", "x/y?z#w", "100%", "~._-", "tab\there", "é ü", "日本",
        "emoji 🙂", "+plus+", "\u{0}",
    ])
    func aNameIsEncodedAsFoundationEncodesIt(name: String) throws {
        var unreserved = CharacterSet(charactersIn: "-._~")
        unreserved.insert(charactersIn: "a"..."z")
        unreserved.insert(charactersIn: "A"..."Z")
        unreserved.insert(charactersIn: "0"..."9")
        let foundation = try #require(name.addingPercentEncoding(withAllowedCharacters: unreserved))
        #expect(CheckpointWitness.query(name) == foundation)
    }
}
