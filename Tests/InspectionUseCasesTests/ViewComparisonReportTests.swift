import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import Testing

@testable import InspectionUseCases
@testable import LedgerStore

/// What `jqc rebuild --dry-run` and `jqc views --check` say of the views
/// compared with a fresh fold, without `jqc`: a line per view, one per row
/// that differs named by its key, the JSON of each, and when it is exit status 1.
@Suite struct ViewComparisonReportTests {
    static let inspection = UUID(uuidString: "0a1b2c3d-0000-4000-8000-000000000001")!
    static let table = TableName.View.inspections.name

    static func comparison(
        stored: Int? = 3, position: UInt64? = 7, head: UInt64 = 7, _ difference: ProjectionSet.TableDifference? = nil
    ) -> ProjectionSet.ViewComparison {
        ProjectionSet.ViewComparison(
            status: ProjectionSet.ViewStatus(
                name: "inspections", codeVersion: 3, storedVersion: stored, position: position, head: head,
                tables: [(name: table, rows: 2)]),
            tables: [difference ?? ProjectionSet.TableDifference(table: table)])
    }

    /// A view as it may stand, its lines, and whether each check refuses it.
    struct Standing: Sendable, CustomTestStringConvertible {
        let name: String
        let comparison: ProjectionSet.ViewComparison
        let lines: [String]
        /// `views --check` refuses rows that differ; a dry run also a stale view.
        let checkRefuses: Bool
        let dryRunRefuses: Bool
        var testDescription: String { name }
    }

    static let standings: [Standing] = [
        Standing(
            name: "current", comparison: comparison(),
            lines: ["inspections (version 3, stored 3, at 7 of 7): no change"], checkRefuses: false,
            dryRunRefuses: false),
        Standing(
            name: "behind the log, same rows", comparison: comparison(position: 5),
            lines: [
                "inspections (version 3, stored 3, at 5 of 7): no row changes; stale, so it would be written again"
            ],
            checkRefuses: false, dryRunRefuses: true),
        Standing(
            name: "never built", comparison: comparison(stored: nil, position: nil, head: 0),
            lines: [
                "inspections (version 3, never built, head 0): no row changes; stale, so it would be written again"
            ],
            checkRefuses: false, dryRunRefuses: true),
        Standing(
            name: "a row of each kind, one damaged",
            comparison: comparison(
                ProjectionSet.TableDifference(
                    table: table, added: [inspection.bytes], removed: [[0xAB, 0xCD]], changed: [inspection.bytes],
                    damaged: [inspection.bytes])),
            lines: [
                "inspections (version 3, stored 3, at 7 of 7): 1 added, 1 removed, 1 changed",
                "  added \(table) 0a1b2c3d-0000-4000-8000-000000000001",
                "  removed \(table) abcd",
                "  changed \(table) 0a1b2c3d-0000-4000-8000-000000000001 (checksum does not match)",
            ], checkRefuses: true, dryRunRefuses: true),
    ]

    @Test(arguments: standings)
    func eachViewIsSaidAndJudged(_ standing: Standing) throws {
        let report = ViewComparisonReport([standing.comparison])
        #expect(report.lines == standing.lines)
        do {
            try report.requireNoChange("rows stored differ from a fold of the log in")
            #expect(!standing.checkRefuses)
        } catch {
            #expect(standing.checkRefuses)
            guard case .differences(let check, let views) = error else {
                Issue.record("not the views' differences: \(error)")
                return
            }
            #expect(check == "rows stored differ from a fold of the log in" && views == ["inspections"], "\(error)")
        }
        do {
            try report.requireNoChange("a rebuild would change", countingStale: true)
            #expect(!standing.dryRunRefuses)
        } catch {
            #expect(standing.dryRunRefuses)
            #expect(
                error.description
                    == "a rebuild would change the inspections view (listed above). 'jqc rebuild VIEW' brings a view "
                    + "up to date with the log.")
        }
        #expect(report.dryRunJSON["changes"] == .bool(standing.dryRunRefuses))
        #expect(report.dryRunJSON["dry_run"] == .bool(true))
        #expect(report.checkJSON["changes"] == .bool(standing.checkRefuses))
        #expect(report.checkJSON["head"] == .integer(standing.comparison.status.head))
        let view = try #require(report.checkJSON["views"]?.arrayValue?.first)
        #expect(view["stored_version"] == standing.comparison.status.storedVersion.map { .integer($0) } ?? .null)
        #expect(view["stale"] == .bool(standing.comparison.status.isStale))
        #expect(view["differences"]?.arrayValue?.count == (standing.comparison.isEmpty ? 0 : 1))
    }

    @Test func theDifferencesNameTheirRowsInTheJSON() throws {
        let report = ViewComparisonReport(Self.standings[3...].map(\.comparison))
        let view = try #require(report.dryRunJSON["views"]?.arrayValue?.first)
        #expect(view["added"] == .integer(1))
        #expect(
            view["differences"]
                == .array([
                    .object([
                        "table": .string(Self.table), "added": .array([.string(Self.inspection.lowercased)]),
                        "removed": .array([.string("abcd")]), "changed": .array([.string(Self.inspection.lowercased)]),
                        "damaged": .array([.string(Self.inspection.lowercased)]),
                    ])
                ]))
    }

    /// A fresh ledger's views, written as an inspection was recorded, are what a fold of its log writes.
    @Test func aFreshLedgerHasNothingToRebuild() throws {
        let recorded = try FormReportTests.Recorded()
        defer { recorded.ledger.close() }
        let report = ViewComparisonReport(try recorded.ledger.compareViews())
        #expect(report.comparisons.count == InspectionView.Kind.allCases.count)
        #expect(report.lines.allSatisfy { $0.hasSuffix(": no change") }, "\(report.lines)")
        try report.requireNoChange("a rebuild would change", countingStale: true)
        #expect(report.dryRunJSON["changes"] == .bool(false))
    }
}
