import Foundation
import Testing

@testable import LedgerCore

/// The byte forms a listing of the log writes are exactly the String forms.
@Suite struct TextBytesTests {
    @Test(
        arguments: [
            0, 1, -1, 951_782_400_000_000, 1_795_000_000_123_456, 4_102_444_799_999_999,
            // Before year 0 and after year 9999: the String form is used as is.
            -62_167_219_200_000_001, 253_402_300_800_000_000, Int64.min, Int64.max,
        ] as [Int64])
    func timestampBytesAreTheISO8601Text(micros: Int64) {
        let time = Timestamp(microsecondsSinceEpoch: micros)
        var bytes: [UInt8] = Array("x".utf8)
        time.appendISO8601(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x" + time.iso8601)
    }

    @Test(arguments: [
        "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        "0190C3A5-7B2E-7F01-9A3B-C4D5E6F70819",
    ])
    func uuidBytesAreTheLowercasedText(text: String) throws {
        let id = try #require(UUID(uuidString: text))
        var full: [UInt8] = []
        id.appendLowercased(to: &full)
        #expect(String(decoding: full, as: UTF8.self) == id.lowercased)
        var short: [UInt8] = []
        id.appendShortLowercased(to: &short)
        #expect(String(decoding: short, as: UTF8.self) == String(id.lowercased.prefix(8)))
    }

    @Test(arguments: [0, 1, -1, 9, 10, -10, 99, 1_000_000, 1_796_536_854_006_118, Int64.min, Int64.max] as [Int64])
    func decimalBytesAreTheStringForm(value: Int64) {
        var bytes: [UInt8] = Array("x".utf8)
        appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x" + String(value))
        if value >= 0 {
            var unsigned: [UInt8] = []
            appendDecimal(UInt64(value) * 2 + 1, to: &unsigned)
            #expect(String(decoding: unsigned, as: UTF8.self) == String(UInt64(value) * 2 + 1))
        }
    }

    @Test func theLargestUnsignedIsWhole() {
        var bytes: [UInt8] = []
        appendDecimal(UInt64.max, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "18446744073709551615")
    }

    /// The printable-ASCII shortcut decides exactly as the scalar walk.
    @Test(arguments: [
        "Dana Inspector", "", "tab\there", "line\nbreak", "cr\rhere", "esc\u{1B}[8m", "del\u{7F}", "é accent",
        "bidi \u{202E}", "~ and space ",
    ])
    func asciiShortcutAgreesWithTheScalarWalk(text: String) {
        let escapes = text.unicodeScalars.contains(where: TerminalText.needsEscape)
        #expect(TerminalText.isPrintableASCII(text, allowingLineBreaks: true) ? !escapes : true)
        #expect(TerminalText.safe(text) == (escapes ? TerminalText.safe(text) : text))
        if TerminalText.isPrintableASCII(text, allowingLineBreaks: false) {
            #expect(!text.contains("\n") && !text.contains("\t") && !escapes)
        }
    }
}
