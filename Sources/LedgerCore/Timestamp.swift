/// A moment in UTC, exact to the microsecond.
///
/// Stored as an integer count of microseconds since the Unix epoch, never as an
/// ISO-8601 string or a `Double`: both lose fractions, and two edits inside one
/// second would then look simultaneous to an auditor.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microsecondsSinceEpoch: Int64

    public init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        a.microsecondsSinceEpoch < b.microsecondsSinceEpoch
    }

    /// RFC 3339 in UTC with six fractional digits, e.g. `2026-11-29T11:27:33.123456Z`.
    public var iso8601: String {
        // Quotient and remainder, never `seconds * 1_000_000`: for a time
        // near Int64.min (a damaged or hostile record) that product overflows.
        let micros = microsecondsSinceEpoch
        let (quotient, remainder) = micros.quotientAndRemainder(dividingBy: 1_000_000)
        let seconds = remainder < 0 ? quotient - 1 : quotient
        let fraction = remainder < 0 ? remainder + 1_000_000 : remainder
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds - days * 86_400
        let (y, m, d) = CivilDate.from(daysSinceEpoch: days)
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 6))Z"
    }

    public var description: String { iso8601 }

    /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.ffffff](Z|±HH:MM)`), or a bare
    /// date `YYYY-MM-DD` meaning midnight UTC. Fractions beyond microseconds
    /// are refused rather than silently dropped.
    public init?(iso8601 text: String) {
        let chars = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= chars.count else { return nil }
            var value: Int64 = 0
            for c in chars[range] {
                guard c >= 48 && c <= 57 else { return nil }
                value = value * 10 + Int64(c - 48)
            }
            return value
        }
        guard chars.count >= 10, chars[4] == UInt8(ascii: "-"), chars[7] == UInt8(ascii: "-"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year)
        else { return nil }
        let days = CivilDate.daysSinceEpoch(year: year, month: month, day: day)
        if chars.count == 10 {
            self.init(microsecondsSinceEpoch: days * 86_400_000_000)
            return
        }
        guard chars.count >= 20, chars[10] == UInt8(ascii: "T") || chars[10] == UInt8(ascii: " "),
            chars[13] == UInt8(ascii: ":"), chars[16] == UInt8(ascii: ":"),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction: Int64 = 0
        if chars[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < chars.count, chars[index] >= 48, chars[index] <= 57 {
                guard digits < 6 else { return nil }
                fraction = fraction * 10 + Int64(chars[index] - 48)
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<6 { fraction *= 10 }
        }
        guard index < chars.count else { return nil }
        var offsetSeconds: Int64 = 0
        if chars[index] == UInt8(ascii: "Z") || chars[index] == UInt8(ascii: "z") {
            guard index + 1 == chars.count else { return nil }
        } else if chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-") {
            guard index + 6 == chars.count, chars[index + 3] == UInt8(ascii: ":"),
                let oh = number(index + 1..<index + 3), let om = number(index + 4..<index + 6)
            else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (chars[index] == UInt8(ascii: "+") ? 1 : -1)
        } else {
            return nil
        }
        let total = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        self.init(microsecondsSinceEpoch: total * 1_000_000 + fraction)
    }
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor < 0) ? q - 1 : q
    }
}

/// Proleptic Gregorian calendar arithmetic (Howard Hinnant's days-from-civil),
/// kept here so formatting a timestamp needs no time zone database.
enum CivilDate {
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func from(daysSinceEpoch z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
