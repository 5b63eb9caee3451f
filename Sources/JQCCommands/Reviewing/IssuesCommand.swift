import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc issues`.
struct IssuesCommand: RunnableCommand {
    static let path = ["issues"]
    static let severity = OptionSpec(
        "severity", valueName: "SEVERITY", help: "Only this severity: low, medium, high or critical.")
    static let spec = CommandSpec(
        "issues", abstract: "List the issues flagged on this device.", group: "Reviewing",
        options: [severity, .facility])

    var filter = IssueFilter()

    init(_ parsed: ParsedCommand) throws(UsageError) {
        filter.facility = try parsed.value(of: .facility)
        if let text = try parsed.value(of: Self.severity) {
            do {
                filter.severity = try IssueSeverity(parsing: text)
            } catch {
                throw parsed.invalid(Self.severity, value: text, reason: "expected low, medium, high or critical")
            }
        }
    }

    func run(_ invocation: Invocation) throws {
        let all = try invocation.reading { try $0.issues() }
        let rows = filter.apply(all).sorted { $0.flaggedAt < $1.flaggedAt }
        if invocation.json {
            invocation.printJSON(rows)
            return
        }
        guard !rows.isEmpty else {
            if !filter.isEmpty, !all.isEmpty {
                var parts: [String] = []
                if let severity = filter.severity { parts.append("severity \(severity.rawValue)") }
                if let facility = filter.facility { parts.append("facility \"\(facility.terminalSafe)\"") }
                invocation.stdout.line(
                    "None of the \(all.count) issue\(all.count == 1 ? "" : "s") matches \(parts.joined(separator: ", "))."
                )
                return
            }
            invocation.stdout.line("No issues.")
            return
        }
        invocation.printTable(
            header: ["ID", "SEVERITY", "FACILITY", "INSPECTION", "SYNC", "DESCRIPTION"],
            rows: rows.map { r in
                [
                    String(r.id.lowercased.prefix(8)), r.severity.rawValue, r.facilityName,
                    String(r.inspectionID.lowercased.prefix(8)),
                    r.syncState.rawValue + (r.possiblySentTwice ? " (may be held twice)" : ""), r.description,
                ]
            })
        if rows.contains(where: \.possiblySentTwice) {
            invocation.stdout.line(
                "(may be held twice): sent again after the server's answer was lost; this server offers no way to "
                    + "check, so it may hold the issue twice.")
        }
    }
}
