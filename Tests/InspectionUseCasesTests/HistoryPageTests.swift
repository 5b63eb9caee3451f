import Foundation
import InspectionDomain
import SyncWorker
import Testing

@testable import InspectionUseCases

/// A page of `jqc history` without a server or `jqc`: which listing is
/// asked, the table's rows, what an empty page says and the line under it.
@Suite struct HistoryPageTests {
    static let row = try! JSONValue(
        parsing: """
            {"id": 42, "completed_at": "2026-05-01T10:00:59Z", "template_name": "Kitchen", "facility_name": "Cafe",
             "area_name": "Back", "inspector_name": "Dana", "overall_score": 48, "follow_up_required": false,
             "client_id": "0a1b2c3d-1111-2222-3333-444444444444"}
            """)

    static func read(_ filter: HistoryFilter, total: Int, rows: [JSONValue], complete: Bool = true) throws
        -> (page: HistoryPage, asked: String)
    {
        var asked = ""
        let page = try HistoryPage.read(
            limit: 30, offset: 60, filter: filter,
            all: { limit, offset throws(APIError) in
                asked = "all \(limit) \(offset)"
                return (rows, total)
            },
            filtered: { limit, offset, _ throws(APIError) in
                asked = "filtered \(limit) \(offset)"
                return (rows, total, complete)
            })
        return (page, asked)
    }

    @Test func aPageHasItsRowsAndTheLineUnderIt() throws {
        let (page, asked) = try Self.read(HistoryFilter(), total: 100, rows: [Self.row])
        #expect(asked == "all 30 60")
        #expect(page.rows == [["42", "2026-05-01T10:00", "Kitchen", "Cafe / Back", "Dana", "48.00", "no", "0a1b2c3d"]])
        #expect(page.emptyLine == nil)
        #expect(page.footer == "61-61 of 100")
        let bare = try JSONValue(parsing: #"{"id": 7}"#)
        #expect(
            try Self.read(HistoryFilter(), total: 1, rows: [bare]).page.rows == [
                ["7", "-", "-", "-", "-", "-", "-", "-"]
            ])
    }

    @Test func aFilteredPageSaysSoAndWhetherItReadEverything() throws {
        let filter = HistoryFilter(inspector: "Dana")
        let (page, asked) = try Self.read(filter, total: 3, rows: [Self.row], complete: false)
        #expect(asked == "filtered 30 60")
        #expect(
            page.footer
                == "61-61 of 3 matching the filter (only the newest \(APIClient.filteredHistoryLimit) records were read)"
        )
        #expect(try Self.read(filter, total: 3, rows: [Self.row]).page.footer == "61-61 of 3 matching the filter")
    }

    /// The filter, the records in all, and what an empty page says.
    @Test(arguments: [
        (false, 0, "The server has no completed inspections yet."), (false, 5, "No more: 5 in all."),
        (true, 0, "None of the server's records matches the filter."), (true, 5, "No more: 5 in all."),
    ])
    func anEmptyPageSaysWhy(filtered: Bool, total: Int, line: String) throws {
        let filter = filtered ? HistoryFilter(facility: "101") : HistoryFilter()
        #expect(try Self.read(filter, total: total, rows: []).page.emptyLine == line)
    }

    @Test(arguments: [("52", "52.00"), ("48.456", "48.46"), ("\"x\"", "-"), ("null", "-")])
    func aScoreHasTwoDecimals(_ sent: String, _ shown: String) throws {
        #expect(HistoryPage.score(try JSONValue(parsing: sent)) == shown)
    }
}
