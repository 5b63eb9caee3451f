import FoundationEssentials
import LedgerCore

/// What one witness did with the device's checkpoint (`WitnessCosigning`).
public enum WitnessResult: Sendable, Equatable {
    /// It cosigned; the cosignature verified against its configured key.
    case cosigned(WitnessTarget, Cosignature)
    /// It had cosigned all but the log's records of its cosignatures: nothing sent.
    case upToDate(name: String, url: String, size: UInt64)
    /// 404: the witness does not know the log (its operator must enrol it).
    case unknownLog(WitnessTarget, origin: String, logKey: String)
    /// It cosigned a history of this device that this ledger does not extend:
    /// a size larger than this log, or a conflict (409) or a proof it could not
    /// verify (422) from the size it holds. Both checkpoints are in the fork.
    case forked(WitnessFork)
    /// It answered 200 without a cosignature by its configured key that verifies.
    case badCosignature(WitnessTarget, why: String)
    /// Another refusal (403, 400, 5xx…), `why` from its answer.
    case refused(WitnessTarget, status: Int, why: String)
    /// It could not be reached: tried again next sync.
    case unreachable(WitnessTarget, why: String)

    /// The verified cosignature of this round, if it cosigned.
    public var cosignature: Cosignature? {
        if case .cosigned(_, let cosignature) = self { return cosignature }
        return nil
    }

    /// Whether it counts towards the quorum (cosigned now, or earlier and still current).
    public var counts: Bool {
        switch self {
        case .cosigned, .upToDate: true
        default: false
        }
    }

    /// A fork or a bad cosignature: `jqc sync` exits with status 1.
    public var isAlarm: Bool {
        switch self {
        case .forked, .badCosignature: true
        default: false
        }
    }

    /// One line, as `jqc sync` and `jqc witness sync` print it.
    public var line: String {
        switch self {
        case .cosigned(let witness, let cosignature):
            let time = Timestamp(microsecondsSinceEpoch: Int64(cosignature.timestamp) * 1_000_000).iso8601
            return "witness \(witness.key.name) (\(witness.url)) cosigned the checkpoint at \(time)"
        case .upToDate(let name, let url, let size):
            return "witness \(name) (\(url)) holds this device's checkpoint of \(size) records; nothing was "
                + "recorded since but its cosignatures"
        case .unknownLog(let witness, let origin, let key):
            return "witness \(witness.key.name) (\(witness.url)): this witness does not know log \(origin); enrol it "
                + "with the witness's operator: origin \(origin), key \(key)"
        case .forked(let fork):
            return "WITNESS \(fork.witness.key.name) (\(fork.witness.url)) REFUSED this device's checkpoint: it "
                + "cosigned a checkpoint of \(fork.heldSize) records of log \(fork.ours.origin) that this ledger does "
                + "not extend (\(fork.checkpoints)). Another copy of this device recorded its own history (a backup used as a second device?): a "
                + "FORK of this device. Keep both ledgers as they are and report it."
        case .badCosignature(let witness, let why):
            return "WITNESS \(witness.key.name) (\(witness.url)) FAILED: \(why); its answer was not believed and "
                + "nothing was recorded. Check its key with its operator ('jqc witness list')."
        case .refused(let witness, let status, let why):
            let hint =
                status == 403
                ? " (it trusts another key for this log: ask its operator to enrol this device's key)"
                : status == 400 ? " (it found the request malformed)" : ""
            return "witness \(witness.key.name) (\(witness.url)) refused the checkpoint\(hint): \(why)"
        case .unreachable(let witness, let why):
            return "witness \(witness.key.name) (\(witness.url)) could not be reached (\(why)); the checkpoint is "
                + "sent again next sync"
        }
    }
}

/// What submitting the checkpoint to every configured witness came to.
public struct WitnessRound: Sendable, Equatable {
    public var results: [WitnessResult]
    /// The quorum in force (`WitnessList.effectiveQuorum`).
    public var quorum: Int
    /// The checkpoint submitted, nil when every witness was up to date.
    public var checkpoint: Checkpoint?

    public init(results: [WitnessResult], quorum: Int, checkpoint: Checkpoint? = nil) {
        self.results = results
        self.quorum = quorum
        self.checkpoint = checkpoint
    }

    public var cosignedCount: Int { results.filter(\.counts).count }
    public var quorumMet: Bool { cosignedCount >= quorum && quorum > 0 }
    public var isAlarm: Bool { results.contains(where: \.isAlarm) }
    /// Whether nothing was sent (every witness already held the checkpoint).
    public var upToDate: Bool {
        results.allSatisfy {
            if case .upToDate = $0 { return true }
            return false
        }
    }

    /// Each witness's line, then the count against the quorum.
    public var lines: [String] {
        let size = checkpoint.map { " of \($0.size) records" } ?? ""
        let verdict =
            "witnesses: \(cosignedCount) of \(results.count) cosigned the checkpoint\(size) (quorum \(quorum): "
            + (quorumMet ? "met)" : "NOT met)")
        return results.map(\.line) + [verdict]
    }
}
