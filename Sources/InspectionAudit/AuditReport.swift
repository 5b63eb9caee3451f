import Foundation
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
                actor: entry.record?.actor, ignored: entry.hadNoEffect,
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
            isClean ? "INTACT" : "INTACT chain, but \(problems.count) problem\(problems.count == 1 ? "" : "s") found"
        case .notIntact(let finding): "NOT INTACT: \(finding.message)"
        case .skipped:
            "NOT VERIFIED (--no-verify)" + (isClean ? "" : "; \(problems.count) problem(s) found")
        }
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

/// The result of walking the hash chain, stated without the store's types.
public struct ChainCheck: Sendable {
    /// What the walk concluded.
    public enum Result: Sendable {
        case intact
        case notIntact(Finding)
        /// The walk was skipped (`--no-verify`).
        case skipped
    }

    /// The first thing found wrong.
    public struct Finding: Hashable, Sendable {
        /// What kind of damage it is: the `kind` of the report's JSON.
        public enum Kind: String, Hashable, Sendable, CaseIterable {
            // Found by the walk of the whole chain.
            case changed
            case missing
            case reordered
            case unreadable
            case truncated
            case digestMismatch = "digest_mismatch"
            case indexMismatch = "index_mismatch"
            case brokenStreamLink = "broken_stream_link"
            case treeNodeMismatch = "tree_node_mismatch"
            case treeNodeMissing = "tree_node_missing"
            case treeNodeExtra = "tree_node_extra"
            case malformed
            case notDeterministic = "not_deterministic"
            case newerFormat = "newer_format"
            case formatSequence = "format_sequence"
            case checkpointMismatch = "checkpoint_mismatch"
            // Found by the proofs of one inspection's records.
            case wrongRecord = "wrong_record"
            case notExtended = "not_extended"

            /// Whether the finding puts every record up to it in doubt
            /// rather than naming one record that failed.
            var concernsTheWholeLog: Bool { self == .digestMismatch || self == .truncated }
        }

        public var kind: Kind
        /// The position concerned (0 when none: an index mismatch).
        public var position: UInt64
        public var message: String

        public init(kind: Kind, position: UInt64, message: String) {
            self.kind = kind
            self.position = position
            self.message = message
        }
    }

    public var result: Result
    /// Records whose hashes were recomputed.
    public var checked: UInt64
    /// The head recomputed by the walk, or the stored head when skipped.
    public var head: LedgerDigest
    /// The digest handed out earlier that the log was checked against.
    public var digest: LedgerDigest?
    /// The last position proven unchanged: every record up to it hashed to
    /// the stored chain (and, with a digest, to the digest).
    public var verifiedThrough: UInt64
    /// How long the walk took.
    public var seconds: Double?
    /// How the log was checked.
    public var method: Method
    /// With `method == .proofs`: what the proofs established and against what.
    public var proof: ProofEvidence?
    /// Whether a server witnessed the device's history, as the log and (with
    /// `--witness`) the server say.
    public var witness: WitnessEvidence?

    /// How the log was checked.
    public enum Method: String, Sendable {
        /// Every record's chain hash recomputed from position 1 (`--full`,
        /// `--digest`): O(n).
        case fullWalk = "full_walk"
        /// The inspection's records proven through the Merkle tree against a
        /// checkpoint: O(k log n).
        case proofs
        /// Nothing checked (`--no-verify`).
        case skipped
    }

    public init(
        result: Result, checked: UInt64, head: LedgerDigest, digest: LedgerDigest?, verifiedThrough: UInt64,
        seconds: Double?, method: Method = .fullWalk, proof: ProofEvidence? = nil
    ) {
        self.result = result
        self.checked = checked
        self.head = head
        self.digest = digest
        self.verifiedThrough = verifiedThrough
        self.seconds = seconds
        if case .skipped = result { self.method = .skipped } else { self.method = method }
        self.proof = proof
    }

    public var isIntact: Bool {
        if case .intact = result { return true }
        return false
    }

