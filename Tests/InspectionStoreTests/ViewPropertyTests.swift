import Foundation
import InspectionDomain
import LMDB
import LedgerCore
@_spi(RawAppend) import LedgerStore
import LedgerTestSupport
import Testing

@_spi(RawAppend) @testable import InspectionStore

/// Records inspector actions the way `jqc` does: decide against the folded
/// state, then record the events with the stream version checked.
struct Recorder {
    let ledger: InspectionLedger
    let clock = ManualClock()
    let actor = Actor(id: "u-1", name: "Dana Inspector", verified: true)
    let device = UUID()
    /// Whether `perform` records through `InspectionLedger.record(_:on:…)`,
    /// whose views take the states the decision left (a debug build checks
    /// each against a fold of the log), rather than deciding here and
    /// appending the events, whose views fold the stream for every record.
    var throughDecision = false

    init(directory: TemporaryDirectory) throws {
        ledger = try InspectionLedger(
            storePath: directory.appending("store"), photosPath: directory.path)
        let snapshot = try ReferenceCache.Snapshot(
            json: try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path)))))
        try ledger.reference.replace(with: snapshot, at: clock.now())
    }

    @discardableResult
    func perform(_ command: InspectionCommand, on id: UUID) throws -> [InspectionEvent] {
        clock.advance(microseconds: 1_000)
        if throughDecision {
            return try ledger.record([command], on: id, by: actor, device: device, clock: clock).events
        }
        let state = try ledger.state(of: id) ?? InspectionState(id: id)
        let events = try state.decide(command)
        if !events.isEmpty {
            try ledger.record(
                events, stream: id, expectedVersion: UInt64(state.eventCount), actor: actor, device: device,
                at: clock.now())
        }
        return events
    }

    /// Appends sync outcomes as the worker would.
    func recordOutcome(_ event: InspectionEvent, on id: UUID) throws {
        clock.advance(microseconds: 1_000)
        try ledger.append([event.pending(stream: id, actor: actor, device: device, recordedAt: clock.now())])
    }

    func start(template: String, facility: String = "101") throws -> UUID {
        let template = try #require(try ledger.reference.template(id: template))
        let facility = try #require(try ledger.reference.facility(id: facility))
        let id = UUID()
        try perform(
            .start(
                StartInspection(
                    template: template,
                    templateAlreadyPinned: try ledger.pinnedTemplate(hash: template.contentHash) != nil,
                    facilityID: facility.id, facilityName: facility.name)), on: id)
        return id
    }

    func photo() -> PhotoReference {
        PhotoReference(
            photoID: UUID(), sha256: SHA256Hasher().digest(Array(UUID().uuidString.utf8)), size: 1234,
            mediaType: "image/png")
    }

    /// Every stored view row, table by table, as bytes.
    func viewSnapshot() throws -> [String: [[UInt8]: [UInt8]]] {
        var snapshot: [String: [[UInt8]: [UInt8]]] = [:]
        for projection in ledger.views.projections {
            for view in projection.tableNames {
                let name = view.name
                let table = try ledger.log.table(name)
                snapshot[name] = try ledger.log.environment.read { txn in
                    var rows: [[UInt8]: [UInt8]] = [:]
                    try txn.forEach(table) { key, value in
                        rows[key] = value
                        return true
                    }
                    return rows
                }
            }
        }
        return snapshot
    }
}

/// Views updated event by event must equal views rebuilt from scratch, for
/// any sequence of actions — including refused ones, re-inspections,
/// discards and sync outcomes.
@Suite struct ViewPropertyTests {
    /// A valid answer for a field, as the CLI would type it.
    static func answer(for field: TemplateField, _ random: inout SeededRandom) -> String {
        switch field.type {
        case .text, .textarea: "note \(Int.random(in: 0..<1000, using: &random))"
        case .email: "inspector\(Int.random(in: 0..<9, using: &random))@example.com"
        case .number: "\(Int.random(in: 0..<500, using: &random)).\(Int.random(in: 0..<10, using: &random))"
        case .date: "2026-11-\(String(format: "%02d", Int.random(in: 1...28, using: &random)))"
        case .checkbox: Bool.random(using: &random) ? "yes" : "no"
        case .checkboxGroup: (field.options ?? []).shuffled(using: &random).prefix(2).joined(separator: ",")
        case .radio, .select: field.options?.randomElement(using: &random) ?? ""
        case .rating: "\(Int.random(in: 0...5, using: &random))"
        case .passFail: ["pass", "fail", "PASS"].randomElement(using: &random)!
        case .table: "Towels,\(Int.random(in: 0..<9, using: &random)),no;Soap,2,yes"
        default: "x"
        }
    }

