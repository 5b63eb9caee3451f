import FoundationEssentials
import InspectionDomain
import LedgerCore

/// Everything `jqc audit` states about one inspection, gathered by the CLI
/// and rendered as text, JSON (`Schemas/audit-report.schema.json`) or one
/// self-contained HTML file.
///
/// A plain value: the CLI reads the log, the photo files and the chain, and
/// this target turns what was read into the report without touching a file.
public struct AuditReport: Sendable {
    /// The `format` member of the JSON report; bumped when its shape changes
    /// incompatibly.
    public static let format = "jqc-audit-report/1"

    public var inspectionID: UUID
    /// When the report was made (the auditor's clock, not the ledger's).
    public var generatedAt: Timestamp
    /// The ledger directory audited, as given.
    public var ledgerPath: String
    /// The whole chain, checked from position 1 to the head.
    public var chain: ChainCheck
    /// Set when the report shows the inspection as it stood at a moment.
    public var asOf: AsOf?
    /// The inspection's events up to the report's moment.
    public var timeline: AuditTimeline
    /// The inspection as the timeline leaves it, with a follow-up resolved by
    /// a re-inspection submitted by the report's moment.
    public var form: InspectionState
    /// The pinned template and how it was found.
    public var template: TemplateEvidence
    /// The inspection this one re-inspects, if any.
    public var parent: LinkedInspection?
    /// The re-inspections started from this one (up to the report's moment).
    public var children: [LinkedInspection]
    /// The stored file of every captured photo, by SHA-256 (hex).
    public var photoFiles: [String: PhotoFile]
    /// The inspection's sync state in one word (`local`, `pending`, …), as
    /// `jqc show` states it.
    public var syncState: String
    /// Facts about how the report was made that are not problems (a view
    /// that was stale, so links were found by scanning the log).
    public var notes: [String]
    /// The chain hash stored with each record of the timeline (and of the
    /// linked inspections), by position: the value a digest or a later
    /// check can be compared with, event by event. Filled by the CLI.
    public var chainHashes: [UInt64: Digest256] = [:]
    /// Two histories of a device whose records the inspection holds, as
    /// this ledger recorded them (`device.fork_seen`; for this device itself
    /// also a C2SP witness's refusal, `WitnessEvidence.forkRecorded`),
    /// worded: the verdict is then FORKED, whatever the chain says. Filled
    /// by the assembly.
    public var forks: [String] = []
    /// This ledger's device id: the one device whose actors the report
    /// states as checked; another device's are claims (`EventWording.actor`).
    /// Filled by the assembly.
    public var ownDevice: UUID?
    /// The carried entries nothing here proves to be their device's
    /// (`UnprovenPart`): the verdict is then PARTLY PROVEN, whatever the
    /// chain says. Filled by the assembly.
    public var unproven: [UnprovenPart] = []

    public init(
        inspectionID: UUID, generatedAt: Timestamp, ledgerPath: String, chain: ChainCheck, asOf: AsOf?,
        timeline: AuditTimeline, form: InspectionState, template: TemplateEvidence, parent: LinkedInspection?,
        children: [LinkedInspection], photoFiles: [String: PhotoFile], syncState: String, notes: [String] = []
    ) {
        self.inspectionID = inspectionID
        self.generatedAt = generatedAt
        self.ledgerPath = ledgerPath
        self.chain = chain
        self.asOf = asOf
        self.timeline = timeline
        self.form = form
        self.template = template
        self.parent = parent
        self.children = children
        self.photoFiles = photoFiles
        self.syncState = syncState
        self.notes = notes
    }

    // MARK: - Findings

    /// Every photo the stream captured, with the check of its stored file.
    public var photos: [PhotoEvidence] {
        timeline.capturedPhotos.map { entry, captured in
            let hash = captured.photo.sha256.hex
            return PhotoEvidence(
                captured: captured, position: entry.position, recordedAt: entry.record?.recordedAt,
                actor: entry.record?.actor, device: entry.record?.device, ignored: entry.hadNoEffect,
                file: photoFiles[hash] ?? PhotoFile(status: .notChecked, contents: nil),
                serverPath: form.sync.uploadedPhotos[captured.photo.photoID])
        }
    }

    /// Every sync outcome in the order recorded.
    public var syncOutcomes: [TimelineEntry] { timeline.entries.filter(\.isSyncOutcome) }

    /// Everything that makes the audit fail, worded for a person. Empty
    /// means the chain is intact and every photo file matches its hash.
    public var problems: [String] {
        var found: [String] = []
        if case .notIntact(let finding) = chain.result { found.append("the chain is not intact: \(finding.message)") }
        found += forks
        found += unproven.map { $0.line(own: ownDevice) }
        found += timeline.problems
        for photo in photos {
            switch photo.file.status {
            case .matches, .notChecked: break
            case .missing:
                found.append(
                    "photo \(photo.captured.photo.photoID.lowercased) (sha256 \(photo.captured.photo.sha256.hex)) "
                        + "is missing from the photo store")
            case .altered(let actual):
                found.append(
                    "photo \(photo.captured.photo.photoID.lowercased) was altered: its stored file hashes to "
                        + "\(actual), not the recorded \(photo.captured.photo.sha256.hex)")
            }
        }
        if let problem = template.problem { found.append(problem) }
        if let parent, let problem = parent.problem { found.append(problem) }
        for child in children { if let problem = child.problem { found.append(problem) } }
        return found
    }

    /// Whether an auditor can rely on the record: the chain is intact (or
    /// was not checked) and nothing else is wrong.
    public var isClean: Bool { problems.isEmpty }

