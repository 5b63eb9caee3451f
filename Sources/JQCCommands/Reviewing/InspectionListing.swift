import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc inspections`, `jqc drafts`, `jqc followups`: they differ only in
/// their spec and in which view they read.
protocol InspectionListingCommand: RunnableCommand {
    static var listing: InspectionLedger.Listing { get }
    init()
}

extension InspectionListingCommand {
    init(_ parsed: ParsedCommand) throws(UsageError) { self.init() }

    func run(_ invocation: Invocation) throws {
        try InspectionListing.print(Self.listing, invocation)
    }
}

/// Prints a listing of inspection summaries, as a table or as JSON.
enum InspectionListing {
    static func print(
        _ listing: InspectionLedger.Listing, _ invocation: Invocation, filter: InspectionFilter = InspectionFilter()
    ) throws {
        let all = try invocation.reading { try $0.summaries(listing) }
        let summaries = filter.apply(all).sorted {
            ($0.startedAt?.microsecondsSinceEpoch ?? 0) < ($1.startedAt?.microsecondsSinceEpoch ?? 0)
        }
        if invocation.json {
            invocation.printJSON(summaries)
            return
        }
        guard !summaries.isEmpty else {
            if !filter.isEmpty, !all.isEmpty {
                invocation.stdout.line(
                    "None of the \(all.count) inspection\(all.count == 1 ? "" : "s") matches "
                        + "\(InspectionsCommand.describe(filter)).")
                return
            }
            let what =
                switch listing {
                case .drafts: "No drafts."
                case .followUps: "No inspections need follow-up."
                case .all: "No inspections yet. Start one with 'jqc start'."
                }
            invocation.stdout.line(what)
            return
        }
        invocation.printTable(
            header: ["ID", "STATUS", "TEMPLATE", "FACILITY", "STARTED", "SCORE", "SYNC"],
            rows: summaries.map { s in
                [
                    String(s.id.lowercased.prefix(8)), s.status.rawValue, s.templateName,
                    s.facilityName + (s.areaName.map { " / \($0)" } ?? ""),
                    s.startedAt.map { String($0.iso8601.prefix(16)) } ?? "",
                    s.score.map { FixedPoint.text($0, places: 2) } ?? "-", s.syncState.rawValue,
                ]
            })
    }
}
