import Foundation
import InspectionAudit
import InspectionDomain
import InspectionUseCases
import LedgerCore
import Testing

/// `InspectionFilter` and `IssueFilter`: which rows a filtered listing keeps.
@Suite struct ListingFilterTests {
    static let started = Timestamp(iso8601: "2026-11-29T14:03:07Z")!

    static let inspectionCases: [(String, InspectionFilter, Bool)] = [
        ("no filter", InspectionFilter(), true),
        ("facility by id", InspectionFilter(facility: "101"), true),
        ("facility by name, any case", InspectionFilter(facility: "riverside MEDICAL center"), true),
        ("another facility", InspectionFilter(facility: "102"), false),
        ("area by name", InspectionFilter(area: " Lobby restrooms "), true),
        ("another area", InspectionFilter(area: "Admin offices"), false),
        ("status", InspectionFilter(status: .completed), true),
        ("another status", InspectionFilter(status: .draft), false),
        ("since the same day", InspectionFilter(since: LogMoment(parsing: "2026-11-29")), true),
        ("since the next day", InspectionFilter(since: LogMoment(parsing: "2026-11-30")), false),
        ("until the same day (all of it)", InspectionFilter(until: LogMoment(parsing: "2026-11-29")), true),
        ("until a moment before", InspectionFilter(until: LogMoment(parsing: "2026-11-29T14:03:06Z")), false),
        ("inspector, any case", InspectionFilter(inspector: "dana"), true),
        ("another inspector", InspectionFilter(inspector: "Sam"), false),
        (
            "all at once",
            InspectionFilter(facility: "101", area: "lobby restrooms", status: .completed, inspector: "Dana"), true
        ),
    ]

    @Test(arguments: inspectionCases)
    func anInspectionIsKeptWhenEveryConditionHolds(_ name: String, _ filter: InspectionFilter, _ kept: Bool) {
        let admitted = filter.admits(
            facilityID: "101", facilityName: "Riverside Medical Center", areaName: "Lobby restrooms",
            status: .completed, startedAt: Self.started, startedBy: "Dana")
        #expect(admitted == kept, "\(name)")
    }

    @Test func anInspectionWithoutAreaOrStartMatchesNoSuchCondition() {
        for filter in [InspectionFilter(area: "Lobby"), InspectionFilter(since: LogMoment(parsing: "2000-01-01"))] {
            #expect(
                !filter.admits(
                    facilityID: "101", facilityName: "Riverside", areaName: nil, status: .draft, startedAt: nil,
                    startedBy: "Dana"))
        }
    }

    static let issueCases: [(IssueFilter, Bool)] = [
        (IssueFilter(), true), (IssueFilter(severity: .high), true), (IssueFilter(severity: .low), false),
        (IssueFilter(facility: "harbor tower"), true), (IssueFilter(facility: "101"), false),
        (IssueFilter(severity: .high, facility: "102"), true),
    ]

    @Test(arguments: issueCases)
    func anIssueIsKeptWhenEveryConditionHolds(_ filter: IssueFilter, _ kept: Bool) {
        #expect(filter.admits(severity: .high, facilityID: "102", facilityName: "Harbor Tower") == kept)
    }
}
