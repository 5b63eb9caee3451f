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

/// Prints log lines, naming fields through each inspection's pinned template.
///
/// A listing of the whole log is a million lines, so each event costs one
/// decode of its payload, and only if it is printed: a record the filter
/// skips is judged on its envelope (type, actor, time, position) alone, and
/// a skipped start or template pin is kept undecoded until a printed event
/// of its inspection needs the template. The template itself is looked up
/// only for what it names: fields (in text) and old payloads to upcast.
/// Lines are formatted as bytes into one reused buffer.
struct LogPrinter {
    let auditor: AuditorLedger
    let invocation: Invocation
    let filter: LogFilter
    private(set) var printed = 0
    /// Templates by content hash, and which hash each stream started from.
    private var templates: [String: Template] = [:]
    private var streamTemplates: [UUID: String] = [:]
    /// Skipped template pins and starts, decoded when a template is needed.
    private var unreadPins: [EventRecord] = []
    private var unreadStarts: [UUID: EventRecord] = [:]
    /// Whether each template held under a hash has that content hash
    /// (computed once per template, not once per start that names it).
    private var hashMatches: [String: Bool] = [:]
    /// Each stream's template once found (emptied when templates change).
    private var resolved: [UUID: Template] = [:]
    /// When each stream's last record seen was recorded, to mark a record
    /// recorded before it (`TimelineEntry.recordedBeforePrevious`).
    private var previousTimes: [UUID: Timestamp] = [:]
    /// The current schema version of each type name seen (0: unknown).
    private var currentVersions: [String: Int] = [:]
    /// Lines formatted and not yet handed to stdout (a block at a time;
    /// a line at a time to a terminal).
    private var block: [UInt8] = []
    private static let blockSize = 1 << 16

    init(auditor: AuditorLedger, invocation: Invocation, filter: LogFilter) {
        self.auditor = auditor
        self.invocation = invocation
        self.filter = filter
    }

    var wantsMore: Bool { filter.limit.map { printed < $0 } ?? true }

    /// A place where the log should hold a record and does not: on stdout
    /// in text (it is part of what happened), on stderr with --json (whose
    /// lines must each be an event). It never counts towards --limit.
    mutating func printHole(at position: UInt64, _ what: String) {
        flush()
        if invocation.json {
            invocation.stderr.line("jqc: position \(position): \(what)")
        } else {
            let number = String(position)
            // The reason may quote stored bytes (a type name, a text): shown safely.
            invocation.stdout.line(
                String(repeating: " ", count: max(0, 7 - number.count)) + number
                    + "  (\(TerminalText.singleLine(what)))")
        }
    }

    /// What the reading thread does ahead of `print`: it passes over the
    /// records the filter leaves out, except the pins and starts that name
    /// templates and those past the filter's end (where the listing
    /// stops), and decodes the payload of each record the filter admits in
    /// the current version of its type (an older one needs the inspection's
    /// template, found here). A payload that cannot be decoded is left to
    /// `print`, which shows it as unreadable with the reason.
    static func preparation(for filter: LogFilter) -> @Sendable (EventRecord) -> ReadAhead.Preparation {
        let pinned = InspectionEventType.templatePinned.rawValue
        let started = InspectionEventType.started.rawValue
        return { record in
            guard filter.admits(record) else {
                let wanted = record.type == pinned || record.type == started || filter.isPast(position: record.position)
                return wanted ? .pass(nil) : .skip
            }
            guard !EventUpcaster.needsUpcast(type: record.type, schemaVersion: record.schemaVersion) else {
                return .pass(nil)
            }
            return .pass(try? InspectionEvent.decode(record))
        }
    }

