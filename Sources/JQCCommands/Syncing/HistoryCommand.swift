import ArgumentParsing
import CurlTransport
import Dispatch
import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import SyncWorker

/// `jqc history [--limit N] [--offset K]`: the server's completed inspections.
struct HistoryCommand: RunnableCommand {
    static let path = ["history"]
    static let limit = OptionSpec("limit", valueName: "N", help: "How many (1-100).", defaultDescription: "30")
    static let offset = OptionSpec("offset", valueName: "K", help: "How many to skip first.", defaultDescription: "0")
    static let spec = CommandSpec(
        "history", abstract: "List the server's completed inspections, newest first (online only).",
        discussion: """
            Offline, 'jqc inspections' lists what this device recorded. Filters combine: every one given must \
            hold, on what the server's summary carries; names are matched ignoring case; TIME is RFC 3339 \
            (2026-11-29T14:03:07Z) or a date (2026-11-29), compared with the completion time. Filtered, \
            --limit and --offset count the matching records, and at most the newest 10000 records are read.
            """,
        group: "Syncing",
        options: [limit, offset, .facility, area, since, until, inspector, followUp])
    static let area = OptionSpec("area", valueName: "AREA", help: "Only this area (its id or name).")
    static let since = OptionSpec.since("completed")
    static let until = OptionSpec.until("completed")
    static let inspector = OptionSpec(
        "inspector", valueName: "NAME", help: "Only those by this inspector (any part of the name, ignoring case).")
    static let followUp = OptionSpec(
        "follow-up", valueName: "YES|NO", help: "Only those whose follow-up is (yes) or is not (no) required.")

    var limit: Int
    var offset: Int
    var filter: HistoryFilter

    init(_ parsed: ParsedCommand) throws(UsageError) {
        limit = try parsed.integer(of: Self.limit, default: 30)
        offset = try parsed.integer(of: Self.offset, default: 0)
        guard (1...100).contains(limit) else {
            throw parsed.invalid(Self.limit, value: "\(limit)", reason: "expected 1 to 100")
        }
        guard (0...Int(Int32.max)).contains(offset) else {
            throw parsed.invalid(Self.offset, value: "\(offset)", reason: "expected 0 to \(Int32.max)")
        }
        filter = HistoryFilter(
            facility: try parsed.value(of: .facility), area: try parsed.value(of: Self.area),
            since: try InspectionsCommand.time(parsed, Self.since),
            until: try InspectionsCommand.time(parsed, Self.until),
            inspector: try parsed.value(of: Self.inspector))
        if let text = try parsed.value(of: Self.followUp) {
            switch text.trimming(.spaces).lowercased() {
            case "yes": filter.followUp = true
            case "no": filter.followUp = false
            default: throw parsed.invalid(Self.followUp, value: text, reason: "expected yes or no")
            }
        }
    }

    func run(_ invocation: Invocation) throws {
        let session = try invocation.serverSession()
        var filter = self.filter
        if let area = filter.area {
            filter.areaIDs = try ServerRecordNaming.areaIDs(named: area, in: invocation.ledger())
        }
        let (limit, offset) = (self.limit, self.offset)
        let page = try invocation.online(
            "list the server's history",
            offlineHint: "The history is online only; 'jqc inspections' lists what this device recorded."
        ) { () throws(APIError) in
            try session.authorized { token throws(APIError) in
                try HistoryPage.read(
                    limit: limit, offset: offset, filter: filter,
                    all: { limit, offset throws(APIError) in
                        try session.api.history(accessToken: token, limit: limit, offset: offset)
                    },
                    filtered: { limit, offset, admits throws(APIError) in
                        try session.api.filteredHistory(
                            accessToken: token, limit: limit, offset: offset, admits: admits)
                    })
            }
        }
        if invocation.json {
            invocation.printJSON(
                .object([
                    "inspections": .array(page.inspections), "total": .integer(page.total),
                    "limit": .integer(limit), "offset": .integer(offset),
                ]))
            return
        }
        if let empty = page.emptyLine {
            invocation.stdout.line(empty)
            return
        }
        invocation.printTable(header: HistoryPage.header, rows: page.rows)
        invocation.stdout.line(page.footer)
    }
}
