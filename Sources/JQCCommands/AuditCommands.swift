import ArgumentParsing
import Foundation
import InspectionAudit
import InspectionDomain
import InspectionStore
import LMDB
import LedgerCore
import LedgerStore

// MARK: - Opening a ledger the way an auditor does

/// A ledger opened read-only, without a session or the network: the
/// device's own ledger, or a copy handed to an auditor (possibly on a
/// read-only medium, or a directory made read-only with `chmod -R a-w`).
///
/// LMDB records readers in its lock file; when the directory is read-only
/// it cannot open (or create) that file, so the environment is opened again
/// without it (`MDB_NOLOCK`). That is safe because nobody writes to a copy;
/// on a live ledger the lock file is writable and is used.
final class AuditorLedger {
    let home: LedgerHome
    let log: EventLog
    /// The whole ledger (views, reference data), when its tables exist: a
    /// ledger that was only `init`ed has none yet.
    let ledger: InspectionLedger?
    let photos: PhotoStore
    /// Whether the lock file had to be skipped.
    let withoutLock: Bool

    private init(home: LedgerHome, log: EventLog, ledger: InspectionLedger?, withoutLock: Bool) {
        self.home = home
        self.log = log
        self.ledger = ledger
        self.photos = PhotoStore(directory: home.photosPath)
        self.withoutLock = withoutLock
    }

    deinit { close() }

    func close() {
        // The ledger owns the log when there is one.
        if let ledger { ledger.close() } else { log.close() }
    }

    /// Opens `home` read-only; with `views`, also the inspection views (for
    /// pinned templates and re-inspection links).
    static func open(_ home: LedgerHome, views: Bool) throws -> AuditorLedger {
        guard home.exists else { throw JQCError.noLedger(home.path) }
        var options = Environment.Options()
        options.readOnly = true
        do {
            return try open(home, views: views, options: options)
        } catch let error where isLockRefusal(error) {
            options.noLock = true
            return try open(home, views: views, options: options)
        }
    }

    private static func open(_ home: LedgerHome, views: Bool, options: Environment.Options) throws -> AuditorLedger {
        if views {
            do {
                let ledger = try InspectionLedger(
                    storePath: home.storePath, photosPath: home.photosPath, options: options)
                return AuditorLedger(home: home, log: ledger.log, ledger: ledger, withoutLock: options.noLock)
            } catch LedgerError.noLedger {
                // The log exists but its views were never made: audit from the log alone.
            }
        }
        let log = try EventLog(directory: home.storePath, options: options)
        return AuditorLedger(home: home, log: log, ledger: nil, withoutLock: options.noLock)
    }

    /// Whether opening failed because the lock file cannot be opened or made
    /// (a read-only directory or medium), which opening without it cures.
    static func isLockRefusal(_ error: any Error) -> Bool {
        let lmdb: LMDBError
        switch error {
        case let error as LMDBError: lmdb = error
        case LedgerError.storage(let error): lmdb = error
        default: return false
        }
        return lmdb.code == EACCES || lmdb.code == EROFS || lmdb.code == EPERM
    }

    // MARK: - Reading streams without trusting them

    /// The inspection's stream read through the stream index (never by
    /// scanning the log), keeping every hole: an index entry whose record is
    /// gone or unreadable is an entry, not an error.
    func streamEntries(of id: UUID) throws -> [StreamEntry] {
        let index = try log.table("stream_index")
        return try log.read { reader in
            var named: [(version: UInt64, position: UInt64?)] = []
            let prefix = id.bytes
            try reader.transaction.forEach(index, from: prefix + BigEndian.bytes(1)) { key, value in
                guard key.count == 24, key.starts(with: prefix), let version = BigEndian.uint64(key, at: 16) else {
                    return false
                }
                named.append((version, value.count == 8 ? BigEndian.uint64(value) : nil))
                return true
            }
            return try named.map { version, position in
                guard let position else {
                    return .unreadable(
                        streamVersion: version, position: 0, reason: "its stream index entry is not a position")
                }
                do {
                    guard let record = try reader.record(at: position) else {
                        return .missing(streamVersion: version, position: position)
                    }
                    return .record(record)
                } catch LedgerError.corruptRecord(_, let error) {
                    return .unreadable(streamVersion: version, position: position, reason: "\(error)")
                }
            }
        }
    }