    mutating func print(_ record: EventRecord, decoded: InspectionEvent? = nil) throws {
        // Against the stream's record seen before this one (a filtered
        // listing may not have seen the one just before it).
        let wentBack = previousTimes[record.stream].map { record.recordedAt < $0 } ?? false
        previousTimes[record.stream] = record.recordedAt
        guard filter.admits(record) else {
            if record.type == InspectionEventType.templatePinned.rawValue {
                unreadPins.append(record)
                // Bounded: a skipped pin holds a whole template.
                if unreadPins.count >= Self.unreadPinLimit { readPins() }
            } else if record.type == InspectionEventType.started.rawValue {
                unreadStarts[record.stream] = record
            }
            return
        }
        printed += 1
        // Only an old payload needs the template to be read at all.
        let upcasts = needsUpcast(record)
        var template = upcasts ? try template(of: record) : nil
        let event: InspectionEvent
        do {
            event = try decoded ?? EventUpcaster.decode(record, template: template)
        } catch {
            // Shown as stored, so a damaged or newer event is never hidden.
            let stored = InspectionEvent.unrecognized(
                StoredPayload(type: record.type, schemaVersion: record.schemaVersion, payload: record.payload))
            if invocation.json {
                invocation.stderr.line(
                    "jqc: position \(record.position): the \(TerminalText.singleLine(record.type)) event cannot be "
                        + "read: \(TerminalText.singleLine("\(error)"))")
                emit { EventExport.appendJSONLine(for: record, event: stored, to: &$0) }
            } else {
                let summary = "(unreadable \(record.type) event: \(error))"
                emit { LogFilter.appendLine(for: record, summary: summary, to: &$0) }
            }
            return
        }
        switch event {
        case .templatePinned(let pinned):
            // Kept for naming fields of the events that follow.
            remember(pinned.template, as: pinned.templateHash)
        case .started(let started):
            streamTemplates[record.stream] = started.templateHash
            unreadStarts[record.stream] = nil
            resolved[record.stream] = nil
        default:
            break
        }
        if invocation.json {
            emit { EventExport.appendJSONLine(for: record, event: event, to: &$0) }
            // The lines stay events (Schemas/events); the warning goes beside them, as a hole's does.
            if wentBack {
                flush()
                invocation.stderr.line(
                    "jqc: position \(record.position): \(TimelineEntry.clockWentBack) of inspection "
                        + "\(record.stream.lowercased.prefix(8))")
            }
        } else {
            if !upcasts, Self.namesFields(event) { template = try self.template(of: record) }
            var hash: String?
            if case .started(let started) = event, let template, let matches = hashMatches[started.templateHash],
                templates[started.templateHash] == template
            {
                hash = matches ? started.templateHash : nil
            }
            var summary = EventWording.describe(event, stream: record.stream, template: template, templateHash: hash)
            if wentBack { summary += "  " + TimelineEntry.clockWentBack }
            emit { LogFilter.appendLine(for: record, summary: summary, to: &$0) }
        }
    }

    /// How many skipped pins wait undecoded at most.
    private static let unreadPinLimit = 256

    /// Decodes the pins skipped so far, in log order (a later pin of a hash
    /// wins, as when printed).
    private mutating func readPins() {
        for pin in unreadPins {
            if case .templatePinned(let pinned) = try? InspectionEvent.decode(pin) {
                remember(pinned.template, as: pinned.templateHash)
            }
        }
        unreadPins.removeAll()
    }

    /// Whether the words for `event` use its inspection's template.
    private static func namesFields(_ event: InspectionEvent) -> Bool {
        switch event {
        case .started, .fieldSet, .fieldCleared: true
        case .photoCaptured(let captured): captured.fieldID != nil
        default: false
        }
    }

    /// Formats one line into the block, and hands the block to stdout when
    /// it is full (or at once, to a terminal).
    private mutating func emit(_ format: (inout [UInt8]) -> Void) {
        format(&block)
        block.append(UInt8(ascii: "\n"))
        if block.count >= Self.blockSize || invocation.stdout.isTerminal { flush() }
    }

    /// Hands the lines formatted so far to stdout: before anything else is
    /// written to it, and at the end.
    mutating func flush() {
        guard !block.isEmpty else { return }
        invocation.stdout.write(utf8: block)
        block.removeAll(keepingCapacity: true)
    }

    /// `EventUpcaster.needsUpcast`, remembered by type name.
    private mutating func needsUpcast(_ record: EventRecord) -> Bool {
        if let current = currentVersions[record.type] { return record.schemaVersion < current }
        let current = InspectionEventType.named(record.type)?.schemaVersion ?? 0
        currentVersions[record.type] = current
        return record.schemaVersion < current
    }

    /// Keeps `template` for naming fields, under the hash it was stored with.
    private mutating func remember(_ template: Template, as hash: String) {
        templates[hash] = template
        hashMatches[hash] = template.contentHash == hash
        resolved.removeAll(keepingCapacity: true)
    }

    /// The pinned template of the record's inspection: from a start seen in
    /// this run, else from the stream's first events (read through its
    /// index), else from the views (accepted only if it hashes right).
    /// Decoding failures here only leave fields unnamed; the event itself is
    /// decoded, and its failure shown, by `print`.
    private mutating func template(of record: EventRecord) throws -> Template? {
        if let known = resolved[record.stream] { return known }
        let found = try findTemplate(of: record)
        if let found { resolved[record.stream] = found }
        return found
    }

    private mutating func findTemplate(of record: EventRecord) throws -> Template? {
        if streamTemplates[record.stream] == nil, let start = unreadStarts.removeValue(forKey: record.stream),
            case .started(let started) = try? InspectionEvent.decode(start)
        {
            streamTemplates[record.stream] = started.templateHash
        }
        if streamTemplates[record.stream] == nil {
            let entries = try auditor.history(of: record.stream)
            streamTemplates[record.stream] = AuditTimeline.templateHash(in: entries) ?? ""
            for (hash, pinned) in AuditTimeline.pinnedTemplates(in: entries) where templates[hash] == nil {
                remember(pinned.template, as: hash)
            }
        }
        guard let hash = streamTemplates[record.stream], !hash.isEmpty else { return nil }
        if templates[hash] == nil { readPins() }
        if let known = templates[hash] { return known }
        if let viewed = try auditor.ledger?.pinnedTemplate(hash: hash), viewed.contentHash == hash {
            templates[hash] = viewed
            hashMatches[hash] = true
            resolved.removeAll(keepingCapacity: true)
            return viewed
        }
        return nil
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