    /// What a failed check still proves, in words: no range "1–0" when
    /// nothing is proven (a wrong digest puts every record in doubt).
    public var provenRange: String {
        switch verifiedThrough {
        case 0: "no record is proven unchanged"
        case 1: "record 1 is proven unchanged"
        default: "records 1–\(verifiedThrough) are proven unchanged"
        }
    }

    /// `INTACT`, `NOT INTACT` or `NOT VERIFIED`.
    public var status: String {
        switch result {
        case .intact: "INTACT"
        case .notIntact: "NOT INTACT"
        case .skipped: "NOT VERIFIED"
        }
    }

    /// What the chain proves about one record.
    public enum Standing: String, Sendable {
        /// Proven unchanged.
        case verified
        /// The first finding is there.
        case failed
        /// After the finding, or not walked or proven.
        case notVerified = "not_verified"
        /// The stream index names a record the log does not hold (no position).
        case missing
        /// A record of another device's log carried by a reception: proven
        /// against that device's signed checkpoint (the report's notes say
        /// whether it verified), not by this log's chain.
        case senderCheckpoint = "sender_checkpoint"
    }

    /// What the chain proves about one record: `verified`, `failed` (the
    /// first finding is there) or `notVerified` (after it, or not walked).
    public func standing(of position: UInt64) -> Standing {
        if let proof {
            // Only the inspection's own records are proven; linked ones are not.
            if case .notIntact(let finding) = result, finding.position == position, position > 0 { return .failed }
            return proof.proven.contains(position) ? .verified : .notVerified
        }
        if case .notIntact(let finding) = result, finding.position == position, position > 0,
            !finding.kind.concernsTheWholeLog
        {
            return .failed
        }
        if case .skipped = result { return .notVerified }
        return position > 0 && position <= verifiedThrough ? .verified : .notVerified
    }

    /// The standing of a timeline entry: `missing` for a hole in the stream
    /// (position 0), else the standing of its record.
    public func standing(ofEntryAt position: UInt64) -> Standing {
        position > 0 ? standing(of: position) : .missing
    }

    /// The standing of `entry`: a carried record's is its sender's checkpoint.
    public func standing(of entry: TimelineEntry) -> Standing {
        entry.carriedIn != nil ? .senderCheckpoint : standing(ofEntryAt: entry.position)
    }
}

/// What `jqc audit` proved through the Merkle tree (RFC 9162) instead of
/// walking the chain: the inspection's records are the leaves the tree holds
/// at their positions (inclusion proofs), versions 1, 2, 3 … linked by their
/// per-stream back-links (so none is hidden), and the tree extends the
/// checkpoint it was anchored to (a consistency proof).
public struct ProofEvidence: Sendable {
    /// Where the checkpoint came from.
    public enum Anchor: String, Sendable {
        /// Made of today's tree when the audit ran.
        case madeNow = "made_now"
        /// A checkpoint file handed over earlier (`--checkpoint FILE`).
        case file
        /// The server's latest checkpoint of this device (`--witness`).
        case witness
        /// On a copy without the device key and without `last-checkpoint`:
        /// the newest checkpoint the witness acknowledged, as the log records
        /// it (`sync.checkpoint_witnessed`: its size and root, no signature).
        case witnessedInLog = "witnessed_in_log"
    }

    /// The tree the records were proven in (today's log).
    public var treeSize: UInt64
    /// Its root hash, base64 as in a checkpoint.
    public var root: String
    /// The positions of the inspection's records proven (all of them when intact).
    public var proven: Set<UInt64>
    /// The inspection's records the stream index names.
    public var records: Int
    public var anchor: Anchor
    /// The file the checkpoint was read from (`file`), or the server's URL (`witness`).
    public var source: String?
    /// The checkpoint's tree size and root (base64).
    public var checkpointSize: UInt64
    public var checkpointRoot: String
    /// The key name that signed it, or nil when it was not signed (an
    /// auditor's copy without the device key).
    public var signer: String?
    /// The hashes in the consistency proof from the checkpoint to today's tree.
    public var consistencyHashes: Int
    /// The signing key's id (8 hex digits), when it was signed.
    public var keyID: String?
    /// Whether the auditor pinned the key (`--key VKEY`) rather than taking
    /// the one the log published.
    public var keyPinned = false
    /// How many keys the device's log published (more than one after a rotation).
    public var publishedKeys = 0

