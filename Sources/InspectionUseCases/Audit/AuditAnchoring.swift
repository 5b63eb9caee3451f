import FoundationEssentials
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

/// What `jqc audit` checks the records against, from the auditor's choices:
/// nothing (`--no-verify`), the whole chain (`--full`, `--digest`), or the
/// proofs through the tree anchored to a checkpoint handed over
/// (`--checkpoint`), to the witness's latest (`--witness`) or to one signed now.
public enum AuditAnchoring {
    /// The check the audit makes. `witness` is asked only when the proofs run,
    /// and only when no checkpoint file was given.
    public static func verification(
        verify: Bool, full: Bool, digest: LedgerDigest?, checkpointFile: String?,
        witness: (() throws -> AuditorLedger.Anchor)?
    ) -> AuditAssembly.Verification {
        guard verify else { return .skipped }
        if full { return .fullWalk(digest: digest) }
        if let checkpointFile { return .proofs(.checkpointFile(checkpointFile)) }
        if let witness { return .proofs(.given(witness)) }
        return .proofs(.madeNow)
    }

    /// The witness's latest checkpoint of this device (`latest` asks the
    /// server at `witness` for the checkpoints of a key name), verified with
    /// a key the log published, or with `pinned` alone: what `--witness`
    /// anchors the proofs to. A witness that does not witness (HTTP 404) and
    /// one that holds nothing of this device are named as such.
    public static func witnessed(
        auditor: AuditorLedger, home: LedgerDirectory, device: UUID, witness: String, pinned: NoteKey?,
        latest: (_ name: String, _ base: String) throws(APIError) -> CheckpointWitness.Held?
    ) throws -> AuditorLedger.Anchor {
        let name = DeviceKeyFile.name(device)
        let held: CheckpointWitness.Held?
        do {
            held = try latest(name, witness)
        } catch {
            if case .refused(404, _) = error { throw AuditWitnessError.notWitnessing(witness) }
            throw error
        }
        guard let held else { throw AuditWitnessError.nothingHeld(witness, name) }
        let (checkpoint, key) = try CheckpointFile.verify(held.note, log: auditor.log, home: home, pinned: pinned)
        return .init(checkpoint: checkpoint, kind: .witness, source: witness, key: key, pinned: pinned != nil)
    }
}

/// `jqc audit --witness` found nothing to anchor to.
public enum AuditWitnessError: Error, CustomStringConvertible {
    case notWitnessing(String)
    case nothingHeld(String, String)

    public var description: String {
        switch self {
        case .notWitnessing(let server):
            "the server \(server) does not witness checkpoints (HTTP 404): this log's history was not witnessed. "
                + "Audit without --witness, or against a checkpoint handed over earlier (--checkpoint FILE)."
        case .nothingHeld(let server, let name):
            "the server \(server) holds no checkpoint of \(name): the log's history was never witnessed there. "
                + "Run 'jqc sync' on the device first."
        }
    }
}
