import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

// MARK: - What an audit's proofs are anchored to

extension AuditorLedger {
    /// A checkpoint to anchor the proofs to, and where it came from.
    public struct Anchor: Sendable {
        public var checkpoint: Checkpoint
        public var kind: ProofEvidence.Anchor
        public var source: String?
        public var signer: String?
        /// The signing key's id, and whether the auditor pinned it.
        public var keyID: String?
        public var pinned: Bool

        public init(checkpoint: Checkpoint, kind: ProofEvidence.Anchor, source: String?, signer: String?) {
            self.checkpoint = checkpoint
            self.kind = kind
            self.source = source
            self.signer = signer
            self.keyID = nil
            self.pinned = false
        }

        /// A checkpoint verified with `key`.
        public init(checkpoint: Checkpoint, kind: ProofEvidence.Anchor, source: String?, key: NoteKey, pinned: Bool) {
            self.init(checkpoint: checkpoint, kind: kind, source: source, signer: key.name)
            self.keyID = Hex.encode(key.keyID)
            self.pinned = pinned
        }
    }

    /// Today's tree as a checkpoint, signed by the device key when this
    /// ledger directory holds the key the log published (an auditor's copy
    /// may not: the proofs hold all the same, against the tree as it is).
    public func checkpointNow(_ home: LedgerDirectory, pinned: NoteKey? = nil) throws -> Anchor {
        let config = try LedgerConfig.load(home)
        let checkpoint = try log.read { reader in
            let size = try reader.treeSize()
            return Checkpoint(
                origin: DeviceKeyFile.name(config.deviceID), size: size, root: try reader.treeRoot(size: size))
        }
        var signer: NoteKey?
        // An audit needs no private key: a key file that is missing, replaced
        // or unusable leaves the checkpoint unsigned (the report says so),
        // and only the device's own key in force signs it.
        let signing: DeviceSigning?
        do {
            signing = try DeviceIdentity(directory: home, device: config.deviceID).decide(log: log)
        } catch is DeviceKeyError {
            signing = nil
        }
        if case .use(let key) = signing {
            // Signed and checked with the key the log publishes, as a checkpoint handed out would be.
            _ = try Checkpoint(verifying: try checkpoint.signed(by: key), key: key)
            signer = key
        }
        if let pinned {
            // The auditor's own key must be the one that signs today's tree.
            guard let signer, signer.verifierKey == pinned.verifierKey else {
                throw CheckpointError.notPinned(
                    pinned,
                    signer.map { "today's tree is signed by \(KeyNaming.described($0))" }
                        ?? "this ledger directory holds no usable device key to sign today's tree; audit against a "
                        + "checkpoint signed by that key (--checkpoint FILE)")
            }
        }
        guard let signer else {
            // A copy without the key anchors to the newest checkpoint it holds, signed by the device.
            if let held = try heldCheckpoint(home) ?? witnessedCheckpoint(config) { return held }
            return Anchor(checkpoint: checkpoint, kind: .madeNow, source: nil, signer: nil)
        }
        return Anchor(checkpoint: checkpoint, kind: .madeNow, source: nil, key: signer, pinned: pinned != nil)
    }

    /// The last checkpoint the device signed (`last-checkpoint` in the
    /// ledger directory), when it verifies with a key the log published.
    func heldCheckpoint(_ home: LedgerDirectory) throws -> Anchor? {
        let path = home.lastCheckpointPath
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let (checkpoint, key) = try CheckpointFile.verify(String(decoding: data, as: UTF8.self), log: log, home: home)
        return Anchor(checkpoint: checkpoint, kind: .file, source: path, key: key, pinned: false)
    }

    /// The newest checkpoint the witness acknowledged, as the device's
    /// stream records it (size and root: no signature).
    func witnessedCheckpoint(_ config: LedgerConfig) throws -> Anchor? {
        let recorded = try CheckpointWitness.recorded(in: log, device: config.deviceID)
        guard
            let last = recorded.last(where: { $0.outcome == .acknowledged && $0.size != nil && $0.root != nil }),
            let size = last.size, let text = last.root, let bytes = Data(base64Encoded: text),
            let root = Digest256(bytes: [UInt8](bytes))
        else { return nil }
        return Anchor(
            checkpoint: Checkpoint(origin: DeviceKeyFile.name(config.deviceID), size: size, root: root),
            kind: .witnessedInLog,
            source: "record \(last.position), from \(last.server ?? "the server")", signer: nil)
    }
}
