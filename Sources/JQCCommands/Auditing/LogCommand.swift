import ArgumentParsing
import Foundation
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
        "actor", valueName: "NAME", help: "Only events recorded by this actor (any part of the name or id, any case).")
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

            --actor matches any part of a name or id, ignoring case ('--actor dana' finds "Dana Inspector"). \
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
            let actors = try ActorListing.count(filter: filter, inspection: inspection, in: auditor)
            ActorListing.print(actors, invocation)
            return
        }
        var printer = LogPrinter(auditor: auditor, invocation: invocation, filter: filter)
        // What was formatted is shown even when a read fails part way.
        defer { printer.flush() }
        if let inspection {
            let id = try auditor.resolveInspection(inspection)
            for entry in try auditor.history(of: id) {
                guard printer.wantsMore else { break }
                switch entry {
                case .record(let record):
                    try printer.print(record)
                case .missing(let version, let position):
                    if filter.admitsHole(at: position) {
                        printer.printHole(
                            at: position,
                            "version \(version) of \(EventWording.short(id)) is indexed here, but the log holds no "
                                + "record there")
                    }
                case .unreadable(let version, let position, let why):
                    if filter.admitsHole(at: position) {
                        printer.printHole(
                            at: position,
                            "version \(version) of \(EventWording.short(id)) is indexed here, but the record is "
                                + "unreadable (\(why))")
                    }
                }
            }
        } else {
            // The scan hands over damaged records and gaps as entries, so they
            // are shown as such and the listing goes on. Records are read
            // and their payloads decoded on a thread of their own, ahead of
            // the formatting here.
            try auditor.log.scanAhead(from: filter.firstPosition, prepare: LogPrinter.preparation(for: filter)) {
                entry, decoded in
                guard printer.wantsMore else { return false }
                switch entry {
                case .record(let record):
                    guard !filter.isPast(position: record.position) else { return false }
                    try printer.print(record, decoded: decoded)
                case .unreadable(let position, let reason):
                    guard !filter.isPast(position: position) else { return false }
                    if filter.admitsHole(at: position) {
                        printer.printHole(at: position, "the record stored here is unreadable (\(reason))")
                    }
                case .missing(let positions):
                    guard !filter.isPast(position: positions.lowerBound) else { return false }
                    if filter.admitsHole(at: positions.lowerBound) {
                        printer.printHole(
                            at: positions.lowerBound,
                            positions.count == 1
                                ? "no record: position \(positions.lowerBound) is missing from the log"
                                : "no records: positions \(positions.lowerBound)–\(positions.upperBound) are "
                                    + "missing from the log")
                    }
                }
                return true
            }
        }
        if printer.printed == 0, !invocation.json { invocation.stdout.line("No events match.") }
    }
}

// MARK: - who acted

/// `jqc log --actors`: who recorded the selected events, one line each.
struct ActorListing {
    struct Row {
        var actor: Actor
        var events = 0
        var first: UInt64 = 0
        var last: UInt64 = 0
    }

    /// The actors of the events `filter` admits (of one inspection, or of
    /// the whole log), in the order each first acted. `--limit` does not
    /// apply: every selected event counts.
    static func count(filter: LogFilter, inspection: String?, in auditor: AuditorLedger) throws -> [Row] {
        var rows: [Actor: Row] = [:]
        var order: [Actor] = []
        func add(_ record: EventRecord) {
            guard filter.admits(record) else { return }
            if rows[record.actor] == nil {
                rows[record.actor] = Row(actor: record.actor, first: record.position)
                order.append(record.actor)
            }
            rows[record.actor]?.events += 1
            rows[record.actor]?.last = record.position
        }
        if let inspection {
            for case .record(let record) in try auditor.history(of: try auditor.resolveInspection(inspection)) {
                add(record)
            }
        } else {
            try auditor.log.read { reader in
                try reader.scan(from: filter.firstPosition) { entry in
                    // Holes have no actor: 'jqc log' and 'jqc verify' show them.
                    guard case .record(let record) = entry else { return true }
                    guard !filter.isPast(position: record.position) else { return false }
                    add(record)
                    return true
                }
            }
        }
        return order.compactMap { rows[$0] }
    }

    static func print(_ rows: [Row], _ invocation: Invocation) {
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
        guard !rows.isEmpty else {
            invocation.stdout.line("No events match.")
            return
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["ID", "NAME", "VERIFIED", "EVENTS", "FIRST", "LAST"],
                rows: rows.map { row in
                    [
                        TerminalText.singleLine(row.actor.id), TerminalText.singleLine(row.actor.name),
                        row.actor.verified ? "yes" : "no (--as)", "\(row.events)", "\(row.first)", "\(row.last)",
                    ]
                }))
    }
}
