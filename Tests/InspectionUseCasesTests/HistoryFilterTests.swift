import Foundation
import InspectionDomain
import SyncWorker
import Testing

@testable import InspectionUseCases

/// Which server records `jqc history`'s filters keep, from the record alone
/// (issue #33 item 8): an area named as this device pulled it finds a record
/// whose summary gives only the area's id, and `--inspector` matches any
/// part of the name, as `jqc log --actor` does.
@Suite struct HistoryFilterTests {
    static let record = try! ServerInspectionRecord(
        row: try! JSONValue(
            parsing: """
                {"id": 42, "template_id": 11, "facility_id": 101, "area_id": 1001, "area_name": null,
                 "inspector_name": "Dana Ortiz", "completed_at": "2026-05-01T10:00:59Z"}
                """))

    /// (what is asked, whether record 42 is kept)
    static let cases: [(name: String, filter: HistoryFilter, kept: Bool)] = [
        ("the area's name, known here by its id", Self.area("Lobby restrooms", ids: ["1001"]), true),
        ("the area's id", Self.area("1001", ids: []), true),
        ("a name known here for another area", Self.area("Kitchen", ids: ["2002"]), false),
        ("a name not pulled here", Self.area("Lobby restrooms", ids: []), false),
        ("part of the inspector's name", HistoryFilter(inspector: "ortiz"), true),
        ("the whole name in other case", HistoryFilter(inspector: "DANA ORTIZ"), true),
        ("someone else", HistoryFilter(inspector: "Sam"), false),
    ]

    static func area(_ name: String, ids: Set<String>) -> HistoryFilter {
        var filter = HistoryFilter(area: name)
        filter.areaIDs = ids
        return filter
    }

    @Test(arguments: cases.indices)
    func aFilterKeepsWhatItNames(index: Int) {
        let (name, filter, kept) = Self.cases[index]
        #expect(filter.admits(Self.record) == kept, "\(name)")
    }
}
