import Foundation
import Testing

@testable import LedgerCore

/// `CBORReader.matchText` compares a short text where it lies instead of
/// skipping it as an item and calling `memcmp`: it must answer, advance and
/// fail exactly as reading the text and comparing it would.
@Suite struct MatchTextTests {
    static let candidates = ["field_id", "field_type", "value", "", "a23456789012345678901_x"].map { Array($0.utf8) }

    /// The bytes, the answer (an index, nil for none, or the error's
    /// description) and where the reader stands after a match or a miss.
    static let cases: [(bytes: [UInt8], answer: String, end: Int?)] = [
        (CBORValue.text("field_id").encoded(), "0", 9),
        (CBORValue.text("field_type").encoded(), "1", 11),
        (CBORValue.text("value").encoded(), "2", 6),
        (CBORValue.text("").encoded(), "3", 1),
        (CBORValue.text("a23456789012345678901_x").encoded(), "4", 24),
        // Same lengths, one byte off: the first, a middle and the last byte.
        (CBORValue.text("gield_id").encoded(), "nil", 9),
        (CBORValue.text("field_ie").encoded(), "nil", 9),
        (CBORValue.text("field_tyqe").encoded(), "nil", 11),
        (CBORValue.text("valuf").encoded(), "nil", 6),
        (CBORValue.text("other").encoded(), "nil", 6),
        // 24 bytes and more are skipped, never matched.
        (CBORValue.text(String(repeating: "v", count: 24)).encoded(), "nil", 26),
        (CBORValue.text(String(repeating: "é", count: 200)).encoded(), "nil", 403),
        // Followed by more bytes: only the text is read.
        (CBORValue.text("value").encoded() + [0x01, 0x02], "2", 6),
        ([0x65, 0x76, 0x61], "declares", nil),
        ([0x78, 0x30, 0x61], "declares", nil),
        ([], "ends early", nil),
        ([0x45, 0x76, 0x61, 0x6C, 0x75, 0x65], "text string", nil),
        (CBORValue.unsigned(5).encoded(), "text string", nil),
    ]

    @Test(arguments: cases)
    func answersAsReadingTheTextWould(bytes: [UInt8], answer: String, end: Int?) {
        var reader = CBORReader(bytes)
        do {
            let index = try reader.matchText(Self.candidates)
            #expect(index.map(String.init) ?? "nil" == answer)
            #expect(reader.offset == end)
            // The slow way agrees: read the text, look it up.
            var slow = CBORReader(bytes)
            let text = try slow.readText()
            #expect(Self.candidates.firstIndex(of: Array(text.utf8)) == (text.utf8.count < 24 ? index : nil))
            #expect(slow.offset == reader.offset)
        } catch {
            #expect(end == nil)
            #expect("\(error)".contains(answer), "\(error)")
        }
    }
}