    public init(
        treeSize: UInt64, root: String, proven: Set<UInt64>, records: Int, anchor: Anchor, source: String?,
        checkpointSize: UInt64, checkpointRoot: String, signer: String?, consistencyHashes: Int
    ) {
        self.treeSize = treeSize
        self.root = root
        self.proven = proven
        self.records = records
        self.anchor = anchor
        self.source = source
        self.checkpointSize = checkpointSize
        self.checkpointRoot = checkpointRoot
        self.signer = signer
        self.consistencyHashes = consistencyHashes
    }

    /// Where the checkpoint came from, in words that follow "against".
    public var anchorPhrase: String {
        let keys = publishedKeys > 1 ? "; the log published \(publishedKeys) keys" : ""
        let key = keyID.map { " (key id \($0), \(keyPinned ? "pinned" : "a key the log published")\(keys))" } ?? ""
        let signed = signer.map { "signed by \($0)\(key)" } ?? "unsigned (no device key in this ledger directory)"
        switch anchor {
        case .madeNow: return "a checkpoint of today's \(checkpointSize) records made now, \(signed)"
        case .file:
            return "the checkpoint of \(checkpointSize) records in \(source ?? "a file"), \(signed), "
                + "with a consistency proof of \(consistencyHashes) hashes"
        case .witness:
            return
                "the server's latest checkpoint of \(checkpointSize) records (\(source ?? "the server")), \(signed), "
                + "with a consistency proof of \(consistencyHashes) hashes"
        case .witnessedInLog:
            return
                "the checkpoint of \(checkpointSize) records the witness acknowledged, as this log records it "
                + "(\(source ?? "the device's stream"); its size and root, no signature: this copy holds no device key "
                + "and no last-checkpoint), with a consistency proof of \(consistencyHashes) hashes"
        }
    }

    /// What the proofs leave out, in words.
    public static let scope =
        "records of other inspections are not this audit's concern and were not checked "
        + "('jqc audit --full' or 'jqc verify --full' walks the whole log)"
}

/// Whether a server (the sync witness) holds a checkpoint of this device's
/// log: from the log's `checkpoint.witnessed` sync outcomes, and with
/// `--witness` from the server itself.
public struct WitnessEvidence: Sendable {
    /// The last checkpoint a server acknowledged, as the log records it.
    public var acknowledgedSize: UInt64?
    public var acknowledgedAt: Timestamp?
    public var server: String?
    /// Set when the last sync found the server does not witness (404) or it refused.
    public var lastOutcome: String?

    public init(acknowledgedSize: UInt64?, acknowledgedAt: Timestamp?, server: String?, lastOutcome: String?) {
        self.acknowledgedSize = acknowledgedSize
        self.acknowledgedAt = acknowledgedAt
        self.server = server
        self.lastOutcome = lastOutcome
    }

    /// One line for the report.
    public var line: String {
        if let size = acknowledgedSize {
            return "witness: the server\(server.map { " " + $0 } ?? "") acknowledged a checkpoint of \(size) records"
                + (acknowledgedAt.map { " at \($0.iso8601)" } ?? "")
                + (lastOutcome.map { "; since then: \($0)" } ?? "")
        }
        return "witness: the history was NOT witnessed"
            + (lastOutcome.map { " (\($0))" } ?? " (no server has acknowledged a checkpoint of this log)")
    }
}

/// The template an inspection pinned, and whether its content is the one
/// the inspection's start names.
public struct TemplateEvidence: Sendable {
    /// The content hash recorded in `inspection.started`.
    public var hash: String
    /// The pinned template, when found.
    public var template: Template?
    /// Where the `template.pinned` event is, when known.
    public var pinnedAt: UInt64?
    /// Where it was pinned and how it was found, in words that follow
    /// "pinned" (`in this inspection's stream at position 1`).
    public var source: String

