import FoundationEssentials
import InspectionDomain
import LedgerCore

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
        /// What kind of damage it is: the `kind` of the report's JSON, the
        /// store's own set (`FindingKind`).
        public typealias Kind = FindingKind

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
        /// A carried record nothing here proves to be its device's (its
        /// reception's checkpoint does not verify, its key is not pinned
        /// here, or it came inside a reception that is itself unproven):
        /// the report's `unproven` says why (`UnprovenPart`).
        case unproven
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
