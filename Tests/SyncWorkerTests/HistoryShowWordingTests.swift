import Foundation
import InspectionDomain
import LedgerTestSupport
import SyncWorker
import Testing

/// `jqc history show` through the built `jqc` (issue #33 item 8, "a time
/// without its zone"), against a server whose history record names its
/// area by id alone, as the reference backend's summary does, and whose
/// completion time comes with a zone, an offset or none (the development
/// server always writes `Z`, so the record is scripted here): the time is
/// printed with its zone or offset, one sent without says it was read as
/// UTC; the area is named from the reference data this ledger holds, and
/// each answer by its field's label beside the id. `history --inspector`
/// matches any part of the name.
@Suite struct HistoryShowWordingTests {
    static let times: [(sent: String, shown: String)] = [
        ("2026-05-01T10:00:00.123Z", "2026-05-01T10:00:00.123Z"),
        ("2026-05-01T12:00:00+02:00", "2026-05-01T12:00:00+02:00"),
        ("2026-05-01T10:00:00.123", "2026-05-01T10:00:00.123 UTC (the server gave no zone; read as UTC)"),
        ("2026-05-01T10:00:00", "2026-05-01T10:00:00 UTC (the server gave no zone; read as UTC)"),
    ]

    /// A ledger logged in (its session saved as `jqc login` leaves it) to `server`.
    static func loggedIn(to server: HostileServer) throws -> SampleLedger {
        let sample = try SampleLedger(serverURL: server.baseURL)
        try SessionStore(path: sample.credentialsPath).save(
            StoredSession(
                user: ServerUser(id: "7", username: "inspector", role: "inspector", displayName: "Dana Inspector"),
                tokens: SessionTokens(accessToken: "history-access-token", refreshToken: "history-refresh-token"),
                serverURL: server.baseURL, savedAt: "2026-12-01T08:00:00Z"))
        return sample
    }

    @Test(arguments: times)
    func theCompletionTimeNamesItsZoneAndTheRecordItsAreaAndFields(sent: String, shown: String) throws {
        let server = try HostileServer(.history, completedAt: sent)
        let sample = try Self.loggedIn(to: server)

        let result = try sample.jqc("history", "show", "42")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("  completed:  \(shown)"), "\(result.stdout)")
        #expect(
            lines.contains("  facility:   Riverside Medical Center (101), area Lobby restrooms (1001)"),
            "\(result.stdout)")
        #expect(lines.contains(#"    2 "Floors": 4"#), "\(result.stdout)")
        #expect(lines.contains(#"    5 "Soap dispensers stocked": "pass""#), "\(result.stdout)")
        #expect(server.requests.allSatisfy { $0.hasPrefix("GET /api/v1/inspections?") }, "\(server.requests)")
    }

    /// (the completion the server sent, as the listing shows it): every row
    /// to the minute in UTC, which the header names; an offset moved to
    /// UTC, no zone read as UTC (the listing cut the text at 16 characters,
    /// so 12:00+02:00 read as 12:00 in a column of UTC times).
    static let listedTimes: [(sent: String, listed: String)] = [
        ("2026-05-01T10:00:00.123Z", "2026-05-01T10:00"),
        ("2026-05-01T12:00:00+02:00", "2026-05-01T10:00"),
        ("2026-05-01T00:30:00-01:00", "2026-05-01T01:30"),
        ("2026-05-01T10:00:00.123", "2026-05-01T10:00"),
        ("not a time at all", "not a time at al"),
    ]

    @Test(arguments: listedTimes)
    func theListingGivesEachCompletionInUTCToTheMinute(sent: String, listed: String) throws {
        let server = try HostileServer(.history, completedAt: sent)
        let sample = try Self.loggedIn(to: server)
        let result = try sample.jqc("history")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("COMPLETED (UTC)") == true, "\(result.stdout)")
        let row = try #require(lines.first { $0.hasPrefix("42 ") }, "\(result.stdout)")
        #expect(row.contains(listed), "\(row)")
    }

    /// (the `--inspector` text, whether Dana Inspector's record is listed):
    /// any part of the name, in any case, as `log --actor` and `inspections
    /// --inspector` match (issue #33 item 8).
    static let inspectors: [(String, Bool)] = [
        ("dana", true), ("INSPECTOR", true), ("Dana Inspector", true), ("Dan I", false), ("Ortiz", false),
    ]

    @Test(arguments: inspectors)
    func historyMatchesAnyPartOfTheInspectorsName(wanted: String, listed: Bool) throws {
        let server = try HostileServer(.history, completedAt: "2026-05-01T10:00:00Z")
        let sample = try Self.loggedIn(to: server)
        let result = try sample.jqc("--json", "history", "--inspector", wanted)
        #expect(result.status == 0, "\(result.stderr)")
        let ids = try JSONValue(parsing: result.stdout)["inspections"]?.arrayValue?.compactMap {
            $0["id"]?.integerValue
        }
        #expect(ids == (listed ? [42] : []), "--inspector \(wanted): \(result.stdout)")
    }
}