    /// The inspection a person named by an id or any unique prefix of it,
    /// found in the log's own stream index (not in a view), so discarded
    /// drafts and inspections whose views are damaged are found too.
    func resolveInspection(_ reference: String) throws -> UUID {
        guard let prefix = IDPrefix(reference) else { throw LookupError.notAnID(reference) }
        let digits = prefix.digits
        let seek = Hex.decode(String(digits.prefix(digits.count / 2 * 2))) ?? []
        let index = try log.table("stream_index")
        let matches: [UUID] = try log.read { reader in
            try reader.transaction.withCursor(index) { cursor in
                var found: [UUID] = []
                var entry = try cursor.seek(atLeast: seek)
                while let (key, _) = entry, key.count == 24, key.starts(with: seek), found.count < 10 {
                    let stream = Array(key[0..<16])
                    if let id = UUID(bytes: stream), prefix.matches(id) { found.append(id) }
                    // Skip the rest of this stream's entries.
                    entry = try cursor.seek(atLeast: stream + [UInt8](repeating: 0xFF, count: 8))
                    if let (next, _) = entry, next.starts(with: stream) { entry = try cursor.next() }
                }
                return found
            }
        }
        switch matches.count {
        case 0:
            throw JQCError.notFound(
                kind: "inspection", reference: reference,
                hint: "No stream of this ledger's log has that id. 'jqc log' lists every event, discarded drafts "
                    + "included.")
        case 1: return matches[0]
        default: throw LookupError.ambiguous(reference, matches)
        }
    }

    // MARK: - What lies outside the stream

    /// Where the template an inspection pinned was found.
    struct FoundTemplate {
        var template: Template
        var pinnedAt: UInt64?
        var source: String
    }

    /// The re-inspections and the pinned template of an inspection, from the
    /// views when they are up to date (each answer is checked: a template by
    /// its content hash, a child by its own stream), else by one scan of the
    /// log.
    func links(of id: UUID, templateHash: String?) throws -> (template: FoundTemplate?, children: [UUID], note: String?)
    {
        if let ledger, try ledger.views.staleProjections().isEmpty {
            var found: FoundTemplate?
            if let templateHash, let template = try ledger.pinnedTemplate(hash: templateHash),
                template.contentHash == templateHash
            {
                found = FoundTemplate(
                    template: template, pinnedAt: nil,
                    source: "by an earlier inspection; its content hashes to the recorded value")
            }
            let children = try childrenFromView(of: id)
            if found != nil || templateHash == nil {
                return (found, children, nil)
            }
            let scanned = try scan(templateHash: templateHash, parent: id)
            return (scanned.template, children, nil)
        }
        let scanned = try scan(templateHash: templateHash, parent: id)
        return (
            scanned.template, scanned.children,
            "the views are missing or out of date, so the template and re-inspections were found by scanning the log"
        )
    }

    private func childrenFromView(of parent: UUID) throws -> [UUID] {
        let table = try log.table("view:reinspections")
        return try log.read { reader in
            var found: [UUID] = []
            let prefix = parent.bytes
            try reader.transaction.forEach(table, from: prefix) { key, _ in
                guard key.count == 32, key.starts(with: prefix), let child = UUID(bytes: Array(key[16..<32])) else {
                    return false
                }
                found.append(child)
                return true
            }
            return found
        }
    }

