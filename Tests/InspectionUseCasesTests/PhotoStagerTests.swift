import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `PhotoStager` decodes a photo's base64 as its bytes arrive and judges it
/// exactly as the strict reading judged the whole text (`StrictBase64`, then
/// the re-encoding check): each case's verdict and bytes compared with that
/// reading's, JSON escapes as the file holds them.
@Suite struct PhotoStagerTests {
    let directory = TemporaryDirectory(prefix: "photo-stager")

    /// The string's text as a file holds it (escapes not yet read), and the
    /// text it stands for.
    static let cases: [(held: String, text: String)] = [
        ("", ""), ("AAAA", "AAAA"), ("AA==", "AA=="), ("AAA=", "AAA="), ("AB==", "AB=="), ("AAB=", "AAB="),
        ("A===", "A==="), ("AAAA=", "AAAA="), ("AA=A", "AA=A"), ("A", "A"), ("AAAAA", "AAAAA"),
        ("/+/+", "/+/+"), (#"\/+\/+"#, "/+/+"), (#"\u0041AAA"#, "AAAA"), (#"\u00e9AAA"#, "\u{e9}AAA"),
        (#"AA\nA"#, "AA\nA"), ("aGVsbG8gd29ybGQ=", "aGVsbG8gd29ybGQ="), ("aGVsbG8gd29ybGR=", "aGVsbG8gd29ybGR="),
        ("AAAA AAAA", "AAAA AAAA"), ("AAAA====", "AAAA===="),
    ]

    @Test(arguments: cases)
    func theStagerJudgesAsTheStrictReadingDid(_ held: String, _ text: String) throws {
        let oracle = StrictBase64.decode(text).flatMap { Data($0).base64EncodedString() == text ? $0 : nil }
        var stager = try PhotoStager(directory: directory.path, number: 0)
        for byte in held.utf8 { try stager.take(byte) }
        let staged = try stager.finish()
        defer { unlink(staged.path) }
        #expect(staged.isStandardBase64 == (oracle != nil), "\(held)")
        if let oracle {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: staged.path)))
            #expect(bytes == oracle, "\(held)")
            #expect(staged.size == oracle.count)
            #expect(staged.sha256 == SHA256Hasher().digest(oracle))
        }
    }
}
