import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc verify` of a ledger, in its two steps: what a checkpoint handed
/// over proves (its signature, a consistency proof that today's log extends
/// it, and with an inspection, each of its records proven through the tree),
/// then the walk of the whole log in one snapshot (`EventLog.verify`), with
/// a digest and the checkpoint's root recomputed from the records. Each step
/// gives the lines a person reads and the members of the JSON result.
public struct LedgerVerification {
    /// A digest from `jqc digest` the walk proves the log extends.
    public let digest: LedgerDigest?
    /// A signed checkpoint from `jqc checkpoint`.
    public let checkpointFile: String?
    /// With a checkpoint: the inspection whose records are proven against it (any unique prefix).
    public let inspection: String?
    /// Whether the whole log is walked (always without a checkpoint, and with a digest).
    public let full: Bool

    public init(digest: LedgerDigest?, checkpointFile: String?, inspection: String?, full: Bool) {
        self.digest = digest
        self.checkpointFile = checkpointFile
        self.inspection = inspection
        self.full = full
    }

    /// The members of the JSON result so far and the lines of text, in order.
    public struct Step {
        public var members: [String: JSONValue] = [:]
        public var lines: [String] = []
        /// The checkpoint handed over, verified and extended: the walk recomputes its root.
        public var signed: Checkpoint?
        /// What the walk found wrong, nil when the log is intact.
        public var failure: LedgerVerificationFailure?

        /// The result object, its keys in a stable order.
        public var jsonValue: JSONValue {
            .object(members.sorted { $0.key < $1.key }.map { JSONValue.Member($0.key, $0.value) })
        }
    }

    /// The checkpoint's step (nothing without `--checkpoint`): read and
    /// verified with a key the log published, the log proven to extend it,
    /// then the inspection's records proven through its tree; thrown at the
    /// first of them that fails.
    public func anchoring(_ auditor: AuditorLedger, home: LedgerDirectory) throws -> Step {
        var step = Step()
        guard let checkpointFile else { return step }
        let (checkpoint, key) = try CheckpointFile.read(checkpointFile, log: auditor.log, home: home)
        let proof = try CheckpointProof.extends(checkpoint, log: auditor.log)
        step.signed = checkpoint
        step.members["checkpoint"] = .object([
            "size": .integer(checkpoint.size), "root": .string(Data(checkpoint.root.bytes).base64EncodedString()),
            "key": .string(key.verifierKey), "extended_to": .integer(proof.size),
            "proof_hashes": .integer(proof.hashes),
        ])
        if let inspection {
            let stream = try auditor.resolveInspection(inspection)
            let report = try auditor.log.proveStream(stream, checkpoint: checkpoint)
            if let finding = report.finding { throw LedgerVerificationFailure(finding: "\(finding)") }
            step.members["inspection"] = .object([
                "id": .string(stream.lowercased), "records_proven": .integer(report.proven),
            ])
            step.lines.append(
                "proven: the \(report.proven) records of inspection \(stream.lowercased) are in the tree of "
                    + "\(report.treeSize) records")
        }
        // Without the walk, this is the verdict; with it, the walk's lines say it.
        if !full {
            step.lines.append(
                "intact: the log (\(proof.size) records) extends the checkpoint of \(checkpoint.size) records signed "
                    + "by \(TerminalText.singleLine(key.name)) (consistency proof of \(proof.hashes) hashes)")
            step.members["intact"] = .bool(true)
        }
        return step
    }

    /// The walk of the whole log, after `anchoring`: with a checkpoint, the
    /// root of its size recomputed from the records themselves (the
    /// consistency proof trusts the stored nodes). Lines only when intact;
    /// the failure is the step's, to say after its JSON.
    public func walk(_ log: EventLog, after anchoring: Step, progress: ((UInt64, UInt64) -> Void)? = nil) throws
        -> Step
    {
        let signed = anchoring.signed
        let report = try log.verify(against: digest, checkpoint: signed.map { ($0.size, $0.root) }, progress: progress)
        var step = anchoring
        step.lines = []
        step.members["intact"] = .bool(report.isIntact)
        step.members["checked"] = .integer(report.checked)
        step.members["head"] = .string(report.head.description)
        step.members["digest"] = .optional(report.digest?.description)
        step.members["finding"] =
            report.finding.map { finding in
                .object([
                    "position": .integer(finding.position), "message": .string(finding.description),
                    "key": .optional(finding.key),
                ])
            } ?? .null
        step.members["head_map_behind"] =
            report.headMapLag.map { lag in
                .object(["map_size": lag.mapSize.map(JSONValue.integer) ?? .null, "log_size": .integer(lag.logSize)])
            } ?? .null
        if let finding = report.finding {
            step.failure = LedgerVerificationFailure(finding: "\(finding)")
            return step
        }
        step.lines.append("intact: \(report.checked) records verified, chain head \(report.head)")
        if let lag = report.headMapLag { step.lines.append("note: \(lag)") }
        if let digest { step.lines.append("extends the digest \(digest)") }
        if let signed {
            step.lines.append(
                "extends the checkpoint: the first \(signed.size) records have its root, recomputed from the records")
        }
        return step
    }
}

/// What `jqc verify` found wrong: the log, or an inspection's records, are not intact.
public struct LedgerVerificationFailure: Error, CustomStringConvertible, Sendable {
    /// The finding, naming the position and what is wrong there.
    public let finding: String

    public var description: String { "NOT INTACT: \(finding)" }
}
