/// Text that a person or another device wrote (a name, a description, a field
/// value, a file name, a server's message), made safe to print on a terminal.
///
/// Printed raw, such text can move the cursor, erase a line, hide what follows
/// (`ESC [8m`) or reverse the reading order (bidi overrides), so an auditor
/// would read something other than what was recorded. Every text rendering
/// shows these characters as visible escapes (`\u{1B}` for ESC) instead; JSON
/// writes the same characters (`needsEscape`) as `\uXXXX` escapes, and HTML
/// escapes as HTML after showing them so.
public enum TerminalText {
    /// `text` with every control character (C0 but tab, DEL, C1), bidi
    /// override or isolate, and line or paragraph separator written as a
    /// visible `\u{XXXX}` escape. A backslash is kept as it is; the escapes are
    /// for reading, not for parsing back.
    public static func safe(_ text: String) -> String {
        if isPrintableASCII(text, allowingLineBreaks: true) { return text }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `safe`, and also newlines and tabs escaped: for text shown on one line
    /// (a table cell, a name in a timeline).
    public static func singleLine(_ text: String) -> String {
        if isPrintableASCII(text, allowingLineBreaks: false) { return text }
        return safe(text).replacingNewlinesAndTabs()
    }

    /// Whether every byte is printable ASCII (and, if allowed, a tab or a
    /// newline): nothing to escape, decided by one pass over the bytes
    /// instead of a walk through Unicode scalars. Names, types and most
    /// values are such text, and a listing of the log shows millions.
    public static func isPrintableASCII(_ text: String, allowingLineBreaks: Bool) -> Bool {
        // A Span walks the bytes in place, a few times faster than the UTF8View.
        let bytes = text.utf8.span
        for i in bytes.indices {
            let byte = bytes[i]
            guard (byte >= 0x20 && byte < 0x7F) || (allowingLineBreaks && (byte == 0x09 || byte == 0x0A)) else {
                return false
            }
        }
        return true
    }

    /// Whether `scalar` is one a terminal acts on rather than shows (a
    /// control but tab and newline, DEL, a C1 control, a bidi embedding,
    /// override, isolate or mark, a line or paragraph separator): the set
    /// `safe` shows as escapes and every JSON output writes as `\uXXXX`.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A: false
        case 0x00...0x1F, 0x7F...0x9F: true
        // Bidi embeddings and overrides, isolates, marks; line/paragraph separators.
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x061C, 0x2028, 0x2029: true
        default: false
        }
    }
}

extension String {
    fileprivate func replacingNewlinesAndTabs() -> String {
        guard contains(where: { $0 == "\n" || $0 == "\t" || $0 == "\r\n" }) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
