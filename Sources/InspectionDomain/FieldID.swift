/// A template field's id in the one string form used everywhere in the ledger.
///
/// The server sends field ids as integers and sometimes as strings (`5` and
/// `"5"` are the same field). The app this replaces once turned them into
/// `"Optional(5)"` and every lookup silently missed, so ids are normalised
/// once, where JSON enters, and are a type of their own after that.
public struct FieldID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The normalised text: a decimal number without leading zeros, or a
    /// name of letters, digits, `_`, `.` and `-`.
    public let rawValue: String

    /// Trusts `rawValue` to be normalised already (it came from the log or a
    /// normalised template). Use `init(normalizing:)` for outside input.
    public init(rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public var description: String { rawValue }

    /// Numeric ids sort as numbers (`2` before `10`), then names.
    public static func < (a: FieldID, b: FieldID) -> Bool {
        switch (a.numericValue, b.numericValue) {
        case (let x?, let y?): return x < y
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return a.rawValue < b.rawValue
        }
    }

    var numericValue: UInt64? {
        rawValue.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } ? UInt64(rawValue) : nil
    }

    // MARK: - Normalising

    /// Normalises an id as the server sends it: a whole JSON number, or a
    /// string. Refuses fractions (`5.5`, `5.0`), empty ids and other kinds;
    /// callers turn the refusal into a `DomainError` naming the template.
    static func normalize(json: JSONValue) throws(IDRefusal) -> String {
        switch json {
        case .number(let literal):
            guard let integer = json.integerValue else {
                throw IDRefusal(raw: literal, reason: "an id is a whole number or a string, not a fraction")
            }
            guard integer >= 0 else { throw IDRefusal(raw: literal, reason: "an id is never negative") }
            return String(integer)
        case .string(let text):
            return try normalize(text: text)
        default:
            throw IDRefusal(raw: json.serialized(), reason: "an id is a whole number or a string, not \(json.kindName)")
        }
    }

    /// Normalises an id given as text: surrounding white space is dropped,
    /// and a decimal number loses its leading zeros (`"05"` is field 5, as on
    /// the server, which stores ids as integers).
    static func normalize(text: String) throws(IDRefusal) -> String {
        let trimmed = text.trimmingWhiteSpace
        guard !trimmed.isEmpty else { throw IDRefusal(raw: text, reason: "an id must not be empty") }
        let utf8 = trimmed.utf8
        if utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            let digits = trimmed.drop { $0 == "0" }
            return digits.isEmpty ? "0" : String(digits)
        }
        guard utf8.count <= 64, utf8.allSatisfy(isNameByte) else {
            throw IDRefusal(raw: text, reason: "an id is up to 64 letters, digits, '_', '.' or '-'")
        }
        return trimmed
    }

    /// The normalised id, or nil when the text cannot be an id at all (a
    /// label with spaces, say): lookups then try labels instead.
    static func normalizedIfWellFormed(_ text: String) -> FieldID? {
        do {
            return FieldID(rawValue: try normalize(text: text))
        } catch {
            return nil
        }
    }

    /// Normalises an id typed by a person or sent as JSON, for looking a field up.
    public init(normalizing text: String) throws(DomainError) {
        do {
            rawValue = try Self.normalize(text: text)
        } catch {
            throw .invalidID(what: "field id", raw: error.raw, reason: error.reason)
        }
    }
}

/// Why an id could not be normalised; turned into a `DomainError` that names
/// the template or record it belongs to.
struct IDRefusal: Error {
    var raw: String
    var reason: String
}

private func isNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
        true
    default: false
    }
}

/// Normalises the id of a server record (template, facility, area): integers
/// and strings of digits are the same id. Names are allowed so a development
/// server may use them, but never an empty id or a fraction.
public enum RecordID {
    /// Normalises an id given as JSON (`22` or `"22"`).
    public static func normalize(json: JSONValue, what: String) throws(DomainError) -> String {
        do {
            return try FieldID.normalize(json: json)
        } catch {
            throw .invalidID(what: what, raw: error.raw, reason: error.reason)
        }
    }

    /// Normalises an id given as text (`"022"` is `"22"`).
    public static func normalize(text: String, what: String) throws(DomainError) -> String {
        do {
            return try FieldID.normalize(text: text)
        } catch {
            throw .invalidID(what: what, raw: error.raw, reason: error.reason)
        }
    }
}

extension String {
    /// The text without leading and trailing spaces, tabs and line breaks.
    var trimmingWhiteSpace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
