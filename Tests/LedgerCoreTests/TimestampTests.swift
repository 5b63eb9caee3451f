import Testing

@testable import LedgerCore

@Suite struct TimestampTests {
    static let cases: [(Int64, String)] = [
        (0, "1970-01-01T00:00:00.000000Z"),
        (1, "1970-01-01T00:00:00.000001Z"),
        (-1, "1969-12-31T23:59:59.999999Z"),
        (951_782_400_000_000, "2000-02-29T00:00:00.000000Z"),
        (1_795_000_000_123_456, "2026-11-18T11:06:40.123456Z"),
        (4_102_444_799_999_999, "2099-12-31T23:59:59.999999Z"),
    ]

    @Test(arguments: cases)
    func formatsAndParsesExactly(micros: Int64, text: String) {
        let time = Timestamp(microsecondsSinceEpoch: micros)
        #expect(time.iso8601 == text)
        #expect(Timestamp(iso8601: text) == time)
    }

    @Test(arguments: [
        ("2026-11-29T12:00:00Z", 1_795_953_600_000_000 as Int64),
        ("2026-11-29T13:30:00+01:30", 1_795_953_600_000_000),
        ("2026-11-29T12:00:00.5Z", 1_795_953_600_500_000),
        ("2026-11-29", 1_795_910_400_000_000),
    ])
    func parsesOtherForms(text: String, micros: Int64) {
        #expect(Timestamp(iso8601: text)?.microsecondsSinceEpoch == micros)
    }

    @Test(arguments: [
        "", "2026-13-01", "2026-02-30", "2026-11-29T25:00:00Z", "2026-11-29T12:00:00",
        "2026-11-29T12:00:00.1234567Z", "2026-11-29T12:00:00.Z", "yesterday",
    ])
    func refusesWhatItCannotReadExactly(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }
}
