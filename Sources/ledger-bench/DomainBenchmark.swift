import CSQLite
import Foundation
import InspectionDomain
// The raw append is measured on its own beside the decided one (the same
// events, no decision), to keep the store's cost apart from the domain's.
@_spi(RawAppend) import InspectionStore
import LMDB
import LedgerCore
import LedgerStore

/// The inspection ledger at size: a generated log of `inspections` ×
/// `eventsPerInspection` events, measured against an SQLite event table
/// doing the same work (rebuilding the views, reading one inspection).
struct DomainBenchmark {
    var inspections: Int
    var eventsPerInspection: Int
    var directory: String
    /// Keep the generated ledger here for the CLI benchmarks (jqc set, audit).
    var ledgerPath: String { directory + "/ledger" }

    /// A realistic inspection: template pin (once per template), start, field
    /// answers with some changes of mind and clears, two photos, an issue,
    /// submit, and the sync outcomes of a successful upload.
    static func inspectionEvents(
        id: UUID, template: Template, pinned: Bool, count: Int, random: inout SystemRandomNumberGenerator
    ) -> [InspectionEvent] {
        var events: [InspectionEvent] = []
        if !pinned { events.append(.templatePinned(TemplatePinned(template: template))) }
        events.append(
            .started(
                InspectionStarted(
                    templateID: template.id, templateHash: template.contentHash, facilityID: "101",
                    facilityName: "Riverside Medical Center", areaID: "1001", areaName: "Lobby restrooms")))
        let answerable = template.fields.filter { !$0.type.isDisplayOnly && !$0.type.holdsPhoto }
        let photos = (0..<2).map { i in
            let bytes = photoBytes(inspection: id, index: i)
            return PhotoReference(
                photoID: UUID(), sha256: SHA256Hasher().digest(bytes), size: bytes.count, mediaType: "image/jpeg")
        }
        let issue = UUID()
        let tail: [InspectionEvent] = [
            .photoCaptured(PhotoCaptured(photo: photos[0], kind: .photo, issueID: nil)),
            .issueFlagged(
                IssueFlagged(issueID: issue, severity: .high, description: "Leaking tap", photoID: nil)),
            .submitted(InspectionSubmitted(score: 87.5, followUpRequired: false)),
            .photoUploaded(PhotoUploaded(photoID: photos[0].photoID, serverPath: "/uploads/a.jpg")),
            .inspectionAccepted(InspectionAccepted(serverID: "\(Int.random(in: 1..<1_000_000, using: &random))")),
            .issueAccepted(IssueAccepted(issueID: issue, serverID: "7")),
        ]
        let answers = max(0, count - events.count - tail.count - 1)
        for i in 0..<answers {
            let field = answerable[i % answerable.count]
            if i > answerable.count && i % 17 == 0 {
                events.append(.fieldCleared(FieldCleared(fieldID: field.id)))
                continue
            }
            guard let value = try? FieldValue.parse(Self.answer(field, i), for: field) else { continue }
            events.append(.fieldSet(FieldAnswer(field: field, value: value)))
        }
        events.append(.photoCaptured(PhotoCaptured(photo: photos[1], kind: .photo, issueID: nil)))
        return events + tail
    }

    /// The bytes of an inspection's `index`th photo: small (4 KiB, so a million
    /// events keep 20,000 files in 80 MiB) but real, so an audit re-hashes
    /// every file it names and fails if one is missing.
    static func photoBytes(inspection id: UUID, index: Int) -> [UInt8] {
        let seed = id.bytes + [UInt8(index)]
        return (0..<4096).map { seed[$0 % seed.count] &+ UInt8(truncatingIfNeeded: $0 / seed.count) }
    }

    static func answer(_ field: TemplateField, _ i: Int) -> String {
        switch field.type {
        case .rating: "\(i % 6)"
        case .passFail: i % 3 == 0 ? "fail" : "pass"
        case .checkbox: i % 2 == 0 ? "yes" : "no"
        case .radio, .select: field.options?[i % (field.options?.count ?? 1)] ?? ""
        case .checkboxGroup: field.options?.first ?? ""
        case .number: "\(i).5"
        case .date: "2026-11-\(String(format: "%02d", i % 28 + 1))"
        case .email: "inspector\(i)@example.com"
        case .table: "Towels,\(i),no"
        default: "Observation \(i): floor clean, bins emptied"
        }
    }

