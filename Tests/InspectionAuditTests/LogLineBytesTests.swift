import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore
import Testing

/// The parts of a `jqc log` line written as bytes are the bytes of their
/// `String` forms: a field answer's words (`EventWording.describe`) and the
/// check that keeps a line as it is (`TerminalText.singleLine`).
@Suite struct LogLineBytesTests {
    /// Every scalar up to U+2FFF (the controls, the C1 range, U+061C, the
    /// bidi marks, isolates and separators among them) and a few beyond:
    /// decided on the bytes exactly as `singleLine` decides on the scalars.
    @Test func theByteCheckAgreesWithSingleLineForEveryScalar() {
        let beyond: [UInt32] = [0x3000, 0xD7FF, 0xE000, 0xFEFF, 0xFFFD, 0x1_F9EF, 0x10_FFFF]
        var disagreements: [String] = []
        for value in Array(0...0x2FFF) + beyond {
            guard let scalar = Unicode.Scalar(value) else { continue }
            for text in ["\(Character(scalar))", "set Notes (9) = \"a\(Character(scalar))b\""] {
                let asIs = TerminalText.singleLine(text) == text
                if LogFilter.isShownAsIs(Array(text.utf8)) != asIs {
                    disagreements.append(String(value, radix: 16))
                }
            }
        }
        #expect(disagreements.isEmpty, "decided otherwise than singleLine for U+\(disagreements.prefix(20))")
    }

    @Test(arguments: ["Dana Inspector", "", "Mallory\u{1B}[2K\rDana", "tab\there", "é — → …", "bidi \u{202E}"])
    func aSingleLineIsAppendedAsSingleLineMakesIt(text: String) {
        var bytes: [UInt8] = Array("x".utf8)
        LogFilter.appendSingleLine(text, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x" + TerminalText.singleLine(text))
    }

    /// Text answers a person typed, hostile ones included.
    static let texts = [
        "plain", "", "quote \" and backslash \\", "line\nbreak\r\ttab", "esc \u{1B}[8m nul \u{0}", "del \u{7F}",
        "é, 漢字, 🧯", "bidi \u{202E}override", "c1 \u{85}", "mark \u{61C}\u{200F}", "isolate \u{2066}x\u{2069}",
        "— (unanswered)", "a → b…",
    ]

    /// A value of every kind, and the text answers above as text and as a choice.
    static func values() throws -> [FieldValue] {
        var values: [FieldValue] = [
            .rating(0), .rating(4), .rating(-3), .bool(true), .bool(false), .passFail(.pass), .passFail(.unanswered),
            .number(try ExactDecimal(parsing: "-12.50")), .date(try CalendarDate(year: 2026, month: 11, day: 29)),
            .options(["Towels", "Soap \"x\""]), .table([["Soap", "4", "no"], ["a\nb"]]), .photo(AuditSamples.photo(2)),
        ]
        values += texts.flatMap { [FieldValue.text($0), .option($0)] }
        return values
    }

    /// The ways a listing names a field: through names worded before, the
    /// template, or neither; a field the template has and one it lacks.
    @Test(arguments: ["9", "77", "2\u{1B}"])
    func aFieldAnswerIsTheBytesOfItsWords(field: String) throws {
        let names = EventWording.FieldNames(AuditSamples.template)
        let events =
            try Self.values().map {
                InspectionEvent.fieldSet(FieldAnswer(fieldID: FieldID(rawValue: field), fieldType: .text, value: $0))
            }
            + [.fieldCleared(FieldCleared(fieldID: FieldID(rawValue: field)))]
        for event in events {
            for (template, named) in [(AuditSamples.template, names), (AuditSamples.template, nil), (nil, nil)] {
                var bytes: [UInt8] = Array("x".utf8)
                let written = EventWording.appendDescription(of: event, template: template, names: named, to: &bytes)
                #expect(written)
                let words = EventWording.describe(
                    event, stream: AuditSamples.inspection, template: template, names: named)
                #expect(String(decoding: bytes, as: UTF8.self) == "x" + words, "\(event)")
            }
        }
    }

    /// Every other event is left to `describe`: nothing appended.
    @Test func otherEventsAreLeftToTheirWords() {
        for (event, _) in AuditSamples.everyEvent() {
            var bytes: [UInt8] = []
            let written = EventWording.appendDescription(
                of: event, template: AuditSamples.template, names: nil, to: &bytes)
            switch event {
            case .fieldSet, .fieldCleared: #expect(written)
            default:
                #expect(!written, "\(event.typeName)")
                #expect(bytes.isEmpty)
            }
        }
    }
}