    public init(hash: String, template: Template?, pinnedAt: UInt64?, source: String) {
        self.hash = hash
        self.template = template
        self.pinnedAt = pinnedAt
        self.source = source
    }

    /// Whether the template's canonical content hashes to the recorded hash:
    /// a template found anywhere is trustworthy exactly when this holds.
    public var hashMatches: Bool { template?.contentHash == hash }

    /// What is wrong, or nil.
    public var problem: String? {
        guard !hash.isEmpty else { return nil }
        guard let template else {
            return "the pinned template \(hash) is not in the log: the form's fields cannot be named"
        }
        return template.contentHash == hash
            ? nil
            : "the pinned template's content hashes to \(template.contentHash), not the recorded \(hash)"
    }
}

/// A parent or child inspection, as its own stream tells it.
public struct LinkedInspection: Sendable {
    public var id: UUID
    public var status: InspectionStatus
    public var templateID: String
    public var facilityName: String
    public var startedAt: Timestamp?
    /// The position of its `inspection.started`.
    public var startedPosition: UInt64?
    public var completedAt: Timestamp?
    /// The position of its `inspection.submitted`.
    public var submittedPosition: UInt64?
    public var score: Double?
    public var followUpRequired: Bool
    /// What does not add up (its stream does not name this inspection).
    public var problem: String?

    public init(
        id: UUID, status: InspectionStatus, templateID: String, facilityName: String, startedAt: Timestamp?,
        startedPosition: UInt64?, completedAt: Timestamp?, submittedPosition: UInt64?, score: Double?,
        followUpRequired: Bool, problem: String? = nil
    ) {
        self.id = id
        self.status = status
        self.templateID = templateID
        self.facilityName = facilityName
        self.startedAt = startedAt
        self.startedPosition = startedPosition
        self.completedAt = completedAt
        self.submittedPosition = submittedPosition
        self.score = score
        self.followUpRequired = followUpRequired
        self.problem = problem
    }

    /// The link as the linked inspection's own timeline shows it.
    public init(timeline: AuditTimeline, problem: String? = nil) {
        let state = timeline.state
        func position(of type: InspectionEventType) -> UInt64? {
            timeline.entries.first { $0.event?.eventType == type && !$0.hadNoEffect }?.position
        }
        self.init(
            id: timeline.inspectionID, status: state.status, templateID: state.templateID,
            facilityName: state.facilityName, startedAt: state.startedAt, startedPosition: position(of: .started),
            completedAt: state.completedAt, submittedPosition: position(of: .submitted), score: state.score,
            followUpRequired: state.followUpRequired, problem: problem)
    }
}

/// The stored file of a photo, checked against its recorded hash.
public struct PhotoFile: Sendable {
    public var status: PhotoFileStatus
    /// The bytes, for embedding in HTML (nil when not loaded or missing).
    public var contents: [UInt8]?

    public init(status: PhotoFileStatus, contents: [UInt8]?) {
        self.status = status
        self.contents = contents
    }
}

/// Whether a stored photo file is the one the log recorded.
public enum PhotoFileStatus: Hashable, Sendable {
    /// The file hashes to its recorded SHA-256.
    case matches
    /// No file under that hash.
    case missing
    /// A file is there, but its bytes hash to `actualSHA256`.
    case altered(actualSHA256: String)
    /// Not looked at.
    case notChecked

    /// `matches`, `missing`, `altered` or `not_checked`.
    public var name: String {
        switch self {
        case .matches: "matches"
        case .missing: "missing"
        case .altered: "altered"
        case .notChecked: "not_checked"
        }
    }
}

/// One captured photo, where it was captured and what its file is now.
public struct PhotoEvidence: Sendable {
    public var captured: PhotoCaptured
    public var position: UInt64
    public var recordedAt: Timestamp?
    public var actor: Actor?
    /// Captured after the record was final, so `apply` ignored it.
    public var ignored: Bool
    public var file: PhotoFile
    /// Where the server stored it, once uploaded.
    public var serverPath: String?
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
            if found == nil || record.position > found!.0 { found = (record.position, record.recordedAt) }
        }
        return found
    }
}