    /// One pass over the log for a `template.pinned` of `templateHash` and
    /// the starts that name `parent`: the slow path, when views cannot help.
    private func scan(templateHash: String?, parent: UUID) throws -> (template: FoundTemplate?, children: [UUID]) {
        var template: FoundTemplate?
        var children: [UUID] = []
        let pinned = InspectionEventType.templatePinned.rawValue
        let started = InspectionEventType.started.rawValue
        try log.read { reader in
            try reader.forEachStoredRecord { position, value in
                guard value.count > 32, let record = try? EventRecord(decoding: value, at: 32) else {
                    // Damage is the chain check's to report; the scan looks only for links.
                    return true
                }
                if record.type == pinned, template == nil, let templateHash,
                    case .templatePinned(let event) = try? InspectionEvent.decode(record),
                    event.templateHash == templateHash, event.template.contentHash == templateHash
                {
                    template = FoundTemplate(
                        template: event.template, pinnedAt: position,
                        source: "at position \(position) (found by scanning the log)")
                } else if record.type == started, record.stream != parent,
                    case .started(let event) = try? InspectionEvent.decode(record),
                    event.parentInspectionID == parent
                {
                    children.append(record.stream)
                }
                return true
            }
        }
        return (template, children)
    }

    // MARK: - The chain

    /// Walks the whole chain (the one full scan of an audit) and states the
    /// result without the store's types, with how long it took.
    func checkChain(against digest: LedgerDigest?, progress: @escaping (UInt64, UInt64) -> Void) throws -> ChainCheck {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        let report = try log.verify(against: digest, progress: progress)
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        guard let finding = report.finding else {
            return ChainCheck(
                result: .intact, checked: report.checked, head: report.head, digest: digest,
                verifiedThrough: report.checked, seconds: seconds)
        }
        let (kind, verifiedThrough): (String, UInt64) =
            switch finding {
            case .changed(let p): ("changed", p - 1)
            case .missing(let p, _): ("missing", p - 1)
            case .reordered(let p, _): ("reordered", p - 1)
            case .unreadable(let p, _): ("unreadable", p - 1)
            case .brokenStreamLink(let p, _, _): ("broken_stream_link", p - 1)
            case .truncated(_, let found): ("truncated", found)
            // Every record up to the digest's position is in doubt: one of them differs.
            case .digestMismatch: ("digest_mismatch", 0)
            // The chain itself was walked to its end.
            case .indexMismatch: ("index_mismatch", report.checked)
            }
        return ChainCheck(
            result: .notIntact(.init(kind: kind, position: finding.position, message: finding.description)),
            checked: report.checked, head: report.head, digest: digest, verifiedThrough: verifiedThrough,
            seconds: seconds)
    }

    /// The chain left unchecked (`--no-verify`), with the stored head.
    func uncheckedChain() throws -> ChainCheck {
        ChainCheck(result: .skipped, checked: 0, head: try log.head(), digest: nil, verifiedThrough: 0, seconds: nil)
    }
}

extension Invocation {
    /// The ledger opened read-only for an auditor (see `AuditorLedger`).
    func auditorLedger(views: Bool = true) throws -> AuditorLedger {
        try AuditorLedger.open(home, views: views)
    }
}

// MARK: - Parsing moments

extension ParsedCommand {
    /// A `TIME|SEQ` option, or nil when it was not given.
    func moment(_ name: String) throws(UsageError) -> LogMoment? {
        guard let text = option(name) else { return nil }
        guard let moment = LogMoment(parsing: text) else {
            throw .invalidValue(option: "--\(name)", value: text, reason: LogMoment.expectation, context: context)
        }
        return moment
    }
}

// MARK: - log

