import InspectionAudit
import Testing

/// `AuditReport.escape`, which every text of the HTML report goes through:
/// markup as entities, and each control and bidi character as the visible
/// escape the text outputs show, so none can reorder what follows it.
@Suite struct HTMLEscapeTests {
    static let controls: [Unicode.Scalar] = [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200E}", "\u{200F}", "\u{061C}", "\u{1B}", "\u{7}", "\u{85}",
    ]

    @Test(arguments: controls)
    func eachControlIsShownAsAnEscape(control: Unicode.Scalar) {
        let escaped = AuditReport.escape("Paid \(control)0001$ <b>")
        #expect(!escaped.unicodeScalars.contains(control), "\(escaped)")
        #expect(escaped.contains("\\u{\(String(control.value, radix: 16, uppercase: true))}"), "\(escaped)")
        #expect(escaped.contains("&lt;b&gt;"))
    }

    @Test(arguments: ["plain", "line one\nline two", "tab\there", "é, 漢字, 🧯", "a & b \"c\" 'd'"])
    func textWithoutControlsIsOnlyHTMLEscaped(text: String) {
        let expected = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
        #expect(AuditReport.escape(text) == expected)
    }
}
