import Foundation

// MARK: - A proof bundle's JSON, read strictly

/// A bundle's JSON as it was written: objects keep every member in order
/// (so duplicate and case-variant names are seen), numbers keep whether they
/// were whole. `Tools/verify-ledger` and `Tools/verify-bundle-go` read a
/// bundle the same way (Schemas/ledger-format.md § Proof bundles, strictness).
indirect enum BundleJSON {
    case null
    case bool(Bool)
    /// A whole number as written (no fraction, no exponent), if it fits.
    case integer(Int64?)
    /// A number with a fraction or an exponent, or a whole one out of range.
    case fraction
    case string(String)
    case array([BundleJSON])
    case object([(String, BundleJSON)])

    static let maximumDepth = 64

    /// The bundle's bytes as JSON; `BundleUnreadable` when they are not.
    static func read(_ data: [UInt8]) throws(BundleUnreadable) -> BundleJSON {
        guard String(validating: data, as: UTF8.self) != nil else {
            throw BundleUnreadable("the file is not UTF-8 text")
        }
        // Nesting is bounded before parsing, as both tools do.
        var depth = 0
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                depth += 1
                if depth > maximumDepth {
                    throw BundleUnreadable("the bundle nests deeper than \(maximumDepth) levels")
                }
            } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                depth -= 1
            }
        }
        var parser = Parser(bytes: data)
        do {
            parser.skipSpace()
            let value = try parser.value()
            parser.skipSpace()
            guard parser.index == data.count else { throw Parser.Malformed() }
            return value
        } catch {
            throw BundleUnreadable("the file is not well-formed JSON")
        }
    }

    /// A recursive-descent reader of RFC 8259 JSON over UTF-8 bytes (depth
    /// bounded above); a lone UTF-16 surrogate escape reads as U+FFFD.
    private struct Parser {
        struct Malformed: Error {}
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        func peek() throws(Malformed) -> UInt8 {
            guard index < bytes.count else { throw Malformed() }
            return bytes[index]
        }

        mutating func expect(_ byte: UInt8) throws(Malformed) {
            guard try peek() == byte else { throw Malformed() }
            index += 1
        }

        mutating func value() throws(Malformed) -> BundleJSON {
            switch try peek() {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw Malformed()
            }
        }

        mutating func literal(_ word: String, _ value: BundleJSON) throws(Malformed) -> BundleJSON {
            let utf8 = Array(word.utf8)
            guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
                throw Malformed()
            }
            index += utf8.count
            return value
        }

        mutating func object() throws(Malformed) -> BundleJSON {
            index += 1
            var members: [(String, BundleJSON)] = []
            skipSpace()
            if try peek() == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard try peek() == UInt8(ascii: "\"") else { throw Malformed() }
                let name = try string()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                skipSpace()
                members.append((name, try value()))
                skipSpace()
                if try peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return .object(members)
            }
        }

        mutating func array() throws(Malformed) -> BundleJSON {
            index += 1
            var items: [BundleJSON] = []
            skipSpace()
            if try peek() == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipSpace()
                items.append(try value())
                skipSpace()
                if try peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return .array(items)
            }
        }

        mutating func number() throws(Malformed) -> BundleJSON {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
                return index - from
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let first = try peek()
            guard first >= 0x30, first <= 0x39 else { throw Malformed() }
            if first == UInt8(ascii: "0") { index += 1 } else { _ = digits() }
            var whole = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw Malformed() }
                whole = false
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { throw Malformed() }
                whole = false
            }
            guard whole else { return .fraction }
            return .integer(Int64(String(decoding: bytes[start..<index], as: UTF8.self)))
        }

        mutating func string() throws(Malformed) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var runStart = index
            func flushRun() throws(Malformed) {
                guard runStart < index else { return }
                guard let run = String(validating: bytes[runStart..<index], as: UTF8.self) else { throw Malformed() }
                scalars.append(contentsOf: run.unicodeScalars)
            }
            while true {
                let byte = try peek()
                if byte == UInt8(ascii: "\"") {
                    try flushRun()
                    index += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw Malformed() }
                if byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                try flushRun()
                index += 1
                let escape = try peek()
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
                default: throw Malformed()
                }
                runStart = index
            }
        }

        /// The scalar of a `\u` escape, joining a surrogate pair; a lone
        /// surrogate is U+FFFD.
        mutating func unicodeEscape() throws(Malformed) -> Unicode.Scalar {
            let high = try hex4()
            if (0xD800...0xDBFF).contains(high), index + 5 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            {
                let saved = index
                index += 2
                let low = try hex4()
                if (0xDC00...0xDFFF).contains(low),
                    let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                {
                    return scalar
                }
                index = saved
            }
            return Unicode.Scalar(high) ?? "\u{FFFD}"
        }

        mutating func hex4() throws(Malformed) -> UInt32 {
            guard index + 4 <= bytes.count else { throw Malformed() }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                let nibble: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
                default: throw Malformed()
                }
                value = value << 4 | UInt32(nibble)
            }
            index += 4
            return value
        }
    }
}

/// A bundle that is not a bundle's JSON (exit status 2).
public struct BundleUnreadable: Error, CustomStringConvertible {
    public var verdict: String
    public init(_ verdict: String) { self.verdict = verdict }
    public var description: String { "UNREADABLE: \(verdict)" }
}
