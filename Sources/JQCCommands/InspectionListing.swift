import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
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
    static func print(_ listing: InspectionLedger.Listing, _ invocation: Invocation) throws {
        let summaries = try invocation.reading { try $0.summaries(listing) }.sorted {
            ($0.startedAt?.microsecondsSinceEpoch ?? 0) < ($1.startedAt?.microsecondsSinceEpoch ?? 0)
        }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(summaries))
            return
        }
        guard !summaries.isEmpty else {
            let what =
                switch listing {
                case .drafts: "No drafts."
                case .followUps: "No inspections need follow-up."
                case .all: "No inspections yet. Start one with 'jqc start'."
                }
            invocation.stdout.line(what)
            return
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["ID", "STATUS", "TEMPLATE", "FACILITY", "STARTED", "SCORE", "SYNC"],
                rows: summaries.map { s in
                    [
                        String(s.id.lowercased.prefix(8)), s.status.rawValue, s.templateName,
                        s.facilityName + (s.areaName.map { " / \($0)" } ?? ""),
                        s.startedAt.map { String($0.iso8601.prefix(16)) } ?? "",
                        s.score.map { String(format: "%.2f", $0) } ?? "-", s.syncState.rawValue,
                    ]
                }))
    }
}

struct InspectionsCommand: InspectionListingCommand {
    static let path = ["inspections"]
    static let listing = InspectionLedger.Listing.all
    static let spec = CommandSpec(
        "inspections", abstract: "List the inspections on this device (discarded drafts are hidden).",
        group: "Reviewing")
}

struct DraftsCommand: InspectionListingCommand {
    static let path = ["drafts"]
    static let listing = InspectionLedger.Listing.drafts
    static let spec = CommandSpec("drafts", abstract: "List draft inspections.", group: "Reviewing")
}

struct FollowUpsCommand: InspectionListingCommand {
    static let path = ["followups"]
    static let listing = InspectionLedger.Listing.followUps
    static let spec = CommandSpec(
        "followups", abstract: "List completed inspections whose follow-up is still open.", group: "Reviewing")
}