    /// Seeds 1 to 8 append decided events (the views fold each stream);
    /// 9 to 12 record commands, the views taking the decision's states.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] as [UInt64])
    func incrementalViewsEqualRebuiltViews(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        var recorder = try Recorder(directory: directory)
        recorder.throughDecision = seed > 8
        var random = SeededRandom(seed: seed)
        var inspections: [UUID] = []
        for _ in 0..<300 {
            let roll = Int.random(in: 0..<100, using: &random)
            let summaries = try recorder.ledger.summaries()
            let drafts = summaries.filter { $0.status == .draft }.map(\.id)
            let completed = summaries.filter { $0.status == .completed }.map(\.id)
            if drafts.isEmpty || roll < 8 {
                inspections.append(try recorder.start(template: Bool.random(using: &random) ? "11" : "22"))
                continue
            }
            // Mostly act on drafts (edits) or completed ones (sync, follow-up);
            // sometimes on anything, to exercise refusals.
            let pool = roll >= 83 && !completed.isEmpty ? completed : (roll % 7 == 0 ? inspections : drafts)
            let id = pool.randomElement(using: &random)!
            guard let state = try recorder.ledger.state(of: id), let template = state.template else { continue }
            let fields = template.fields.filter { !$0.type.isDisplayOnly }
            let field = fields.randomElement(using: &random)!
            do {
                switch roll {
                case 8..<55:
                    if field.type.holdsPhoto {
                        try recorder.perform(.capturePhoto(recorder.photo(), for: .field(field.id.rawValue)), on: id)
                    } else {
                        try recorder.perform(
                            .setField(field: field.id.rawValue, to: .text(Self.answer(for: field, &random))), on: id)
                    }
                case 55..<60:
                    try recorder.perform(.setField(field: field.label, to: .text("not-a-valid-answer-7")), on: id)
                case 60..<65: try recorder.perform(.clearField(field: field.id.rawValue), on: id)
                case 65..<70:
                    let photo = Bool.random(using: &random) ? recorder.photo() : nil
                    try recorder.perform(
                        .flagIssue(
                            FlagIssue(issueID: UUID(), severity: "high", description: "leak", photo: photo)), on: id)
                case 70..<80:
                    // Fill what is required first, so submits mostly succeed.
                    for required in state.missingRequiredFields() where !required.type.holdsPhoto {
                        try recorder.perform(
                            .setField(field: required.id.rawValue, to: .text(Self.answer(for: required, &random))),
                            on: id)
                    }
                    try recorder.perform(.submit(followUpRequired: Bool.random(using: &random)), on: id)
                case 80..<83: try recorder.perform(.discard(reason: "test"), on: id)
                case 83..<87:
                    let child = UUID()
                    try recorder.perform(.start(try StartInspection.reinspection(of: state)), on: child)
                    inspections.append(child)
                default:
                    guard state.status == .completed else { continue }
                    let items =
                        state.photos.map { SyncItem(kind: .photo, id: $0.photo.photoID) }
                        + [SyncItem(kind: .inspection, id: id)] + state.issues.map { SyncItem(kind: .issue, id: $0.id) }
                    let item = items.randomElement(using: &random)!
                    let outcome: InspectionEvent =
                        switch Int.random(in: 0..<5, using: &random) {
                        case 0:
                            .syncAttemptFailed(
                                SyncAttemptFailed(
                                    item: item, attempt: 1, error: "HTTP 503", httpStatus: 503, willRetry: true,
                                    nextAttemptAt: recorder.clock.now()))
                        case 1: .syncGaveUp(SyncGaveUp(item: item, error: "refused"))
                        case 2: .syncRetryRequested(SyncRetryRequested(item: item))
                        default:
                            switch item.kind {
                            case .photo: .photoUploaded(PhotoUploaded(photoID: item.id, serverPath: "/uploads/x"))
                            case .inspection: .inspectionAccepted(InspectionAccepted(serverID: "77"))
                            case .issue: .issueAccepted(IssueAccepted(issueID: item.id, serverID: "9"))
                            }
                        }
                    try recorder.recordOutcome(outcome, on: id)
                }
            } catch is DomainError {
                // Refusals record nothing; the comparison below covers that too.
            }
        }
        let incremental = try recorder.viewSnapshot()
        // Listings refuse a drafts or followups row that disagrees with its
        // inspection's row as damage: the views kept event by event never do.
        for (key, _) in incremental["view:drafts"] ?? [:] {
            let id = try #require(UUID(bytes: key))
            let summary = try #require(try recorder.ledger.summary(of: id))
            #expect(summary.status == .draft, "seed \(seed)")
        }
        for (key, _) in incremental["view:followups"] ?? [:] {
            let id = try #require(UUID(bytes: key))
            let summary = try #require(try recorder.ledger.summary(of: id))
            #expect(
                summary.status == .completed && summary.followUpRequired && summary.followUpResolvedBy == nil,
                "seed \(seed)")
        }
        // What a dry run says a rebuild would change is what it changes: nothing.
        let comparisons = try recorder.ledger.compareViews()
        let unchanged = comparisons.allSatisfy { $0.isEmpty }
        #expect(unchanged, "a dry run found differences (seed \(seed))")
        let events = try recorder.ledger.views.rebuild()
        let rebuilt = try recorder.viewSnapshot()
        #expect(events == UInt64(try recorder.ledger.log.head().position))
        // The run must have exercised the views, not just started drafts.
        #expect(events > 200)
        #expect((rebuilt["view:inspections"]?.count ?? 0) >= 5)
        #expect(!(rebuilt["view:issues"] ?? [:]).isEmpty)
        #expect(try recorder.ledger.summaries().contains { $0.status == .completed })
        for (table, rows) in rebuilt {
            let before = incremental[table] ?? [:]
            #expect(Set(before.keys) == Set(rows.keys), "\(table): different rows after a rebuild (seed \(seed))")
            for (key, value) in rows where before[key] != nil && before[key] != value {
                let old = try CBORValue(decoding: Array(before[key]!.dropLast(ViewRowChecksum.length)))
                let new = try CBORValue(decoding: Array(value.dropLast(ViewRowChecksum.length)))
                var differences: [String] = []
                if case .map(let a) = old, case .map(let b) = new {
                    for (x, y) in zip(a, b) where x != y { differences.append("\(x.key): \(x.value) → \(y.value)") }
                }
                Issue.record(
                    "\(table) row \(Hex.encode(key)) differs (seed \(seed)), incremental → rebuilt: \(differences)")
                break
            }
        }
        #expect(try recorder.ledger.views.staleProjections().isEmpty)
        // Rebuilt with the others, the drafts come from the shared fold's
        // states; rebuilt alone, from the record types (no fold): the same rows.
        let drafts = recorder.ledger.views.projections.filter { $0.name == InspectionView.Kind.drafts.rawValue }
        #expect(try recorder.ledger.views.rebuild(drafts) == events)
        #expect(try recorder.viewSnapshot() == rebuilt, "the drafts view rebuilt alone (seed \(seed))")
        // Views that share the fold, rebuilt without the inspections view:
        // the first of them made is the one handed the records.
        for kinds in [[InspectionView.Kind.issues, .outbox], [.followups, .issues], [.outbox]] {
            for partitions in [1, 2] {
                let views = try ProjectionSet(
                    log: recorder.ledger.log, projections: InspectionView.all(),
                    sharedTypes: InspectionFold.sharedTypes, rebuildPartitions: partitions)
                let some = views.projections.filter { view in kinds.map(\.rawValue).contains(view.name) }
                #expect(some.count == kinds.count)
                #expect(try views.rebuild(some) == events)
                #expect(
                    try recorder.viewSnapshot() == rebuilt, "\(kinds) alone, \(partitions) partitions (seed \(seed))")
            }
        }
        // The rows a store of the same views elsewhere writes (the bench's
        // SQLite baseline) are the rebuilt rows, without their checksums.
        var elsewhere: [String: [[UInt8]: [UInt8]]] = [:]
        for key in (rebuilt["view:inspections"] ?? [:]).keys {
            let id = try #require(UUID(bytes: key))
            let state = try #require(try recorder.ledger.state(of: id))
            for row in InspectionView.rows(of: state) { elsewhere[row.table, default: [:]][row.key] = row.value }
        }
        // The views of every inspection, not the templates pinned, the
        // receptions or the re-inspections' parents.
        let notPerInspection = [TableName.View.templates, TableName.View.receptions, TableName.View.reinspections]
        for (table, rows) in rebuilt where !rows.isEmpty && !notPerInspection.map(\.name).contains(table) {
            let written = elsewhere[table] ?? [:]
            #expect(Set(written.keys) == Set(rows.keys), "\(table): InspectionView.rows(of:)'s keys (seed \(seed))")
            for (key, value) in rows where written[key] != Array(value.dropLast(ViewRowChecksum.length)) {
                let mine = try written[key].map { try CBORValue(decoding: $0) }
                let stored = try CBORValue(decoding: Array(value.dropLast(ViewRowChecksum.length)))
                Issue.record(
                    "\(table) row \(Hex.encode(key)): rows(of:) \(String(describing: mine)), rebuilt \(stored)")
                break
            }
        }
        #expect(!(elsewhere["view:inspections"] ?? [:]).isEmpty)
        // Folded in partitions of the streams (three, so that a parent and
        // its re-inspection, or a template's pinning and its later use, fall
        // to different ones), the rebuild writes the same rows again.
        // Its states left to the process's exit (`jqc rebuild`'s way), the
        // same rows again.
        for (partitions, memory) in [(2, FoldMemory.freed), (3, .freed), (2, .leftToExit), (1, .leftToExit)] {
            let partitioned = try ProjectionSet(
                log: recorder.ledger.log, projections: InspectionView.all(), sharedTypes: InspectionFold.sharedTypes,
                rebuildPartitions: partitions)
            #expect(try partitioned.rebuild(foldMemory: memory) == events)
            #expect(try recorder.viewSnapshot() == rebuilt, "\(partitions) partitions, \(memory) (seed \(seed))")
        }
    }
}

