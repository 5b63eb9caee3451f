import FoundationEssentials
import InspectionDomain
import LedgerCore

// MARK: - The most frequent words, written as bytes

extension EventWording {
    /// Appends the UTF-8 of `describe(event, stream:, template:, names:)`
    /// (no `before`) when `event` is a field answer set or cleared, nine in
    /// ten lines of a listing of the whole log, and answers true; for every
    /// other event it appends nothing and answers false (the caller words
    /// it with `describe`). The same words, without building a `String`
    /// per line: a test compares the two for every kind of value.
    public static func appendDescription(
        of event: InspectionEvent, template: Template?, names: FieldNames?, to out: inout [UInt8]
    ) -> Bool {
        switch event {
        case .fieldSet(let e):
            out.append(contentsOf: "set ".utf8)
            appendFieldName(e.fieldID, template: template, names: names, to: &out)
            out.append(contentsOf: " = ".utf8)
            appendValueText(e.value, to: &out)
            return true
        case .fieldCleared(let e):
            out.append(contentsOf: "cleared ".utf8)
            appendFieldName(e.fieldID, template: template, names: names, to: &out)
            return true
        default:
            return false
        }
    }

    /// `inspecting`'s field name: from `names` when given.
    private static func appendFieldName(_ id: FieldID, template: Template?, names: FieldNames?, to out: inout [UInt8]) {
        if let names {
            names.appendName(id, to: &out)
        } else {
            out.append(contentsOf: fieldName(id, template: template).utf8)
        }
    }

    /// The UTF-8 of `valueText(value)`: a text answer of printable ASCII
    /// with no quote or backslash (most of them) quoted as it is, a rating
    /// by its digits, a flag by its word, the rest through `valueText`.
    static func appendValueText(_ value: FieldValue, to out: inout [UInt8]) {
        switch value {
        case .text(let text) where TerminalText.isPrintableASCII(text, allowingLineBreaks: false):
            guard !text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                out.append(contentsOf: valueText(value).utf8)
                return
            }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: text.utf8)
            out.append(UInt8(ascii: "\""))
        case .rating(let rating) where rating != 0:
            appendDecimal(Int64(rating), to: &out)
        case .bool(let flag):
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        default:
            out.append(contentsOf: valueText(value).utf8)
        }
    }
}
