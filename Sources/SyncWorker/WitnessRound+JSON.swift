import InspectionDomain

/// The witness step as `jqc --json sync` (its `witness`) and `jqc --json
/// witness sync` print it (`Schemas/cli-json.md`): what happened as a word a
/// script matches, the sizes as numbers, and beside them the words a person
/// reads, which may change.
extension CheckpointWitness.Outcome {
    /// The case as a word: `acknowledged`, `up_to_date`, `unsupported`,
    /// `refused`, `failed`, `wrong_answer`, or `cosigning` (the C2SP witnesses' round).
    public var name: String {
        switch self {
        case .acknowledged: "acknowledged"
        case .upToDate: "up_to_date"
        case .unsupported: "unsupported"
        case .refused: "refused"
        case .failed: "failed"
        case .wrongAnswer: "wrong_answer"
        case .cosigning: "cosigning"
        }
    }

    /// `{outcome, size, previous, message, round}`: `size` the checkpoint
    /// acknowledged, held or submitted to the witnesses (null otherwise),
    /// `previous` the one the server held before an acknowledgement (null: its
    /// first), `round` the C2SP witnesses' round (`WitnessRound.jsonValue`) or null.
    public var jsonValue: JSONValue {
        var size: UInt64?
        var previous: UInt64?
        var round: JSONValue = .null
        switch self {
        case .acknowledged(let acknowledged, let before): (size, previous) = (acknowledged, before)
        case .upToDate(let held): size = held
        case .cosigning(let witnesses):
            size = witnesses.checkpoint?.size
            round = witnesses.jsonValue
        case .unsupported, .refused, .failed, .wrongAnswer: break
        }
        return .object([
            "outcome": .string(name), "size": size.map { .integer(Int64($0)) } ?? .null,
            "previous": previous.map { .integer(Int64($0)) } ?? .null, "message": .string(description),
            "round": round,
        ])
    }
}

extension WitnessRound {
    /// `{size, cosigned, quorum, quorum_met, witnesses}`: `size` the checkpoint
    /// submitted (null when every witness held it already), one entry per
    /// witness (`WitnessResult.jsonValue`).
    public var jsonValue: JSONValue {
        .object([
            "size": checkpoint.map { .integer(Int64($0.size)) } ?? .null, "cosigned": .integer(Int64(cosignedCount)),
            "quorum": .integer(Int64(quorum)), "quorum_met": .bool(quorumMet),
            "witnesses": .array(results.map(\.jsonValue)),
        ])
    }
}

extension WitnessResult {
    /// The case as a word: `cosigned`, `up_to_date`, `unknown_log`, `forked`,
    /// `bad_cosignature`, `refused` or `unreachable`.
    public var name: String {
        switch self {
        case .cosigned: "cosigned"
        case .upToDate: "up_to_date"
        case .unknownLog: "unknown_log"
        case .forked: "forked"
        case .badCosignature: "bad_cosignature"
        case .refused: "refused"
        case .unreachable: "unreachable"
        }
    }

    /// The witness's name (its key's) and the URL it was asked at.
    public var witness: (name: String, url: String) {
        switch self {
        case .cosigned(let target, _), .unknownLog(let target, _, _), .badCosignature(let target, _),
            .refused(let target, _, _), .unreachable(let target, _):
            (target.key.name, target.url)
        case .upToDate(let name, let url, _): (name, url)
        case .forked(let fork): (fork.witness.key.name, fork.witness.url)
        }
    }

    /// `{name, url, outcome, size, http_status, line}`: `size` the checkpoint
    /// the witness holds when it was up to date or forked (null otherwise),
    /// `http_status` a refusal's status (null otherwise), `line` the words
    /// `jqc witness sync` prints for it.
    public var jsonValue: JSONValue {
        let size: UInt64? =
            switch self {
            case .upToDate(_, _, let held): held
            case .forked(let fork): fork.heldSize
            default: nil
            }
        let status: Int? =
            if case .refused(_, let status, _) = self { status } else { nil }
        return .object([
            "name": .string(witness.name), "url": .string(witness.url), "outcome": .string(name),
            "size": size.map { .integer(Int64($0)) } ?? .null,
            "http_status": status.map { .integer(Int64($0)) } ?? .null,
            "line": .string(line),
        ])
    }
}
