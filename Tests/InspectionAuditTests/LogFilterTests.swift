import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore
import Testing

@Suite struct LogFilterTests {
    static let parsing: [(String, LogMoment?)] = [
        ("42", .position(42)),
        (" 7 ", .position(7)),
        ("0", .position(0)),
        (
            "2026-11-29T14:03:07.250000Z",
            .time(Timestamp(iso8601: "2026-11-29T14:03:07.25Z")!, wholeDay: false)
        ),
        (
            "2026-11-29T15:03:07+01:00",
            .time(Timestamp(iso8601: "2026-11-29T14:03:07Z")!, wholeDay: false)
        ),
        ("2026-11-29", .time(Timestamp(iso8601: "2026-11-29")!, wholeDay: true)),
        ("yesterday", nil),
        ("-3", nil),
        ("4.5", nil),
        ("", nil),
        ("2026-13-01", nil),
        ("99999999999999999999999", nil),
    ]

    @Test(arguments: parsing)
    func readsPositionsAndTimes(text: String, expected: LogMoment?) {
        #expect(LogMoment(parsing: text) == expected)
    }

    @Test func aDateIsAWholeDayAsAnUpperBound() throws {
        let day = try #require(LogMoment(parsing: "2026-11-29"))
        let lastMicrosecond = try #require(Timestamp(iso8601: "2026-11-29T23:59:59.999999Z"))
        let nextDay = try #require(Timestamp(iso8601: "2026-11-30T00:00:00Z"))
        let midnight = try #require(Timestamp(iso8601: "2026-11-29T00:00:00Z"))
        #expect(day.admitsAsUpperBound(position: 1, recordedAt: lastMicrosecond))
        #expect(!day.admitsAsUpperBound(position: 1, recordedAt: nextDay))
        #expect(day.admitsAsLowerBound(position: 1, recordedAt: midnight))
        #expect(
            !day.admitsAsLowerBound(
                position: 1, recordedAt: Timestamp(microsecondsSinceEpoch: midnight.microsecondsSinceEpoch - 1)))
        let exact = LogMoment.time(midnight, wholeDay: false)
        #expect(exact.admitsAsUpperBound(position: 1, recordedAt: midnight))
        #expect(!exact.admitsAsUpperBound(position: 1, recordedAt: lastMicrosecond))
    }

    static let records = AuditSamples.records(AuditSamples.everyEvent())

    static let filters: [(String, LogFilter, [UInt64])] = [
        ("everything", LogFilter(), Array(1...18)),
        ("since a position", LogFilter(since: .position(16)), [16, 17, 18]),
        ("until a position", LogFilter(until: .position(2)), [1, 2]),
        (
            "a time window",
            LogFilter(
                since: .time(records[3].recordedAt, wholeDay: false),
                until: .time(records[5].recordedAt, wholeDay: false)),
            [4, 5, 6]
        ),
        ("an actor by name, any case", LogFilter(actor: "DANA PARK"), Array(13...18)),
        ("an actor by id", LogFilter(actor: "local:dana"), Array(1...12)),
        ("a type", LogFilter(types: ["inspection.field_cleared"]), [6]),
        ("a family", LogFilter(types: ["sync"]), Array(13...18)),
        ("two types", LogFilter(types: ["issue.flagged", "template.pinned"]), [1, 10]),
        ("no prefix match inside a word", LogFilter(types: ["insp"]), []),
        ("an actor and a family", LogFilter(actor: "dana", types: ["photo"]), [7, 9]),
        ("a part of a name", LogFilter(actor: "Park"), Array(13...18)),
        ("a part of a name, any case", LogFilter(actor: "pARK"), Array(13...18)),
        ("a first name finds everyone who has it", LogFilter(actor: "Dana"), Array(1...18)),
        ("the kind of an id", LogFilter(actor: "local:"), Array(1...12)),
        ("an id only whole", LogFilter(actor: "local:dan"), []),
        ("an id only whole, any case", LogFilter(actor: "LOCAL:DANA"), Array(1...12)),
        ("no other part of an id", LogFilter(actor: "ocal:dana"), []),
        ("a name nobody has", LogFilter(actor: "Mallory"), []),
    ]

    @Test(arguments: filters)
    func selectsEvents(name: String, filter: LogFilter, positions: [UInt64]) {
        #expect(Self.records.filter(filter.admits).map(\.position) == positions, "\(name)")
    }

    static let holes: [(LogFilter, UInt64, Bool)] = [
        (LogFilter(), 9, true),
        (LogFilter(since: .position(3), until: .position(9)), 9, true),
        (LogFilter(since: .position(10)), 9, false),
        (LogFilter(until: .position(8)), 9, false),
        (LogFilter(since: .time(AuditSamples.start, wholeDay: false)), 9, false),
        (LogFilter(actor: "dana"), 9, false),
        (LogFilter(types: ["sync"]), 9, false),
        (LogFilter(limit: 2), 9, true),
    ]

    @Test(arguments: holes)
    func holesAreShownWhenOnlyPositionsBoundTheSelection(filter: LogFilter, position: UInt64, shown: Bool) {
        #expect(filter.admitsHole(at: position) == shown)
    }

    @Test func knowsTypesAndFamilies() {
        #expect(LogFilter.isKnownType("sync"))
        #expect(LogFilter.isKnownType("inspection.field_set"))
        #expect(!LogFilter.isKnownType("inspection.feld_set"))
        #expect(LogFilter.knownTypes.prefix(5) == ["inspection", "issue", "photo", "sync", "template"])
    }

    @Test func scansStopPastAPositionBound() {
        let filter = LogFilter(since: .position(3), until: .position(5))
        #expect(filter.firstPosition == 3)
        #expect(!filter.isPast(position: 5))
        #expect(filter.isPast(position: 6))
        #expect(LogFilter(until: .time(AuditSamples.start, wholeDay: false)).isPast(position: 1_000_000) == false)
    }

    @Test func oneLinePerEventWithEverythingAnAuditorNeeds() {
        let record = Self.records[3]
        let line = LogFilter.line(for: record, summary: "set Floors (2) = 4")
        #expect(
            line
                == "      4  \(record.recordedAt.iso8601)  dd747fdc  2b566894  dana (unverified): set Floors (2) = 4")
        #expect(LogFilter.line(for: Self.records[14], summary: "x").contains("  Dana Park: x"))
    }

    static let forgedNames: [(String, String)] = [
        ("Mallory\u{1B}[2K\rDana Inspector", "Mallory\\u{1B}[2K\\u{D}Dana Inspector"),
        ("Dana\u{1B}[8mhidden", "Dana\\u{1B}[8mhidden"),
        ("\u{202E}anaD", "\\u{202E}anaD"),
        ("two\nlines", "two\\nlines"),
    ]

    @Test(arguments: forgedNames)
    func aForgedNameOrSummaryCannotRewriteTheLine(name: String, shown: String) {
        var record = Self.records[3]
        record.event.actor = Actor(id: "local:\(name)", name: name, verified: false)
        let line = LogFilter.line(for: record, summary: "set Notes (9) = \(name)")
        #expect(line.hasSuffix("  \(shown) (unverified): set Notes (9) = \(shown)"), "\(line)")
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x202E })
    }
}
