import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc issues`.
struct IssuesCommand: RunnableCommand {
    static let path = ["issues"]
    static let spec = CommandSpec(
        "issues", abstract: "List the issues flagged on this device.", group: "Reviewing")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let rows = try invocation.reading { try $0.issues() }.sorted { $0.flaggedAt < $1.flaggedAt }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(rows))
            return
        }
        guard !rows.isEmpty else {
            invocation.stdout.line("No issues.")
            return
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["ID", "SEVERITY", "FACILITY", "INSPECTION", "SYNC", "DESCRIPTION"],
                rows: rows.map { r in
                    [
                        String(r.id.lowercased.prefix(8)), r.severity.rawValue, r.facilityName,
                        String(r.inspectionID.lowercased.prefix(8)), r.syncState.rawValue, r.description,
                    ]
                }))
    }
}
