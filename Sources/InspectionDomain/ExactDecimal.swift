import FoundationEssentials

/// A decimal number kept as its canonical text, never through a `Double`.
///
/// A `number` field records what the inspector counted or measured; storing
/// it as binary floating point would turn `0.1` into `0.1000000000000000055…`
/// on the way to the server. The canonical form drops a `+`, leading zeros
/// and trailing fraction zeros (`"012.50"` is `"12.5"`, `"-0"` is `"0"`), so
/// equal numbers have equal text and hash the same.
public struct ExactDecimal: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// More significant digits than `Foundation.Decimal` holds would be
    /// rounded by the first program that reads them as a number.
    public static let maximumDigits = 38

    /// The canonical text: `-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?`.
    public let text: String

    /// Parses a plain decimal (`12`, `-3.75`, `.5`, `+4.`). Exponents,
    /// thousands separators, `NaN` and infinities are refused; the thrown
    /// reason says what to type instead.
    public init(parsing input: String) throws(ValueRefusal) {
        let trimmed = input.trimmingWhiteSpace
        var bytes = Substring(trimmed).utf8[...]
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var integer: [UInt8] = []
        var fraction: [UInt8] = []
        var seenPoint = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if seenPoint { fraction.append(byte) } else { integer.append(byte) }
            case UInt8(ascii: ".") where !seenPoint:
                seenPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                throw ValueRefusal(
                    "a number is written out in plain digits, without an exponent (1500, not 1.5e3)")
            case UInt8(ascii: ","), UInt8(ascii: "_"), UInt8(ascii: " "):
                throw ValueRefusal("a number has no thousands separators; use a point for decimals (1234.5)")
            default:
                throw ValueRefusal("a number is digits with an optional sign and decimal point, like 12 or -3.75")
            }
        }
        guard !integer.isEmpty || !fraction.isEmpty else {
            throw ValueRefusal("a number needs at least one digit, like 12 or -3.75")
        }
        while integer.first == UInt8(ascii: "0") { integer.removeFirst() }
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        guard integer.count + fraction.count <= Self.maximumDigits else {
            throw ValueRefusal("a number has at most \(Self.maximumDigits) significant digits")
        }
        var canonical = integer.isEmpty ? "0" : String(decoding: integer, as: UTF8.self)
        if !fraction.isEmpty { canonical += "." + String(decoding: fraction, as: UTF8.self) }
        if negative && canonical != "0" { canonical = "-" + canonical }
        text = canonical
    }

    /// Trusts `text` to be canonical (it came from the log).
    init(canonical text: String) { self.text = text }

    public var description: String { text }

    /// The value as a `Foundation.Decimal`, exact for every accepted number.
    public var decimal: Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? 0 }

    public static func < (a: ExactDecimal, b: ExactDecimal) -> Bool { a.decimal < b.decimal }
}

/// A calendar date without a time or zone, `YYYY-MM-DD`.
public struct CalendarDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// A real date of the proleptic Gregorian calendar, years 1–9999.
    public init(year: Int, month: Int, day: Int) throws(ValueRefusal) {
        guard (1...9999).contains(year) else { throw ValueRefusal("the year must be from 0001 to 9999") }
        guard (1...12).contains(month) else { throw ValueRefusal("there is no month \(month)") }
        guard (1...Self.days(inMonth: month, year: year)).contains(day) else {
            throw ValueRefusal("\(Self.pad(year, 4))-\(Self.pad(month, 2)) has no day \(day)")
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init(parsing input: String) throws(ValueRefusal) {
        let text = input.trimmingWhiteSpace
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10)
        else { throw ValueRefusal("a date is written YYYY-MM-DD, like 2026-03-09") }
        try self.init(year: year, month: month, day: day)
    }

    public var description: String { "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2))" }

    public static func < (a: CalendarDate, b: CalendarDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// The answer of a pass_fail field.
public enum PassFail: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case pass
    case fail
    /// The empty answer the server uses for "not yet judged"; it does not score.
    case unanswered = ""

    public var description: String { rawValue.isEmpty ? "(unanswered)" : rawValue }
}

/// Why a value does not fit, worded for the end of a `valueRefused` message.
public struct ValueRefusal: Error, Equatable, Sendable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}