/// `jqc log`: the events one line each, for a person or (with --json) a tool.
struct LogCommand: RunnableCommand {
    static let path = ["log"]
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
            """,
        group: "Auditing",
        options: [
            OptionSpec(
                "inspection", short: "i", valueName: "ID", help: "Only this inspection's events (any unique prefix)."),
            OptionSpec("since", valueName: "TIME|SEQ", help: "Only events at or after this time or position."),
            OptionSpec("until", valueName: "TIME|SEQ", help: "Only events at or before this time or position."),
            OptionSpec("actor", valueName: "NAME", help: "Only events recorded by this actor (name or id, any case)."),
            OptionSpec(
                "type", valueName: "TYPE", help: "Only events of this type (inspection.field_set) or family (sync).",
                repeatable: true),
            OptionSpec("limit", valueName: "N", help: "At most N events (the first N that match, in log order)."),
        ])

    var inspection: String?
    var filter: LogFilter

    init(_ parsed: ParsedCommand) throws(UsageError) {
        inspection = parsed.option("inspection")
        filter = LogFilter(
            since: try parsed.moment("since"), until: try parsed.moment("until"), actor: parsed.option("actor"),
            types: parsed.options("type"), limit: try parsed.integer("limit"))
        if let limit = filter.limit, limit < 0 {
            throw .invalidValue(
                option: "--limit", value: "\(limit)", reason: "expected a whole number of events, 0 or more",
                context: parsed.context)
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
        var printer = LogPrinter(auditor: auditor, invocation: invocation, filter: filter)
        if let inspection {
            let id = try auditor.resolveInspection(inspection)
            for entry in try auditor.streamEntries(of: id) {
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
            // Stored bytes are decoded here rather than by the reader, so that a
            // damaged record is shown as such and the listing goes on.
            var expected = filter.firstPosition
            try auditor.log.read { reader in
                try reader.forEachStoredRecord(from: filter.firstPosition) { position, value in
                    guard !filter.isPast(position: position), printer.wantsMore else { return false }
                    if position > expected, filter.admitsHole(at: expected) {
                        printer.printHole(
                            at: expected,
                            position == expected + 1
                                ? "no record: position \(expected) is missing from the log"
                                : "no records: positions \(expected)–\(position - 1) are missing from the log")
                    }
                    expected = position + 1
                    do {
                        guard value.count > 32 else { throw RecordError.malformed("only \(value.count) bytes") }
                        try printer.print(try EventRecord(decoding: value, at: 32))
                    } catch let error as RecordError {
                        if filter.admitsHole(at: position) {
                            printer.printHole(at: position, "the record stored here is unreadable (\(error))")
                        }
                    }
                    return true
                }
            }
        }
        if printer.printed == 0, !invocation.json { invocation.stdout.line("No events match.") }
    }
}

/// Prints log lines, naming fields through each inspection's pinned template.
struct LogPrinter {
    let auditor: AuditorLedger
    let invocation: Invocation
    let filter: LogFilter
    private(set) var printed = 0
    /// Templates by content hash, and which hash each stream started from.
    private var templates: [String: Template] = [:]
    private var streamTemplates: [UUID: String] = [:]

    init(auditor: AuditorLedger, invocation: Invocation, filter: LogFilter) {
        self.auditor = auditor
        self.invocation = invocation
        self.filter = filter
    }

    var wantsMore: Bool { filter.limit.map { printed < $0 } ?? true }

    /// A place where the log should hold a record and does not: on stdout
    /// in text (it is part of what happened), on stderr with --json (whose
    /// lines must each be an event). It never counts towards --limit.
    func printHole(at position: UInt64, _ what: String) {
        if invocation.json {
            invocation.stderr.line("jqc: position \(position): \(what)")
        } else {
            let number = String(position)
            invocation.stdout.line(String(repeating: " ", count: max(0, 7 - number.count)) + number + "  (\(what))")
        }
    }

    mutating func print(_ record: EventRecord) throws {
        if record.type == InspectionEventType.templatePinned.rawValue,
            case .templatePinned(let pinned) = try? InspectionEvent.decode(record)
        {
            // Kept for naming fields; an undecodable pin is reported when printed.
            templates[pinned.templateHash] = pinned.template
        }
        guard filter.admits(record) else { return }
        printed += 1
        let template = try template(of: record)
        let event: InspectionEvent
        do {
            event = try EventUpcaster.decode(record, template: template)
        } catch {
            // Shown as stored, so a damaged or newer event is never hidden.
            let stored = InspectionEvent.unrecognized(
                StoredPayload(type: record.type, schemaVersion: record.schemaVersion, payload: record.payload))
            if invocation.json {
                invocation.stderr.line(
                    "jqc: position \(record.position): the \(record.type) event cannot be read: \(error)")
                invocation.stdout.line(EventExport.jsonLine(for: record, event: stored))
            } else {
                invocation.stdout.line(
                    LogFilter.line(for: record, summary: "(unreadable \(record.type) event: \(error))"))
            }
            return
        }
        if invocation.json {
            invocation.stdout.line(EventExport.jsonLine(for: record, event: event))
        } else {
            let summary = EventWording.describe(event, stream: record.stream, template: template)
            invocation.stdout.line(LogFilter.line(for: record, summary: summary))
        }
    }

    /// The pinned template of the record's inspection: from a start seen in
    /// this run, else from the stream's first events (read through its
    /// index), else from the views (accepted only if it hashes right).
    /// Decoding failures here only leave fields unnamed; the event itself is
    /// decoded, and its failure shown, by `print`.
    private mutating func template(of record: EventRecord) throws -> Template? {
        if record.type == InspectionEventType.started.rawValue,
            case .started(let started) = try? InspectionEvent.decode(record)
        {
            streamTemplates[record.stream] = started.templateHash
        }
        if streamTemplates[record.stream] == nil {
            let entries = try auditor.streamEntries(of: record.stream)
            streamTemplates[record.stream] = AuditTimeline.templateHash(in: entries) ?? ""
            for (hash, pinned) in AuditTimeline.pinnedTemplates(in: entries) where templates[hash] == nil {
                templates[hash] = pinned.template
            }
        }
        guard let hash = streamTemplates[record.stream], !hash.isEmpty else { return nil }
        if let known = templates[hash] { return known }
        if let viewed = try auditor.ledger?.pinnedTemplate(hash: hash), viewed.contentHash == hash {
            templates[hash] = viewed
            return viewed
        }
        return nil
    }
}

// MARK: - audit

/// `jqc audit ID`: an inspection's whole history, checked.
struct AuditCommand: RunnableCommand {
    static let path = ["audit"]
    static let spec = CommandSpec(
        "audit",
        abstract: "Replay an inspection's whole history and check it: timeline, form, photos, links, hash chain.",
        discussion: """
            States at the top whether the hash chain is INTACT, checked from the first event to the head \
            (and against --digest, a digest from 'jqc digest' handed out earlier), and whether every photo \
            file still hashes to the SHA-256 recorded when it was taken. Then every event of the inspection, \
            discarded drafts and sync outcomes included, with each answer changed as old → new; the pinned \
            template; re-inspection links; issues; photos.

