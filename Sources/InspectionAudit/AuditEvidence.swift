import FoundationEssentials
import InspectionDomain
import LedgerCore

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
    /// With C2SP witnesses configured: what the stored cosigned checkpoint
    /// shows (`CosignedCheckpoint.line`), said instead of the legacy line.
    public var cosigning: String?
    /// Whether the quorum of configured witnesses cosigned a checkpoint this log extends.
    public var quorumMet: Bool?
    /// The last fork of this device a C2SP witness reported (both
    /// checkpoints), as the device's stream records it; said after the line.
    public var fork: String?
    /// Where the device's stream records that fork: the audit's verdict is
    /// then FORKED (`AuditReport.forks`), whatever the chain says.
    public var forkRecorded: RecordedFork?
    /// With `--witness`: each configured witness's answer asked now
    /// (`CosignedCheckpointProbe`), in the report's words.
    public var askedNow: [AskedWitness] = []

    public init(acknowledgedSize: UInt64?, acknowledgedAt: Timestamp?, server: String?, lastOutcome: String?) {
        self.acknowledgedSize = acknowledgedSize
        self.acknowledgedAt = acknowledgedAt
        self.server = server
        self.lastOutcome = lastOutcome
    }

    /// The report's lines: the witness line, then a fork a witness
    /// reported, then each witness asked now.
    public var lines: [String] { [line] + (fork.map { [$0] } ?? []) + askedNow.map(\.line) }

    /// One line for the report.
    public var line: String {
        if let cosigning { return cosigning }
        if let size = acknowledgedSize {
            return "witness: the server\(server.map { " " + $0 } ?? "") acknowledged a checkpoint of \(size) records"
                + (acknowledgedAt.map { " at \($0.iso8601)" } ?? "")
                + (lastOutcome.map { "; since then: \($0)" } ?? "")
        }
        return "witness: the history was NOT witnessed"
            + (lastOutcome.map { " (\($0))" } ?? " (no server has acknowledged a checkpoint of this log)")
    }
}

/// The record of a fork of this device a C2SP witness reported
/// (`sync.checkpoint_witnessed`, refused, its message `FORK of this device: …`).
public struct RecordedFork: Sendable, Equatable {
    /// When it was recorded (the device's clock).
    public var at: Timestamp
    /// Its position in the log.
    public var position: UInt64

    public init(at: Timestamp, position: UInt64) {
        self.at = at
        self.position = position
    }
}

/// One witness asked now what it last cosigned of this device (`jqc audit --witness`).
public struct AskedWitness: Sendable, Equatable {
    /// The witness's name.
    public var name: String
    /// `still_holds`, `advanced_as_recorded`, `forked` or `not_asked`.
    public var answer: String
    /// The size it holds, when its answer names one.
    public var size: UInt64?
    /// The answer in the report's words.
    public var line: String
    /// Whether it shows a fork of this device.
    public var isFork: Bool { answer == "forked" }

    public init(name: String, answer: String, size: UInt64?, line: String) {
        self.name = name
        self.answer = answer
        self.size = size
        self.line = line
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
    /// The device whose record captured it.
    public var device: UUID?
    /// Captured after the record was final, so `apply` ignored it.
    public var ignored: Bool
    public var file: PhotoFile
    /// Where the server stored it, once uploaded.
    public var serverPath: String?
}
