import LedgerCore

// MARK: - Parsing

extension JSONValue {
    /// Nesting deeper than this is refused rather than risking the stack on
    /// hostile input; real templates and payloads nest four or five levels.
    static let maximumDepth = 256

    /// Parses exactly one JSON text (RFC 8259), with white space around it.
    /// Duplicate object keys are refused: which one wins is undefined in JSON.
    public init(parsing text: String) throws(DomainError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// Parses exactly one JSON text from UTF-8 bytes.
    public init(parsing bytes: [UInt8]) throws(DomainError) {
        try self.init(parsing: bytes, .standard)
    }

    /// How a reader takes what RFC 8259 leaves to it.
    public struct Reading: Sendable {
        /// Keep every member of an object in order, a repeated name too, for
        /// a strict decoder that names the repeated member itself (a proof
        /// bundle's); otherwise a repeated name is refused here.
        public var keepsRepeatedNames: Bool
        /// Read a lone UTF-16 surrogate escape (`\ud800`) as U+FFFD, as Go's
        /// `encoding/json` does (the bundle tools read it so); otherwise it
        /// is refused.
        public var replacesLoneSurrogates: Bool

        public static let standard = Reading(keepsRepeatedNames: false, replacesLoneSurrogates: false)
        /// As `Tools/verify-ledger --bundle` and `Tools/verify-bundle-go` read.
        public static let asTheBundleToolsRead = Reading(keepsRepeatedNames: true, replacesLoneSurrogates: true)
    }

    /// Parses exactly one JSON text from UTF-8 bytes, read as `reading` says.
    public init(parsing bytes: [UInt8], _ reading: Reading) throws(DomainError) {
        var parser = JSONParser(bytes: bytes, reading: reading)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        self = value
    }
}

/// A recursive-descent reader of RFC 8259 JSON over UTF-8 bytes.
private struct JSONParser {
    let bytes: [UInt8]
    let reading: JSONValue.Reading
    var index = 0

    init(bytes: [UInt8], reading: JSONValue.Reading) {
        self.bytes = bytes
        self.reading = reading
    }

    func failure(_ why: String) -> DomainError {
        .invalidJSON(reason: "\(why) at byte \(index)")
    }

    mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func value(depth: Int) throws(DomainError) -> JSONValue {
        guard depth < JSONValue.maximumDepth else { throw failure("JSON nested too deeply") }
        guard index < bytes.count else { throw failure("JSON ends where a value belongs") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character '\(Unicode.Scalar(bytes[index]))'")
        }
    }

    mutating func literal(_ word: String, _ value: JSONValue) throws(DomainError) -> JSONValue {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
            throw failure("unknown literal (expected \(word))")
        }
        index += utf8.count
        return value
    }