            --as-of shows the form exactly as it stood at a moment, rebuilt from the log alone: for a \
            position, after the inspection's last event at or before it; for a TIME (as in 'jqc log'), after \
            its last event recorded at or before it. With --format json or html, the whole report is as of \
            that moment.

            --format json writes the report of Schemas/audit-report.schema.json (--json is the same); \
            --format html one self-contained file for a browser (inline CSS, no scripts, photos embedded). \
            Checking the chain reads the whole log (about a second per million events); --no-verify skips \
            it and says so. Opens the ledger read-only and needs no login; a read-only copy works.

            Exit status 1 when the chain is not intact, a photo file is missing or altered, or the \
            inspection's own records are damaged (the report is printed first).
            """,
        group: "Auditing",
        positionals: [PositionalSpec("ID", help: "The inspection (any unique prefix of its id).")],
        options: [
            OptionSpec("as-of", valueName: "TIME|SEQ", help: "Show the inspection as it stood at this moment."),
            OptionSpec("format", valueName: "FORMAT", help: "text, json or html.", defaultDescription: "text"),
            OptionSpec("output", short: "o", valueName: "FILE", help: "Write the report to FILE instead of stdout."),
            OptionSpec(
                "digest", valueName: "DIGEST", help: "Also prove the log extends this digest from 'jqc digest'."),
        ],
        flags: [FlagSpec("no-verify", help: "Skip the hash chain check (the full scan of the log).")])

    /// The renderings of the report.
    enum Format: String, CaseIterable {
        case text, json, html
    }

    var id: String
    var asOf: LogMoment?
    var asOfText: String?
    var format: Format?
    var output: String?
    var digest: LedgerDigest?
    var verify: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require("ID")
        asOf = try parsed.moment("as-of")
        asOfText = parsed.option("as-of")
        if let text = parsed.option("format") {
            guard let format = Format(rawValue: text.lowercased()) else {
                throw .invalidValue(
                    option: "--format", value: text, reason: "expected text, json or html", context: parsed.context)
            }
            self.format = format
        }
        output = parsed.option("output")
        if let text = parsed.option("digest") {
            guard let digest = LedgerDigest(text) else {
                throw .invalidValue(
                    option: "--digest", value: text, reason: "expected jqc-digest-v1:<position>:<64 hex digits>",
                    context: parsed.context)
            }
            self.digest = digest
        }
        verify = !parsed.flag("no-verify")
        if !verify, digest != nil {
            throw .unexpectedArgument(
                "--digest with --no-verify (a digest is checked by the chain walk)", context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let format = self.format ?? (invocation.json ? .json : .text)
        let auditor = try invocation.auditorLedger()
        defer { auditor.close() }
        let inspection = try auditor.resolveInspection(id)
        let report = try makeReport(inspection, auditor: auditor, invocation: invocation, embedPhotos: format == .html)

        let rendered: String =
            switch format {
            case .json: report.jsonValue.prettyPrinted()
            case .html: report.html
            case .text:
                // As of a moment, the text is the form as 'jqc show' printed it then.
                asOf == nil ? report.text : Self.asOfText(report)
            }
        if let output {
            try FileStore.writeAtomically(
                Data((rendered.hasSuffix("\n") ? rendered : rendered + "\n").utf8), to: output, mode: 0o644)
            invocation.stdout.line("Wrote the \(format.rawValue) audit report to \(output): \(report.headline)")
        } else {
            invocation.stdout.write(rendered.hasSuffix("\n") ? rendered : rendered + "\n")
        }
        guard report.isClean else {
            // The headline names the finding; a single other problem is named too.
            let problems = report.problems
            let detail = report.chain.isIntact && problems.count == 1 ? ": \(problems[0])" : ""
            throw JQCError.verificationFailed("audit of \(inspection.lowercased): \(report.headline)\(detail)")
        }
    }

    /// The report's text as of a moment: the verdict, then the form exactly
    /// as `jqc show` printed it at that moment.
    static func asOfText(_ report: AuditReport) -> String {
        var lines = ["AUDIT of inspection \(report.inspectionID.lowercased)", "RESULT: \(report.headline)"]
        lines += report.chainLines.map { "  " + $0 }
        for problem in report.problems { lines.append("  ! \(problem)") }
        if let asOf = report.asOf {
            lines.append(
                "AS OF: \(asOf.requested) → after position \(asOf.position), recorded \(asOf.recordedAt.iso8601)")
        }
        lines.append("")
        lines.append(FormReport(state: report.form).text)
        return lines.joined(separator: "\n")
    }

    func makeReport(
        _ inspection: UUID, auditor: AuditorLedger, invocation: Invocation, embedPhotos: Bool
    ) throws -> AuditReport {
        let entries = try auditor.streamEntries(of: inspection)
        var through: AsOf?
        if let asOf {
            guard let (position, time) = AuditReport.position(of: asOf, in: entries) else {
                let first = entries.compactMap { entry -> EventRecord? in
                    if case .record(let record) = entry { return record }
                    return nil
                }.first
                throw JQCError.refused(
                    "inspection \(inspection.lowercased) had no events at or before \(asOf)"
                        + (first.map { ": its first is at position \($0.position), recorded \($0.recordedAt.iso8601)" }
                            ?? "") + ". Choose a later moment.")
            }
            through = AsOf(requested: asOfText ?? "\(asOf)", position: position, recordedAt: time)
        }

        // The template: pinned in this stream, else found by its content hash.
        let hash = AuditTimeline.templateHash(in: entries)
        var notes: [String] = []
        var evidence = TemplateEvidence(
            hash: hash ?? "", template: nil, pinnedAt: nil, source: "nowhere in this log")
        if let hash, let own = AuditTimeline.pinnedTemplates(in: entries)[hash] {
            evidence = TemplateEvidence(
                hash: hash, template: own.template, pinnedAt: own.position,
                source: "in this inspection's stream at position \(own.position)")
        }
        let links = try auditor.links(of: inspection, templateHash: evidence.template == nil ? hash : nil)
        if let note = links.note { notes.append(note) }
        if let hash, let found = links.template {
            evidence = TemplateEvidence(
                hash: hash, template: found.template, pinnedAt: found.pinnedAt, source: found.source)
        }
        var templates: [String: Template] = [:]
        if let found = evidence.template { templates[evidence.hash] = found }
        let timeline = AuditTimeline(
            inspectionID: inspection, entries: entries, templates: templates, through: through?.position)

        // A linked inspection is folded up to the same moment: a position
        // bounds every stream alike, a time each stream's own last event.
        func linked(_ id: UUID) throws -> AuditTimeline? {
            let entries = try auditor.streamEntries(of: id)
            var cutoff: UInt64?
            if let asOf {
                guard let (position, _) = AuditReport.position(of: asOf, in: entries) else { return nil }
                cutoff = position
            }
            return AuditTimeline(inspectionID: id, entries: entries, templates: timeline.templates, through: cutoff)
        }
        var children: [LinkedInspection] = []
        for child in links.children {
            // A child started after the report's moment did not exist yet.
            guard let childTimeline = try linked(child), childTimeline.state.status != .notStarted else { continue }
            let problem =
                childTimeline.state.parentInspectionID == inspection
                ? nil
                : "re-inspection \(child.lowercased) is listed by the views, but its own stream does not name "
                    + "this inspection as its parent"
            children.append(LinkedInspection(timeline: childTimeline, problem: problem))
        }
        var parent: LinkedInspection?
        if let parentID = timeline.state.parentInspectionID {
            let parentTimeline =
                try linked(parentID) ?? AuditTimeline(inspectionID: parentID, entries: [], through: 0)
            parent = LinkedInspection(
                timeline: parentTimeline,
                problem: parentTimeline.entries.isEmpty
                    ? "the parent \(parentID.lowercased) has no events in this log" : nil)
        }

        let chain: ChainCheck
        if verify {
            chain = try auditor.checkChain(against: digest) { done, total in
                invocation.progress("verifying the chain: \(done)/\(total) records")
            }
            invocation.endProgress()
        } else {
            chain = try auditor.uncheckedChain()
        }

        var files: [String: PhotoFile] = [:]
        for (_, captured) in timeline.capturedPhotos {
            let hex = captured.photo.sha256.hex
            guard files[hex] == nil else { continue }
            let status: PhotoFileStatus =
                switch auditor.photos.check(sha256: hex) {
                case .matches: .matches
                case .missing: .missing
                case .altered(let actual): .altered(actualSHA256: actual)
                }
            let contents =
                embedPhotos && status != .missing ? auditor.photos.contents(sha256: hex).map { [UInt8]($0) } : nil
            files[hex] = PhotoFile(status: status, contents: contents)
        }

        let form = AuditReport.form(of: timeline, children: children)
        if auditor.withoutLock {
            notes.append("the ledger directory is read-only, so it was opened without LMDB's lock file")
        }
        return AuditReport(
            inspectionID: inspection, generatedAt: invocation.clock.now(), ledgerPath: invocation.home.path,
            chain: chain, asOf: through, timeline: timeline, form: form, template: evidence, parent: parent,
            children: children, photoFiles: files, syncState: SyncState.of(form).rawValue, notes: notes)
    }
}
