import LedgerCore

/// A point in the log as a person names it on the command line: a position
/// (a plain whole number) or a time (RFC 3339, or a bare date).
///
/// Positions are exact and never ambiguous; times are what people remember.
/// A bare date is a whole day: as a lower bound (`--since`) it starts at
/// midnight UTC, as an upper bound (`--until`, `--as-of`) it ends just before
/// the next midnight, so `--until 2026-11-29` includes that day's events.
public enum LogMoment: Hashable, Sendable, CustomStringConvertible {
    case position(UInt64)
    /// A time; `wholeDay` when it was written as a date alone.
    case time(Timestamp, wholeDay: Bool)

    /// What a moment looks like, for usage errors.
    public static let expectation =
        "expected a position (a whole number such as 42) or a time (RFC 3339 such as "
        + "2026-11-29T14:03:07.250000Z or 2026-11-29T15:03:07+01:00, or a date such as 2026-11-29)"

    private static let microsecondsPerDay: Int64 = 86_400_000_000

    /// Reads a position or a time; nil when the text is neither.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: " \t")
        guard !trimmed.isEmpty else { return nil }
        if trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard let position = UInt64(trimmed) else { return nil }
            self = .position(position)
            return
        }
        guard let time = Timestamp(iso8601: trimmed) else { return nil }
        self = .time(time, wholeDay: trimmed.utf8.count == 10)
    }

    /// As a lower bound (`--since`): whether a record at `position`,
    /// recorded at `time`, is at or after this moment.
    public func admitsAsLowerBound(position: UInt64, recordedAt time: Timestamp) -> Bool {
        switch self {
        case .position(let bound): bound <= position
        case .time(let bound, _): bound <= time
        }
    }

    /// As an upper bound (`--until`, `--as-of`): whether a record at
    /// `position`, recorded at `time`, is at or before this moment (a whole
    /// day includes all of it).
    public func admitsAsUpperBound(position: UInt64, recordedAt time: Timestamp) -> Bool {
        switch self {
        case .position(let bound): position <= bound
        case .time(let bound, let wholeDay):
            wholeDay
                ? time.microsecondsSinceEpoch < bound.microsecondsSinceEpoch + Self.microsecondsPerDay
                : time <= bound
        }
    }

    public var description: String {
        switch self {
        case .position(let position): "position \(position)"
        case .time(let time, let wholeDay): wholeDay ? String(time.iso8601.prefix(10)) : time.iso8601
        }
    }
}

extension String {
    /// The text without the given leading and trailing characters.
    func trimmingCharacters(in set: String) -> String {
        let drop = Set(set)
        var start = startIndex
        var end = endIndex
        while start < end, drop.contains(self[start]) { start = index(after: start) }
        while end > start, drop.contains(self[index(before: end)]) { end = index(before: end) }
        return String(self[start..<end])
    }
}