    /// The result in one line, for the top of every rendering.
    public var headline: String {
        switch chain.result {
        case .intact:
            if !forks.isEmpty {
                // A proven chain of two histories is no record to rely on;
                // the problems name each fork.
                let others = problems.count - forks.count
                return "FORKED: \(forks.count) fork\(forks.count == 1 ? "" : "s") of a device whose records it holds"
                    + (others > 0 ? ", and \(others) other problem\(others == 1 ? "" : "s") found" : "")
            }
            if !unproven.isEmpty {
                // Intact as far as it is proven: the problems name each part that is not.
                let entries = unproven.reduce(0) { $0 + $1.records.count }
                let others = problems.count - unproven.count
                return "PARTLY PROVEN: \(entries) carried entr\(entries == 1 ? "y" : "ies") of another device "
                    + "unproven" + (others > 0 ? ", and \(others) other problem\(others == 1 ? "" : "s") found" : "")
            }
            return isClean
                ? "INTACT" : "INTACT chain, but \(problems.count) problem\(problems.count == 1 ? "" : "s") found"
        case .notIntact(let finding): return "NOT INTACT: \(finding.message)"
        case .skipped:
            return "NOT VERIFIED (--no-verify)" + (isClean ? "" : "; \(problems.count) problem(s) found")
        }
    }

    /// The verdict in one word, as the JSON report's `result.verdict` has it:
    /// `INTACT`, `FORKED`, `PARTLY PROVEN` (carried entries nothing here
    /// proves: `unproven`), `NOT INTACT`, `NOT VERIFIED` or `PROBLEMS` (an
    /// intact chain with other problems). FORKED outranks PARTLY PROVEN,
    /// which outranks PROBLEMS.
    public var verdict: String {
        switch chain.result {
        case .intact:
            !forks.isEmpty ? "FORKED" : !unproven.isEmpty ? "PARTLY PROVEN" : isClean ? "INTACT" : "PROBLEMS"
        case .notIntact: "NOT INTACT"
        case .skipped: "NOT VERIFIED"
        }
    }

    /// The standing of `entry`: a carried record's is its sender's
    /// checkpoint, or `unproven` when nothing here proves it.
    public func standing(of entry: TimelineEntry) -> ChainCheck.Standing {
        if entry.carriedIn != nil, let id = entry.record?.id, unprovenRecords.contains(id) { return .unproven }
        return chain.standing(of: entry)
    }

    /// The ids of every unproven carried entry.
    public var unprovenRecords: Set<UUID> { Set(unproven.flatMap(\.records)) }

    /// Who recorded an event, as this ledger can vouch for it: another
    /// device's actor is a claim (`EventWording.actor`).
    public func actorText(_ actor: Actor?, device: UUID?) -> String {
        guard let actor else { return "?" }
        return EventWording.actor(actor, recordedBy: device, here: ownDevice, markingUnverified: true)
    }

    /// How the form is titled: as submitted, as discarded, or as it stands.
    public var formTitle: String {
        if let asOf { return "Form as of position \(asOf.position) (\(asOf.recordedAt.iso8601))" }
        switch form.status {
        case .completed: return "Form as submitted" + (form.completedAt.map { " at \($0.iso8601)" } ?? "")
        case .discarded: return "Form as discarded" + (form.discardedAt.map { " at \($0.iso8601)" } ?? "")
        case .draft: return "Draft form as it stands"
        case .notStarted: return "Form (the inspection was never started)"
        }
    }

    /// The score the form holds: recorded at submit, else computed so far.
    public var scoreSoFar: Double? { form.template.flatMap { Score.compute(template: $0, values: form.values) } }
}

// MARK: - Parts of the report

/// The moment a report shows.
public struct AsOf: Hashable, Sendable {
    /// What the auditor asked for, as typed.
    public var requested: String
    /// The last position of the inspection folded into the report.
    public var position: UInt64
    /// When that event was recorded.
    public var recordedAt: Timestamp

    public init(requested: String, position: UInt64, recordedAt: Timestamp) {
        self.requested = requested
        self.position = position
        self.recordedAt = recordedAt
    }
}

// MARK: - Building

extension AuditReport {
    /// The inspection as it stood at the timeline's end, with its follow-up
    /// cleared by the re-inspection submitted first (by time, then id: the
    /// rule the views follow, so the form matches `jqc show`) among those
    /// submitted by the report's moment.
    public static func form(of timeline: AuditTimeline, children: [LinkedInspection]) -> InspectionState {
        var state = timeline.state
        let submitted = children.filter { $0.status == .completed && $0.submittedPosition != nil }
        let first = submitted.min { a, b in
            let (ta, tb) = (a.completedAt?.microsecondsSinceEpoch ?? 0, b.completedAt?.microsecondsSinceEpoch ?? 0)
            return ta != tb ? ta < tb : a.id.bytes.lexicographicallyPrecedes(b.id.bytes)
        }
        if let first { state.resolveFollowUp(by: first.id) }
        return state
    }

    /// The last event of the inspection at or before `moment` (its position
    /// and time): for a position, the last at or before it; for a time, the
    /// last recorded at or before it. Nil when it had no event by then.
    public static func position(of moment: LogMoment, in entries: [StreamEntry]) -> (UInt64, Timestamp)? {
        var found: (UInt64, Timestamp)?
        for case .record(let record) in entries
        where moment.admitsAsUpperBound(position: record.position, recordedAt: record.recordedAt) {
            if found.map({ record.position > $0.0 }) ?? true { found = (record.position, record.recordedAt) }
        }
        return found
    }
}
