import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

// MARK: - log

/// `jqc log`: the events one line each, for a person or (with --json) a tool.
struct LogCommand: RunnableCommand {
    static let path = ["log"]
    static let inspection = OptionSpec(
        "inspection", short: "i", valueName: "ID", help: "Only this inspection's events (any unique prefix).")
    static let since = OptionSpec(
        "since", valueName: "TIME|SEQ", help: "Only events at or after this time or position.")
    static let until = OptionSpec(
        "until", valueName: "TIME|SEQ", help: "Only events at or before this time or position.")
    static let actor = OptionSpec(
        "actor", valueName: "NAME",
        help: "Only events recorded by this actor (any part of the name, or the whole id; any case).")
    static let type = OptionSpec(
        "type", valueName: "TYPE", help: "Only events of this type (inspection.field_set) or family (sync).",
        repeatable: true)
    static let limit = OptionSpec(
        "limit", valueName: "N", help: "At most N events (the first N that match, in log order).")
    static let actors = FlagSpec(
        "actors",
        help: "List who acted instead of the events: id, name, verified, how many events (the other "
            + "options select which events count).")
    static let spec = CommandSpec(
        "log", abstract: "Print the events of the log, one line each: position, time, device, inspection, who, what.",
        discussion: """
            TIME is RFC 3339 (2026-11-29T14:03:07.250000Z, or with an offset) or a date (2026-11-29, a whole \
            UTC day: --since starts at its midnight, --until ends at the next); SEQ is a log position. Bounds \
            are inclusive. Discarded drafts are included: the log keeps everything. Actors named with --as \
            are marked (unverified). A record missing from the log, or unreadable, is shown as such unless \
            --actor, --type or a TIME bound is given (it has no actor, type or time); 'jqc verify' finds \
            every one.

            With --json, each line is one event in the exported form of Schemas/events/envelope.schema.json \
            (Tools/validate-events checks it). Opens the ledger read-only and needs no login.

            --actor matches any part of a name, ignoring case ('--actor dana' finds "Dana Inspector"), and an id \
            only whole ('--actor local:Dan' finds Dan, not Dana) or by its kind ('--actor local:' finds every local \
            actor). \
            --actors lists every actor of the selected events once, with the positions of their first and \
            last event; with --json, one JSON array of {id, name, verified, events, first_position, \
            last_position}.
            """,
        group: "Auditing",
        options: [inspection, since, until, actor, type, limit], flags: [actors])

    var inspection: String?
    var filter: LogFilter
    var listsActors: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        inspection = try parsed.value(of: Self.inspection)
        listsActors = try parsed.isSet(Self.actors)
        filter = LogFilter(
            since: try parsed.moment(of: Self.since), until: try parsed.moment(of: Self.until),
            actor: try parsed.value(of: Self.actor), types: try parsed.values(of: Self.type),
            limit: try parsed.integer(of: Self.limit))
        if let limit = filter.limit, limit < 0 {
            throw parsed.invalid(Self.limit, value: "\(limit)", reason: "expected a whole number of events, 0 or more")
        }
    }

    func run(_ invocation: Invocation) throws {
        for type in filter.types where !LogFilter.isKnownType(type) {
            invocation.stderr.line(
                "jqc: note: '\(type)' is no event type or family this jqc knows "
                    + "(\(LogFilter.knownTypes.joined(separator: ", "))); matching it exactly.")
        }
        let auditor = try invocation.auditorLedger()
        defer { auditor.close() }
        // A whole log is a million lines: written in blocks, not a system
        // call each (a terminal still gets every line as it comes).
        invocation.stdout.buffered()
        if listsActors {
            let actors = try LogActors.count(filter: filter, inspection: inspection, in: auditor)
            ActorListing.print(actors, invocation)
            return
        }
        let printed = try LogListing(auditor: auditor, filter: filter).print(
            inspection: inspection, to: LogLines(invocation: invocation))
        if printed == 0, !invocation.json { invocation.stdout.line("No events match.") }
    }
}

// MARK: - who acted

/// `jqc log --actors`: who recorded the selected events, one line each.
enum ActorListing {
    static func print(_ rows: [LogActors.Row], _ invocation: Invocation) {
        if invocation.json {
            let objects: [JSONValue] = rows.map { row in
                .object([
                    .init("id", .string(row.actor.id)), .init("name", .string(row.actor.name)),
                    .init("verified", .bool(row.actor.verified)), .init("events", .integer(row.events)),
                    .init("first_position", .integer(row.first)), .init("last_position", .integer(row.last)),
                ])
            }
            invocation.stdout.line(JSONValue.array(objects).serialized())
            return
        }
        invocation.printTable(
            header: ["ID", "NAME", "VERIFIED", "EVENTS", "FIRST", "LAST"],
            rows: rows.map { row in
                [
                    TerminalText.singleLine(row.actor.id), TerminalText.singleLine(row.actor.name),
                    row.actor.verified ? "yes" : "no (--as)", "\(row.events)", "\(row.first)", "\(row.last)",
                ]
            }, none: "No events match.")
    }
}

/// The listing's lines on standard output, its notes on standard error.
struct LogLines: LogOutput {
    let invocation: Invocation
    var json: Bool { invocation.json }
    var isTerminal: Bool { invocation.stdout.isTerminal }
    func write(utf8 bytes: [UInt8]) { invocation.stdout.write(utf8: bytes) }
    func line(_ text: String) { invocation.stdout.line(text) }
    func note(_ text: String) { invocation.stderr.line(text) }
    var readerIsGone: Bool { invocation.stdout.readerIsGone }
}
