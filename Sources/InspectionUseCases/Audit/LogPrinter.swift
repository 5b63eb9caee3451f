import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// Prints log lines, naming fields through each inspection's pinned template.
///
/// A listing of the whole log is a million lines, so each event costs one
/// decode of its payload, and only if it is printed: a record the filter
/// skips is judged on its envelope (type, actor, time, position) alone, and
/// a skipped start or template pin is kept undecoded until a printed event
/// of its inspection needs the template. The template itself is looked up
/// only for what it names: fields (in text) and old payloads to upcast.
/// Lines are formatted as bytes into one reused buffer.
///
/// Not generic over its output on purpose: called from another module, a
/// generic printer ran unspecialised, looking up its own field layout in
/// the runtime's metadata for every record (a few percent of a listing).
public struct LogPrinter {
    let auditor: AuditorLedger
    let output: any LogOutput
    let filter: LogFilter
    /// This ledger's device id: a record of another device's id in this log
    /// (a store that changed identity) names its actor as a claim.
    let ownDevice: UUID?
    public private(set) var printed = 0
    /// `--limit`, or no limit; stored, so the listing's check for each
    /// record reads two numbers.
    private let limit: Int
    /// `output.json` and `output.isTerminal`, asked once.
    private let json: Bool
    private let toTerminal: Bool
    /// Templates by content hash, and which hash each stream started from.
    private var templates: [String: Template] = [:]
    private var streamTemplates: [UUID: String] = [:]
    /// Skipped template pins and starts, decoded when a template is needed.
    private var unreadPins: [EventRecord] = []
    private var unreadStarts: [UUID: EventRecord] = [:]
    /// Whether each template held under a hash has that content hash
    /// (computed once per template, not once per start that names it).
    private var hashMatches: [String: Bool] = [:]
    /// What the listing keeps of each stream, looked up once per record.
    private var streams: [UUID: StreamSeen] = [:]
    /// Bumped whenever the templates known change: a stream's field names
    /// found before then are looked for again.
    private var templatesEpoch = 0
    /// Field names by template hash, shared by the streams of one template.
    private var namesByHash: [String: EventWording.FieldNames] = [:]
    /// The current schema version of each type name seen (0: unknown).
    private var currentVersions: [String: Int] = [:]
    /// What the JSON lines share, formatted once while it stays the same.
    private var jsonParts = EventExport.SharedParts()
    /// Lines formatted and not yet handed to stdout (a block at a time;
    /// a line at a time to a terminal).
    private var block: [UInt8] = []
    private static var blockSize: Int { 1 << 16 }
    /// `output.readerIsGone`, as of the last block handed over.
    private var readerGone = false

    /// One stream as the listing has seen it: when its last record seen
    /// was recorded, to mark a record recorded before it
    /// (`TimelineEntry.recordedBeforePrevious`), and its template's field
    /// names once found, while `epoch` is the printer's `templatesEpoch`.
    private struct StreamSeen {
        var lastRecordedAt: Timestamp
        var names: EventWording.FieldNames?
        var epoch: Int
    }

    public init(auditor: AuditorLedger, output: any LogOutput, filter: LogFilter, ownDevice: UUID? = nil) {
        self.auditor = auditor
        self.output = output
        self.filter = filter
        self.ownDevice = ownDevice
        limit = filter.limit ?? .max
        json = output.json
        toTerminal = output.isTerminal
    }

    /// Whether `record` is another device's: its actor is then that
    /// device's word, not a login this ledger checked.
    func isClaim(_ record: EventRecord) -> Bool {
        guard let ownDevice else { return false }
        return record.device != ownDevice
    }

    /// Whether another record should be printed: not past `--limit`, and
    /// somebody still reads (checked as each block is handed over).
    public var wantsMore: Bool { printed < limit && !readerGone }

    /// A place where the log should hold a record and does not: on stdout
    /// in text (it is part of what happened), on stderr with --json (whose
    /// lines must each be an event). It never counts towards --limit.
    public mutating func printHole(at position: UInt64, _ what: String) {
        flush()
        if json {
            output.note("jqc: position \(position): \(what)")
        } else {
            let number = String(position)
            // The reason may quote stored bytes (a type name, a text): shown safely.
            output.line(
                String(repeating: " ", count: max(0, 7 - number.count)) + number
                    + "  (\(TerminalText.singleLine(what)))")
        }
    }

