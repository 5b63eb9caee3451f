import Foundation

// Byte-level forms of the texts a listing of the whole log writes once per
// event (`jqc log`: a million lines). Each gives exactly the bytes of its
// String counterpart (`Timestamp.iso8601`, `UUID.lowercased`), written
// into a reused buffer instead of built through interpolation, Foundation's
// formatter and a lower-casing pass.

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
        appendDigits(y, 4, &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(m, 2, &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(d, 2, &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, 2, &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 3600 / 60, 2, &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, 2, &out)
        out.append(UInt8(ascii: "."))
        appendDigits(fraction, 6, &out)
        out.append(UInt8(ascii: "Z"))
    }
}

/// `value` (0 ≤ value < 10^width) in exactly `width` decimal digits.
private func appendDigits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
    var divisor: Int64 = 1
    for _ in 1..<width { divisor *= 10 }
    var rest = value
    while divisor > 0 {
        out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor))
        rest %= divisor
        divisor /= 10
    }
}

private let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

extension UUID {
    /// Appends the UTF-8 of `lowercased` (`8-4-4-4-12` lower-case hex) to `out`.
    public func appendLowercased(to out: inout [UInt8]) {
        let u = uuid
        let dash = UInt8(ascii: "-")
        appendHex(u.0, u.1, u.2, u.3, &out)
        out.append(dash)
        appendHex(u.4, u.5, &out)
        out.append(dash)
        appendHex(u.6, u.7, &out)
        out.append(dash)
        appendHex(u.8, u.9, &out)
        out.append(dash)
        appendHex(u.10, u.11, u.12, u.13, &out)
        appendHex(u.14, u.15, &out)
    }

    /// Appends the first eight hex digits of `lowercased`: how listings
    /// shorten an id.
    public func appendShortLowercased(to out: inout [UInt8]) {
        let u = uuid
        appendHex(u.0, u.1, u.2, u.3, &out)
    }
}

private func appendHex(_ a: UInt8, _ b: UInt8, _ out: inout [UInt8]) {
    out.append(hexDigits[Int(a >> 4)])
    out.append(hexDigits[Int(a & 0x0F)])
    out.append(hexDigits[Int(b >> 4)])
    out.append(hexDigits[Int(b & 0x0F)])
}

private func appendHex(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, _ out: inout [UInt8]) {
    appendHex(a, b, &out)
    appendHex(c, d, &out)
}