    func run() throws -> [Row] {
        let reference = try ReferenceCache.Snapshot(
            json: try JSONValue(
                parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: "Tools/fixtures/reference.json")))))
        let templates = reference.templates
        let actor = Actor(id: "u-1", name: "Dana Inspector", verified: true)
        let device = UUID()
        let clock = SystemClock()
        var random = SystemRandomNumberGenerator()

        // MARK: Generate: eight inspections in progress at a time, interleaved.
        try FileManager.default.createDirectory(atPath: ledgerPath, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: ledgerPath + "/photos", withIntermediateDirectories: true)
        let log = try EventLog(directory: ledgerPath + "/store")
        var pinned = Set<String>()
        var ids: [UUID] = []
        var total = 0
        let sqlite = try SQLiteEventTable(path: directory + "/baseline.sqlite")
        var seq: Int64 = 0
        let generation = try Measure.seconds {
            for group in stride(from: 0, to: inspections, by: 8) {
                var streams: [(UUID, [InspectionEvent])] = []
                for i in group..<min(group + 8, inspections) {
                    let template = templates[i % templates.count]
                    let id = UUID()
                    ids.append(id)
                    for index in 0..<2 {
                        let bytes = Self.photoBytes(inspection: id, index: index)
                        let name = ledgerPath + "/photos/" + SHA256Hasher().digest(bytes).hex
                        guard FileManager.default.createFile(atPath: name, contents: Data(bytes)) else {
                            throw BenchError("could not write the photo file \(name)")
                        }
                    }
                    streams.append(
                        (
                            id,
                            Self.inspectionEvents(
                                id: id, template: template, pinned: pinned.contains(template.contentHash),
                                count: eventsPerInspection, random: &random)
                        ))
                    if pinned.insert(template.contentHash).inserted {
                        try sqlite.insertTemplate(hash: template.contentHash, cbor: template.canonicalCBOR.encoded())
                    }
                }
                var batch: [PendingEvent] = []
                let longest = streams.map(\.1.count).max() ?? 0
                for step in 0..<longest {
                    for (id, events) in streams where step < events.count {
                        batch.append(
                            events[step].pending(stream: id, actor: actor, device: device, recordedAt: clock.now()))
                    }
                }
                let outcomes = try log.append(batch)
                total += batch.count
                try sqlite.exec("BEGIN")
                for (event, outcome) in zip(batch, outcomes) {
                    seq += 1
                    let record = EventRecord(
                        position: outcome.position, streamVersion: outcome.streamVersion, event: event)
                    try sqlite.insert(
                        seq: seq, id: event.id.bytes, stream: event.stream.bytes, version: Int64(outcome.streamVersion),
                        hash: [], record: record.encoded())
                }
                try sqlite.exec("COMMIT")
            }
        }
        log.close()
        // What `jqc init` would have written, so the CLI benchmarks can use the ledger.
        let config =
            "{\"device_id\": \"\(device.lowercased)\", \"server_url\": null, \"created_at\": \"\(clock.now().iso8601)\"}"
        try Data(config.utf8).write(to: URL(fileURLWithPath: ledgerPath + "/config.json"))
        print("  generated \(total) events in \(inspections) inspections (\(String(format: "%.1f", generation)) s)")

        // MARK: Full rebuild of every view: the first one, as a developer's
        // upgrade meets it (opening the ledger finds every view stale and
        // rebuilds it), warm: the generation just wrote the files.
        let storePath = ledgerPath + "/store"
        let photosPath = ledgerPath + "/photos"
        PeakMemory.reset()
        var opened: InspectionLedger?
        let tRebuild = try Measure.seconds {
            opened = try InspectionLedger(storePath: storePath, photosPath: photosPath)
        }
        let memory = PeakMemory.read()
        guard let first = opened, try first.views.staleProjections().isEmpty,
            try first.log.head().position == UInt64(total)
        else { throw BenchError("opening the generated ledger did not rebuild its \(total) events") }
        try first.reference.replace(with: reference, at: clock.now())
        // The rebuild folds in partitions of the streams, one thread each.
        let threads = first.views.partitions(for: UInt64(total))
        let tWalk = try Self.plainWalk(first.log)
        // Two more rebuilds of the views (`jqc rebuild`), each beside the
        // baseline's two (writing summaries only, and writing every view's
        // rows), and the medians of the three: single runs of one build
        // gave 470k/s and 782k/s (wave 20), more than two builds differed.
        var ledgerRuns = [tRebuild]
        var sqliteRuns = [try Measure.seconds { try sqliteRebuild(sqlite) }]
        var sqliteEveryViewRuns = [try Measure.seconds { try sqliteRebuild(sqlite, writing: .everyView) }]
        for _ in 0..<2 {
            ledgerRuns.append(try Measure.seconds { _ = try first.views.rebuild() })
            sqliteRuns.append(try Measure.seconds { try sqliteRebuild(sqlite) })
            sqliteEveryViewRuns.append(try Measure.seconds { try sqliteRebuild(sqlite, writing: .everyView) })
        }
        first.close()
        let median = { (runs: [Double]) in runs.sorted()[runs.count / 2] }
        var rows: [Row] = []
        rows.append(
            Row(
                name: "rebuild all views", unit: "events/s", ledger: Double(total) / median(ledgerRuns),
                limit: Double(total) / tWalk, baseline: Double(total) / median(sqliteRuns),
                target: String(
                    format:
                        ">= 1M/s, >= 1/12 of the walk; SQLite writes 8-field summaries; median of 3 (the first on open: %.0fk/s); peak RSS %.0f MiB (anon %.0f)",
                    Double(total) / tRebuild / 1000, memory.peak, memory.anonymous),
                ledgerThreads: threads))
        rows.append(
            Row(
                name: "rebuild, SQLite writing every view", unit: "events/s",
                ledger: Double(total) / median(ledgerRuns),
                limit: Double(total) / tWalk, baseline: Double(total) / median(sqliteEveryViewRuns),
                target: "the same rows as the ledger's views (no checksums); the ledger's runs above",
                ledgerThreads: threads))

        // MARK: The same rebuild, cold: the store evicted from the page cache.
        PageCache.evict([storePath, directory + "/baseline.sqlite", directory + "/baseline.sqlite-wal"])
        let resident = PageCache.residentFraction([storePath, directory + "/baseline.sqlite"])
        let ledger = try InspectionLedger(storePath: storePath, photosPath: photosPath)
        let tColdRebuild = try Measure.seconds { _ = try ledger.views.rebuild() }
        let tColdSQLiteRebuild = try Measure.seconds { try sqliteRebuild(sqlite) }
        PageCache.evict([storePath])
        let tColdWalk = try Self.plainWalk(ledger.log)
        rows.append(
            Row(
                name: "rebuild all views", unit: "events/s", ledger: Double(total) / tColdRebuild,
                limit: Double(total) / tColdWalk, baseline: Double(total) / tColdSQLiteRebuild,
                target: String(format: "%.0f%% of the files cached at start", resident * 100), cache: "cold",
                ledgerThreads: threads))

        // MARK: Read one inspection's history (and fold it).
        let sample = (0..<1000).map { _ in ids.randomElement(using: &random)! }
        let tRead = try Measure.seconds {
            for id in sample { _ = try ledger.state(of: id) }
        }
        let tSQLiteRead = try Measure.seconds {
            // The same work as the ledger's read: the stream's records, the
            // template it started with (pinned in its stream or fetched by
            // hash and decoded, as the ledger's read does), the fold.
            for id in sample {
                var state = InspectionState(id: id)
                var names = TextCache()
                var templates: [String: Template] = [:]
                for bytes in try sqlite.readStream(id.bytes) {
                    let record = try EventRecord(decoding: bytes, names: &names)
                    let event = try EventUpcaster.decode(record, template: state.template)
                    if case .templatePinned(let pin) = event { templates[pin.templateHash] = pin.template }
                    if case .started(let started) = event, templates[started.templateHash] == nil,
                        let cbor = try sqlite.template(hash: started.templateHash)
                    {
                        templates[started.templateHash] = try Template(cbor: try CBORValue(decoding: cbor))
                    }
                    state.apply(event, recordedAt: record.recordedAt, actor: record.actor, pinnedTemplates: templates)
                }
                guard state.template != nil else { throw BenchError("the SQLite read of \(id) found no template") }
            }
        }
        rows.append(
            Row(
                name: "read + fold one inspection", unit: "reads/s", ledger: 1000 / tRead, limit: nil,
                baseline: 1000 / tSQLiteRead,
                target: String(format: "< 1 ms (ledger %.3f ms)", tRead)))

        // MARK: One inspector action, decided and recorded durably with its views.
        let drafts = try (0..<20).map { _ -> UUID in
            let id = UUID()
            let template = templates[0]
            try ledger.record(
                [
                    .started(
                        InspectionStarted(
                            templateID: template.id, templateHash: template.contentHash, facilityID: "101",
                            facilityName: "Riverside Medical Center"))
                ], stream: id, expectedVersion: 0, actor: actor, device: device, at: clock.now())
            return id
        }
        let actions = 300
        let tAction = try Measure.seconds {
            for i in 0..<actions {
                let id = drafts[i % drafts.count]
                let state = try ledger.state(of: id)!
                let events = try state.decide(.setField(field: "Notes", to: .text("note \(i)")))
                try ledger.record(
                    events, stream: id, expectedVersion: UInt64(state.eventCount), actor: actor, device: device,
                    at: clock.now())
            }
        }
        let tSQLiteAction = try Measure.seconds {
            for i in 0..<actions {
                seq += 1
                try sqlite.insert(
                    seq: seq, id: UUID().bytes, stream: drafts[i % drafts.count].bytes, version: seq, hash: [],
                    record: Array(repeating: 7, count: 180))
            }
        }
        rows.append(
            Row(
                name: "record one action (durable)", unit: "actions/s", ledger: Double(actions) / tAction, limit: nil,
                baseline: Double(actions) / tSQLiteAction, target: "(SQLite: bare insert, no views)"))
        ledger.close()
        print("  ledger kept at \(ledgerPath) (sample inspection \(ids[ids.count / 2].lowercased))")
        sampleInspection = ids[ids.count / 2]
        return rows
    }

    /// The limit of any rebuild: LMDB's cursor walking every stored event of
    /// the same store in place, through the same binding, decoding nothing.
    static func plainWalk(_ log: EventLog) throws -> Double {
        let environment = log.environment
        guard let events = try environment.table("events", create: false) else {
            throw BenchError("the store has no events table")
        }
        var bytes = 0
        let seconds = try Measure.seconds {
            try environment.read { transaction in
                try transaction.forEachBorrowed(events) { _, value in
                    bytes &+= value.byteCount
                    return true
                }
            }
        }
        guard bytes > 0 else { throw BenchError("the walk found no events") }
        return seconds
    }

    /// Set by `run`: an inspection in the generated ledger, for CLI benchmarks.
    nonisolated(unsafe) static var sample: UUID?
    var sampleInspection: UUID? {
        get { Self.sample }
        nonmutating set { Self.sample = newValue }
    }

    /// What the baseline's rebuild writes.
    enum BaselineRows {
        /// One row per inspection of eight summary fields (`SummaryBytes`),
        /// as the baseline has written since turn 3: less than the ledger's
        /// rebuild writes.
        case summaries
        /// Every row the ledger's views hold for each inspection, the same
        /// bytes (`InspectionView.rows(of:)`) without their checksums, into a
        /// key-ordered table per view table: the ledger's writes.
        case everyView
    }

    /// The baseline rebuild: every event read back from SQLite, decoded and
    /// folded by the same domain code, and the rows `writing` says written
    /// into SQLite tables in one transaction. `last`: the last row that is a
    /// record (a kept run's table also holds the bare inserts of its action
    /// row).
    func sqliteRebuild(
        _ sqlite: SQLiteEventTable, through last: Int64 = .max, writing: BaselineRows = .summaries
    ) throws {
        var states: [UUID: InspectionState] = [:]
        var templates: [String: Template] = [:]
        var failure: Error?
        // The same repeated-text cache the ledger's rebuild decodes with.
        var names = TextCache()
        try sqlite.scan(through: last) { _, bytes in
            guard failure == nil else { return }
            do {
                let record = try EventRecord(decoding: bytes, names: &names)
                let event = try EventUpcaster.decode(record, template: states[record.stream]?.template)
                if case .templatePinned(let pin) = event { templates[pin.templateHash] = pin.template }
                states[record.stream, default: InspectionState(id: record.stream)].apply(
                    event, recordedAt: record.recordedAt, actor: record.actor, pinnedTemplates: templates)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        switch writing {
        case .summaries:
            try sqlite.exec("CREATE TABLE IF NOT EXISTS summaries (id BLOB PRIMARY KEY, row BLOB)")
            try sqlite.exec("BEGIN")
            try sqlite.exec("DELETE FROM summaries")
            for (id, state) in states {
                try sqlite.insertSummary(id: id.bytes, row: SummaryBytes.of(state))
            }
        case .everyView:
            try sqlite.exec("BEGIN")
            var emptied: Set<String> = []
            // In key order, as the ledger puts its summaries: SQLite's
            // B-tree fills its pages in order too.
            for id in states.keys.sorted(by: { $0.bytesPrecede($1) }) {
                for row in InspectionView.rows(of: states[id]!) {
                    if emptied.insert(row.table).inserted { try sqlite.emptyViewTable(row.table) }
                    try sqlite.insertViewRow(table: row.table, key: row.key, row: row.value)
                }
            }
        }
        try sqlite.exec("COMMIT")
    }
}

/// What the baseline writes per inspection: the same fields the ledger's
/// summary row holds, encoded the same way.
enum SummaryBytes {
    static func of(_ state: InspectionState) -> [UInt8] {
        CBORValue.textMap([
            ("status", .text(state.status.rawValue)), ("template_id", .text(state.templateID)),
            ("facility_id", .text(state.facilityID)), ("score", state.score.map { .double($0) } ?? .null),
            ("answered", .unsigned(UInt64(state.values.count))), ("issues", .unsigned(UInt64(state.issues.count))),
            ("photos", .unsigned(UInt64(state.photos.count))), ("version", .unsigned(UInt64(state.eventCount))),
        ]).encoded()
    }
}