/// View rows are bytes in a ledger somebody else may have kept.
@Suite struct HostileViewRowTests {
    @Test func aNegativeStoredVersionDoesNotTrap() throws {
        let row = CBORValue.textMap([
            ("status", .text("draft")), ("sync", .text("local")), ("template_id", .text("11")),
            ("template_name", .text("Restroom QC")), ("facility_id", .text("1")), ("facility_name", .text("F")),
            ("version", .integer(-1)),
        ])
        let summary = try InspectionSummary(id: UUID(), cbor: row)
        #expect(summary.version == 0)
    }
}

/// A view row's bytes with its keys' order worked out once are the bytes of
/// the deterministic map (`CBORValue.textMap(…).encoded()`), for every kind
/// of row and values of every shape.
@Suite struct RowKeysTests {
    static let kinds: [(String, RowKeys)] = [
        ("inspections", InspectionSummary.rowKeys), ("issues", IssueRow.rowKeys), ("outbox", OutboxItem.rowKeys),
        ("unreported_submissions", UnreportedSubmission.rowKeys),
    ]

    @Test(arguments: kinds.indices)
    func aRowIsTheDeterministicMapOfItsPairs(kind: Int) {
        let (name, keys) = Self.kinds[kind]
        let shapes: [CBORValue] = [
            .null, .text("Riverside Medical Center"), .unsigned(1_000_324), .integer(-7), .bool(true),
            .double(87.5), .bytes(Array(repeating: 0xAB, count: 16)), .array([.text("a"), .text("b")]),
        ]
        for shift in shapes.indices {
            let pairs = keys.keys.enumerated().map { index, key in (key, shapes[(index + shift) % shapes.count]) }
            #expect(keys.encode(pairs) == CBORValue.textMap(pairs).encoded(), "\(name), shift \(shift)")
        }
    }
}
