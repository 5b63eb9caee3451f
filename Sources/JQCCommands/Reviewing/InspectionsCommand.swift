import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

struct InspectionsCommand: RunnableCommand {
    static let path = ["inspections"]
    static let area = OptionSpec("area", valueName: "AREA", help: "Only this area (its name).")
    static let status = OptionSpec("status", valueName: "STATUS", help: "Only drafts or only completed ones.")
    static let since = OptionSpec.since("started")
    static let until = OptionSpec.until("started")
    static let inspector = OptionSpec(
        "inspector", valueName: "NAME", help: "Only those started by this person (any part of the name, ignoring case)."
    )
    static let spec = CommandSpec(
        "inspections", abstract: "List the inspections on this device (discarded drafts are hidden).",
        discussion: """
            Filters combine: every one given must hold. Names are matched ignoring case; TIME is RFC 3339 \
            (2026-11-29T14:03:07Z) or a date (2026-11-29).
            """,
        group: "Reviewing", options: [.facility, area, status, since, until, inspector])

    var filter: InspectionFilter

    init(_ parsed: ParsedCommand) throws(UsageError) {
        filter = InspectionFilter(
            facility: try parsed.value(of: .facility), area: try parsed.value(of: Self.area),
            since: try Self.time(parsed, Self.since), until: try Self.time(parsed, Self.until),
            inspector: try parsed.value(of: Self.inspector))
        if let text = try parsed.value(of: Self.status) {
            let wanted = text.trimming(.spaces).lowercased()
            guard let status = InspectionStatus(rawValue: wanted), status == .draft || status == .completed else {
                throw parsed.invalid(Self.status, value: text, reason: "expected draft or completed")
            }
            filter.status = status
        }
    }

    /// A time bound: a moment that is a time, never a log position.
    static func time(_ parsed: ParsedCommand, _ option: OptionSpec) throws(UsageError) -> LogMoment? {
        guard let text = try parsed.value(of: option) else { return nil }
        guard let moment = LogMoment(parsing: text), case .time = moment else {
            throw parsed.invalid(
                option, value: text,
                reason: "expected a time (RFC 3339 such as 2026-11-29T14:03:07Z, or a date such as 2026-11-29)")
        }
        return moment
    }

    /// The filter in words: `facility "Harbor Tower", status draft`.
    static func describe(_ filter: InspectionFilter) -> String {
        var parts: [String] = []
        if let facility = filter.facility { parts.append("facility \"\(facility.terminalSafe)\"") }
        if let area = filter.area { parts.append("area \"\(area.terminalSafe)\"") }
        if let status = filter.status { parts.append("status \(status.rawValue)") }
        if let since = filter.since { parts.append("started since \(since)") }
        if let until = filter.until { parts.append("started until \(until)") }
        if let inspector = filter.inspector { parts.append("inspector \"\(inspector.terminalSafe)\"") }
        return parts.joined(separator: ", ")
    }

    func run(_ invocation: Invocation) throws {
        try InspectionListing.print(.all, invocation, filter: filter)
    }
}