    mutating func object(depth: Int) throws(DomainError) -> JSONValue {
        index += 1
        var members: [JSONValue.Member] = []
        var keys = Set<String>()
        if reads(UInt8(ascii: "}")) { return .object(members) }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure("expected a quoted object key")
            }
            let key = try string()
            guard keys.insert(key).inserted || reading.keepsRepeatedNames else {
                throw failure("duplicate object key \"\(key)\"")
            }
            guard reads(UInt8(ascii: ":")) else { throw failure("expected ':'") }
            skipSpace()
            members.append(.init(key, try value(depth: depth + 1)))
            if try closes(UInt8(ascii: "}"), "object") { return .object(members) }
        }
    }

    mutating func array(depth: Int) throws(DomainError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        if reads(UInt8(ascii: "]")) { return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth + 1))
            if try closes(UInt8(ascii: "]"), "array") { return .array(items) }
        }
    }

    /// Reads `byte` if it comes next after white space, and says whether it did.
    mutating func reads(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// After an object's member or an array's item: true when `closer` ends
    /// the container there, false when a ',' says another follows (either
    /// read); anything else is refused.
    mutating func closes(_ closer: UInt8, _ container: String) throws(DomainError) -> Bool {
        skipSpace()
        guard index < bytes.count else { throw failure("\(container) not closed") }
        let separator = bytes[index]
        guard separator == UInt8(ascii: ",") || separator == closer else {
            throw failure("expected ',' or '\(Character(Unicode.Scalar(closer)))'")
        }
        index += 1
        return separator == closer
    }

    mutating func number() throws(DomainError) -> JSONValue {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 else {
            throw failure("a number needs a digit")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            _ = digits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("a fraction needs digits") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw failure("an exponent needs digits") }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    mutating func string() throws(DomainError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun() throws(DomainError) {
            guard runStart < index else { return }
            guard let run = String(validating: bytes[runStart..<index], as: UTF8.self) else {
                throw failure("a string is not valid UTF-8")
            }
            scalars.append(contentsOf: run.unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw failure("string not closed") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try flushRun()
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw failure("a control character must be escaped in a string") }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            try flushRun()
            index += 1
            guard index < bytes.count else { throw failure("string not closed") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"): scalars.append(try unicodeEscape())
            default: throw failure("unknown escape '\\\(Unicode.Scalar(escape))'")
            }
            runStart = index
        }
    }

    /// Reads the four hex digits after `\u`, joining a UTF-16 surrogate pair.
    mutating func unicodeEscape() throws(DomainError) -> Unicode.Scalar {
        let high = try hex4()
        if reading.replacesLoneSurrogates { return loneSurrogateReplaced(high) }
        if (0xD800...0xDBFF).contains(high) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw failure("a lone UTF-16 surrogate in a \\u escape") }
            index += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone UTF-16 surrogate in a \\u escape") }
            let combined = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw failure("an invalid \\u escape") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(high) else { throw failure("a lone UTF-16 surrogate in a \\u escape") }
        return scalar
    }

    /// Go's reading: a high surrogate joins a following low one; any other
    /// surrogate is U+FFFD (and the escape after it is read on its own).
    mutating func loneSurrogateReplaced(_ high: UInt32) -> Unicode.Scalar {
        if (0xD800...0xDBFF).contains(high), index + 5 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
            bytes[index + 1] == UInt8(ascii: "u")
        {
            let saved = index
            index += 2
            // Not four hex digits: no low surrogate; the escape is read again on its own below.
            if let low = try? hex4(), (0xDC00...0xDFFF).contains(low),
                let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            {
                return scalar
            }
            index = saved
        }
        return Unicode.Scalar(high) ?? "\u{FFFD}"
    }

    mutating func hex4() throws(DomainError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(nibble)
        }
        index += 4
        return value
    }
}

// MARK: - Writing

extension JSONValue {
    /// Compact JSON text (no insignificant white space): one exported event
    /// per line. Members are written in their stored order.
    public func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.writeString(text, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { out += "," }
                Self.writeString(member.key, to: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            if let escape = escape(for: scalar) {
                out += escape
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// How `scalar` is written inside a JSON string, or nil when it is
    /// written as it is: the one rule of every JSON output (`serialized`,
    /// `prettyPrinted`, and `EventExport.appendJSONLine`'s bytes).
    ///
    /// Quote, backslash and C0 controls are escaped as JSON requires; every
    /// other character a terminal would act on (DEL, the C1 controls such as
    /// U+009B, a CSI of its own; bidi embeddings, overrides, isolates and
    /// marks; U+2028/U+2029) is escaped as `\uXXXX` too, by the same rule as
    /// text output (`TerminalText.needsEscape`). The JSON reads back as the
    /// exact text, but `jqc --json show | less` cannot be made to reorder or
    /// erase what it shows by a name another device wrote.
    static func escape(for scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "\"": return "\\\""
        case "\\": return "\\\\"
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case _ where scalar.value < 0x20 || TerminalText.needsEscape(scalar):
            let hex = String(scalar.value, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: return nil
        }
    }
}