    /// What the reading thread does ahead of `print`: it passes over the
    /// records the filter leaves out, except the pins and starts that name
    /// templates and those past the filter's end (where the listing
    /// stops), and decodes the payload of each record the filter admits in
    /// the current version of its type (an older one needs the inspection's
    /// template, found here), when it is ahead of `print` (else `print`
    /// decodes it). A payload that cannot be decoded is left to `print`,
    /// which shows it as unreadable with the reason.
    public static func preparation(for filter: LogFilter) -> @Sendable (EventRecord, Bool) -> ReadAhead.Preparation {
        let pinned = InspectionEventType.templatePinned.rawValue
        let started = InspectionEventType.started.rawValue
        return { record, ahead in
            guard filter.admits(record) else {
                let wanted = record.type == pinned || record.type == started || filter.isPast(position: record.position)
                return wanted ? .pass(nil) : .skip
            }
            // A record of an older version is refused by `decode` (it needs
            // the upcaster): nil, as for one that cannot be decoded, without
            // looking its type up twice.
            return .pass(ahead ? try? InspectionEvent.decode(record) : nil)
        }
    }

    /// Prints `record` if the filter admits it (`decoded`: its payload as
    /// the reading thread decoded it), else keeps what it says of templates.
    public mutating func print(_ record: EventRecord, decoded: InspectionEvent? = nil) throws {
        // Against the stream's record seen before this one (a filtered
        // listing may not have seen the one just before it).
        var wentBack = false
        var known: EventWording.FieldNames?
        if let index = streams.index(forKey: record.stream) {
            let seen = streams.values[index]
            wentBack = record.recordedAt < seen.lastRecordedAt
            if seen.epoch == templatesEpoch { known = seen.names }
            streams.values[index].lastRecordedAt = record.recordedAt
        } else {
            streams[record.stream] = StreamSeen(lastRecordedAt: record.recordedAt, epoch: -1)
        }
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
        // Only an old payload needs the template to be read at all (the
        // reading thread decodes only those of the current version).
        let upcasts = decoded == nil && needsUpcast(record)
        let names = upcasts ? try known ?? names(of: record) : nil
        let template = names?.template
        let event: InspectionEvent
        do {
            event = try decoded ?? EventUpcaster.decode(record, template: template)
        } catch {
            printUnreadable(record, error)
            return
        }
        switch event {
        case .templatePinned(let pinned):
            // Kept for naming fields of the events that follow.
            remember(pinned.template, as: pinned.templateHash)
        case .started(let started):
            streamTemplates[record.stream] = started.templateHash
            unreadStarts[record.stream] = nil
            known = nil
            streams[record.stream]?.epoch = -1
        default:
            break
        }
        if json {
            printJSON(record, event, wentBack: wentBack)
        } else {
            try printText(record, event, names: upcasts ? names : known, read: upcasts, wentBack: wentBack)
        }
    }

    /// A payload that cannot be decoded, shown as stored, so a damaged or
    /// newer event is never hidden.
    private mutating func printUnreadable(_ record: EventRecord, _ error: any Error) {
        let stored = InspectionEvent.unrecognized(
            StoredPayload(type: record.type, schemaVersion: record.schemaVersion, payload: record.payload))
        if json {
            output.note(
                "jqc: position \(record.position): the \(TerminalText.singleLine(record.type)) event cannot be "
                    + "read: \(TerminalText.singleLine("\(error)"))")
            emit { EventExport.appendJSONLine(for: record, event: stored, to: &$0) }
        } else {
            let summary = "(unreadable \(record.type) event: \(error))"
            emit { LogFilter.appendLine(for: record, summary: summary, to: &$0) }
        }
    }

    /// One event as its exported JSON line.
    private mutating func printJSON(_ record: EventRecord, _ event: InspectionEvent, wentBack: Bool) {
        let start = block.count
        EventExport.appendJSONLine(for: record, event: event, sharing: &jsonParts, to: &block)
        if isClaim(record) { Self.markClaim(record, in: &block, from: start) }
        endLine()
        // The lines stay events (Schemas/events); the warning goes beside them, as a hole's does.
        if wentBack {
            flush()
            output.note(
                "jqc: position \(record.position): \(TimelineEntry.clockWentBack) of inspection "
                    + "\(record.stream.lowercased.prefix(8))")
        }
    }

