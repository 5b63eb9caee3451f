import FoundationEssentials

// Byte-level forms of the texts a listing of the whole log writes once per
// event (`jqc log`: a million lines). Each gives exactly the bytes of its
// String counterpart (`Timestamp.iso8601`, `UUID.lowercased`, `String(n)`),
// written into a reused buffer instead of built through interpolation,
// Foundation's formatter and a lower-casing pass. Each is formed in a small
// buffer on the stack and appended at once: appended a byte at a time, the
// array's capacity and uniqueness checks cost more than the digits.

extension Timestamp {
    /// Appends the UTF-8 of `iso8601` to `out`.
    public func appendISO8601(to out: inout [UInt8]) {
        let micros = microsecondsSinceEpoch
        let (quotient, remainder) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        let seconds = remainder < 0 ? quotient - 1 : quotient
        let fraction = remainder < 0 ? remainder + 1_000_000 : remainder
        let q = seconds / 86_400
        let days = seconds % 86_400 < 0 ? q - 1 : q
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = CivilDate.from(daysSinceEpoch: days)
        // Years outside four digits are padded differently: the String form decides.
        guard (0...9999).contains(y) else {
            out.append(contentsOf: iso8601.utf8)
            return
        }
        // YYYY-MM-DDTHH:MM:SS.ffffffZ
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 27) { text in
            writeDigits(y, 4, text, at: 0)
            text[4] = UInt8(ascii: "-")
            writeDigits(m, 2, text, at: 5)
            text[7] = UInt8(ascii: "-")
            writeDigits(d, 2, text, at: 8)
            text[10] = UInt8(ascii: "T")
            writeDigits(secondOfDay / 3600, 2, text, at: 11)
            text[13] = UInt8(ascii: ":")
            writeDigits(secondOfDay % 3600 / 60, 2, text, at: 14)
            text[16] = UInt8(ascii: ":")
            writeDigits(secondOfDay % 60, 2, text, at: 17)
            text[19] = UInt8(ascii: ".")
            writeDigits(fraction, 6, text, at: 20)
            text[26] = UInt8(ascii: "Z")
            out.append(contentsOf: UnsafeBufferPointer(text))
        }
    }
}

/// `value` (0 ≤ value < 10^width) in exactly `width` decimal digits, at `start`.
private func writeDigits(_ value: Int64, _ width: Int, _ text: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
    var rest = value
    for index in stride(from: start + width - 1, through: start, by: -1) {
        text[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
        rest /= 10
    }
}

/// Appends the UTF-8 of `String(value)`: its decimal digits, `-` first
/// when negative.
public func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
    if value < 0 { out.append(UInt8(ascii: "-")) }
    appendDecimal(value.magnitude, to: &out)
}

/// Appends the UTF-8 of `String(value)`: its decimal digits.
public func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
    // UInt64.max has 20 digits.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { text in
        var rest = value
        var start = 20
        repeat {
            start -= 1
            text[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        } while rest > 0
        out.append(contentsOf: UnsafeBufferPointer(rebasing: text[start...]))
    }
}

extension UUID {
    /// Appends the UTF-8 of `lowercased` (`8-4-4-4-12` lower-case hex) to `out`.
    public func appendLowercased(to out: inout [UInt8]) {
        withUnsafeBytes(of: uuid) { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
                // The dashes of 8-4-4-4-12 stand after bytes 4, 6, 8 and 10.
                for index in 0..<4 { writeHex(bytes[index], text, at: 2 * index) }
                text[8] = UInt8(ascii: "-")
                for index in 4..<6 { writeHex(bytes[index], text, at: 2 * index + 1) }
                text[13] = UInt8(ascii: "-")
                for index in 6..<8 { writeHex(bytes[index], text, at: 2 * index + 2) }
                text[18] = UInt8(ascii: "-")
                for index in 8..<10 { writeHex(bytes[index], text, at: 2 * index + 3) }
                text[23] = UInt8(ascii: "-")
                for index in 10..<16 { writeHex(bytes[index], text, at: 2 * index + 4) }
                out.append(contentsOf: UnsafeBufferPointer(text))
            }
        }
    }

    /// Appends the first eight hex digits of `lowercased`: how listings
    /// shorten an id.
    public func appendShortLowercased(to out: inout [UInt8]) {
        withUnsafeBytes(of: uuid) { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8) { text in
                for index in 0..<4 { writeHex(bytes[index], text, at: 2 * index) }
                out.append(contentsOf: UnsafeBufferPointer(text))
            }
        }
    }
}

/// The two lower-case hex digits of `byte` at `index` and after it.
@inline(__always)
private func writeHex(_ byte: UInt8, _ text: UnsafeMutableBufferPointer<UInt8>, at index: Int) {
    text[index] = hexDigit(byte >> 4)
    text[index + 1] = hexDigit(byte & 0x0F)
}

/// `0`–`9`, `a`–`f` for a nibble, computed rather than looked up in a table.
@inline(__always)
private func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble &+ (nibble < 10 ? UInt8(ascii: "0") : UInt8(ascii: "a") &- 10)
}

/// Appends the UTF-8 of a literal, copied at once (a `String`'s UTF8View
/// is appended through a generic walk).
public func appendLiteral(_ text: StaticString, to out: inout [UInt8]) {
    text.withUTF8Buffer { out.append(contentsOf: $0) }
}