    /// One event in words; `read`: whether the template was looked up
    /// already (for an upcast), with `names` what was found; else `names`
    /// are the stream's as found before, if any.
    private mutating func printText(
        _ record: EventRecord, _ event: InspectionEvent, names known: EventWording.FieldNames?, read: Bool,
        wentBack: Bool
    ) throws {
        var names = read ? known : nil
        if !read, Self.namesFields(event) { names = try known ?? self.names(of: record) }
        let template = names?.template
        let claim = isClaim(record) ? record.device : nil
        LogFilter.appendLineStart(for: record, claimedBy: claim, to: &block)
        // The words of the most frequent events, as bytes, kept when they
        // are what `describe` and `singleLine` make of them.
        let summaryStart = block.count
        if EventWording.appendDescription(of: event, template: template, names: names, to: &block) {
            if wentBack { block.append(contentsOf: ("  " + TimelineEntry.clockWentBack).utf8) }
            let shownAsIs = block.withUnsafeBufferPointer {
                LogFilter.isShownAsIs(UnsafeBufferPointer(rebasing: $0[summaryStart...]))
            }
            if shownAsIs {
                endLine()
                return
            }
            block.removeSubrange(summaryStart...)
        }
        var hash: String?
        if case .started(let started) = event, let template, let matches = hashMatches[started.templateHash],
            templates[started.templateHash] == template
        {
            hash = matches ? started.templateHash : nil
        }
        var summary = EventWording.describe(
            event, stream: record.stream, template: template, templateHash: hash, names: names)
        if wentBack { summary += "  " + TimelineEntry.clockWentBack }
        LogFilter.appendSingleLine(summary, to: &block)
        endLine()
    }

    /// Adds `"actor_verified":false,"recorded_by_device":"…"` to the actor
    /// object of the JSON line formatted from `start` on: its `verified`
    /// member is the first `,"verified":` of the line (the id and name
    /// before it are JSON strings, whose quotes are escaped).
    static func markClaim(_ record: EventRecord, in out: inout [UInt8], from start: Int) {
        let key = Array(#","verified":"#.utf8)
        var index = start
        while index + key.count <= out.count, !out[index..<(index + key.count)].elementsEqual(key) { index += 1 }
        guard index + key.count <= out.count else { return }
        let end = index + key.count + (out[index + key.count] == UInt8(ascii: "t") ? 4 : 5)
        let added = #","actor_verified":false,"recorded_by_device":""# + record.device.lowercased + "\""
        out.insert(contentsOf: Array(added.utf8), at: end)
    }

    /// How many skipped pins wait undecoded at most.
    private static var unreadPinLimit: Int { 256 }

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
        endLine()
    }

    /// Ends the line formatted into the block.
    private mutating func endLine() {
        block.append(UInt8(ascii: "\n"))
        if block.count >= Self.blockSize || toTerminal { flush() }
    }

    /// Hands the lines formatted so far to stdout: before anything else is
    /// written to it, and at the end.
    public mutating func flush() {
        guard !block.isEmpty else { return }
        output.write(utf8: block)
        block.removeAll(keepingCapacity: true)
        readerGone = output.readerIsGone
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
        namesByHash[hash] = nil
        templatesEpoch += 1
    }

    /// The pinned template of the record's inspection: from a start seen in
    /// this run, else from the stream's first events (read through its
    /// index), else from the views (accepted only if it hashes right).
    /// Decoding failures here only leave fields unnamed; the event itself is
    /// decoded, and its failure shown, by `print`. With the template, its
    /// field names, kept for every stream of that template.
    private mutating func names(of record: EventRecord) throws -> EventWording.FieldNames? {
        if let seen = streams[record.stream], seen.epoch == templatesEpoch, let known = seen.names { return known }
        guard let found = try findTemplate(of: record), let hash = streamTemplates[record.stream] else { return nil }
        // `findTemplate` answers `templates[hash]`, and every change of it
        // drops the names kept for that hash.
        let names = namesByHash[hash] ?? EventWording.FieldNames(found)
        assert(names.template == found, "the field names kept for template \(hash) are of another template")
        namesByHash[hash] = names
        streams[record.stream, default: StreamSeen(lastRecordedAt: record.recordedAt, epoch: -1)].names = names
        streams[record.stream]?.epoch = templatesEpoch
        return names
    }

    private mutating func findTemplate(of record: EventRecord) throws -> Template? {
        // A start that does not decode: the history below is asked, and the start is listed as unreadable in its turn.
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
            namesByHash[hash] = nil
            templatesEpoch += 1
            return viewed
        }
        return nil
    }
}
