import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc prove ID`: one inspection's proof bundle (`Schemas/ledger-format.md`
/// § Proof bundles). With the device key, over a checkpoint signed now; on a
/// copy without it (an auditor's), over a checkpoint the copy holds (the
/// one given, else the last the device signed), checked against the stored
/// tree, with the inspection's records within it. The root is checked
/// against the records before it is signed, and every proof handed out
/// against the root: a bundle whose records fail their own proofs is never
/// made. With a trusted checkpoint it carries the consistency proof from it.
public struct InspectionProving {
    public let home: LedgerDirectory
    public let device: UUID
    /// The device's signing key; nil on a copy without one.
    public let key: NoteKey?
    /// A checkpoint the auditor already holds (`--checkpoint FILE`).
    public let trustedFile: String?
    /// `--cosigned`: prove against the latest cosigned checkpoint
    /// (`cosigned-checkpoint`), its cosignature lines kept in the bundle.
    public let cosigned: Bool

    public init(home: LedgerDirectory, device: UUID, key: NoteKey?, trustedFile: String?, cosigned: Bool = false) {
        self.home = home
        self.device = device
        self.key = key
        self.trustedFile = trustedFile
        self.cosigned = cosigned
    }

    /// What `prove` made.
    public struct Proven {
        public var bundle: JSONValue
        /// The signed note of the bundle's checkpoint.
        public var note: String
        /// The checkpoint proven against, on a copy without the key.
        public var held: Held?
        /// The inspection's records after the checkpoint's tree, not in the bundle.
        public var recordsLeftOut: Int
    }

    /// The bundle of the inspection `reference` names (any unique prefix).
    public func prove(_ reference: String, auditor: AuditorLedger) throws -> Proven {
        let inspection = try auditor.resolveInspection(reference)
        let held =
            try cosigned
            ? Self.cosignedCheckpoint(auditor: auditor, home: home, device: device)
            : key == nil ? Self.heldCheckpoint(trustedFile, auditor: auditor, home: home) : nil
        let trusted =
            try key == nil && !cosigned
            ? nil : trustedFile.map { try CheckpointFile.read($0, log: auditor.log, home: home).0 }
        let signingKey = cosigned ? nil : key
        let (bundle, note, left) = try auditor.log.read { reader -> (JSONValue, String, Int) in
            // The root is checked against the records before it is signed, and
            // every proof handed out against the root: a bundle whose records
            // fail their own proofs is never written.
            let (checkpoint, note, signer) = try Self.checkpoint(signingKey, held, reader: reader, home: home)
            let size = checkpoint.size
            let consistency = try trusted.map {
                try Self.consistency(from: $0, reader: reader, size: checkpoint.size, root: checkpoint.root)
            }
            // The record that published the signing key, within the signed tree.
            guard
                let published = try DeviceKeyFile.publishedRecords(reader, device: device).last(where: {
                    $0.key == signer.verifierKey && $0.record.position <= size
                })
            else {
                throw CheckpointError.noKeyRecord(device: device)
            }
            let all = try reader.records(inStream: inspection)
            let within = all.filter { $0.position <= size }.count
            if cosigned, within < all.count, let last = all.last {
                throw ProvingError.beyondCosigned(
                    inspection: inspection, size: size, later: all.count - within, position: last.position)
            }
            guard within > 0 else {
                throw CheckpointError.notExtended(
                    "the checkpoint this copy holds (\(size) records) was signed before inspection "
                        + "\(inspection.lowercased) began, so none of its records can be proven with it: give a "
                        + "newer checkpoint of the device with --checkpoint FILE")
            }
            let bundle = try ProofBundle.make(
                reader, inspection: inspection, checkpoint: checkpoint, note: note, published: published,
                consistency: consistency, complete: true)
            return (bundle, note, all.count - within)
        }
        return Proven(bundle: bundle, note: note, held: held, recordsLeftOut: left)
    }

    /// A checkpoint a copy without the key already holds: the one given with
    /// `--checkpoint`, else the last one the device signed (`last-checkpoint`),
    /// each verified with a key the log published.
    public struct Held: Sendable {
        public var checkpoint: Checkpoint
        public var note: String
        public var key: NoteKey
        /// Where the checkpoint came from, in words.
        public var source: String
    }

    static func heldCheckpoint(_ file: String?, auditor: AuditorLedger, home: LedgerDirectory) throws -> Held {
        let path = file ?? SignedCheckpoint.path(home)
        guard let data = FileManager.default.contents(atPath: path) else {
            if let file { throw CheckpointError.unreadable(file) }
            throw ProvingError.nothingToProveAgainst(path: path)
        }
        let note = String(decoding: data, as: UTF8.self)
        let (checkpoint, key) = try CheckpointFile.verify(note, log: auditor.log, home: home)
        return Held(
            checkpoint: checkpoint, note: note, key: key,
            source: file.map { "the checkpoint in \($0)" } ?? "the last checkpoint the device signed (\(path))")
    }

    /// The latest cosigned checkpoint (`cosigned-checkpoint`), checked
    /// offline as `jqc audit` checks it (`CosignedCheckpoint`): signed by a
    /// key the log published, every cosignature line verified against the
    /// configured witnesses, the log's root at its size; refused when none
    /// is stored, when a line does not verify or the log does not extend it.
    static func cosignedCheckpoint(auditor: AuditorLedger, home: LedgerDirectory, device: UUID) throws -> Held {
        guard let stored = try CosignedCheckpoint.read(home: home, log: auditor.log, device: device),
            let data = FileManager.default.contents(atPath: home.cosignedCheckpointPath)
        else { throw ProvingError.noCosignedCheckpoint(path: home.cosignedCheckpointPath) }
        if let rewritten = stored.rewritten { throw CheckpointError.notExtended(rewritten) }
        guard !stored.cosigners.isEmpty else {
            throw ProvingError.noCosignedCheckpoint(path: home.cosignedCheckpointPath)
        }
        let note = String(decoding: data, as: UTF8.self)
        let (checkpoint, key) = try CheckpointFile.verify(note, log: auditor.log, home: home)
        let names = stored.cosigners.map(\.name).joined(separator: ", ")
        return Held(
            checkpoint: checkpoint, note: note, key: key,
            source: "the latest cosigned checkpoint (\(home.cosignedCheckpointPath), cosigned by \(names): "
                + "\(stored.cosigners.count) of \(stored.configured) witnesses, quorum \(stored.quorum) "
                + (stored.quorumMet ? "met" : "NOT met") + ")")
    }

    /// The held checkpoint, its root checked against the stored tree of its
    /// size (each proof handed out is checked against the root as well).
    /// The checkpoint the bundle proves against, its note and the key that signed it: signed now with
    /// `key`, or else the checkpoint `held` (cosigned or given), checked against the tree.
    static func checkpoint(_ key: NoteKey?, _ held: Held?, reader: LedgerReader, home: LedgerDirectory) throws -> (
        Checkpoint, String, NoteKey
    ) {
        if let key {
            let (checkpoint, note) = try SignedCheckpoint.today(reader, key: key, home: home)
            return (checkpoint, note, key)
        }
        // `prove` holds a checkpoint whenever it has no key to sign with (cosigned, or read from a file).
        guard let held else { preconditionFailure("a bundle with neither a key to sign with nor a checkpoint held") }
        let (checkpoint, note) = try checkedAgainstTree(held, reader: reader)
        return (checkpoint, note, held.key)
    }

    static func checkedAgainstTree(_ held: Held, reader: LedgerReader) throws -> (Checkpoint, String) {
        let size = try reader.treeSize()
        guard held.checkpoint.size <= size else {
            throw CheckpointError.notExtended(
                "the checkpoint has \(held.checkpoint.size) records, the log only \(size): it was truncated")
        }
        guard try reader.treeRoot(size: held.checkpoint.size) == held.checkpoint.root else {
            throw CheckpointError.notExtended(
                "the log's first \(held.checkpoint.size) records are not the ones the checkpoint signed: a record at "
                    + "or before position \(held.checkpoint.size) was changed, removed or reordered (run 'jqc verify "
                    + "--full' to find which)")
        }
        return (held.checkpoint, held.note)
    }

    /// The bundle's `consistency` member: the proof that the tree of `size`
    /// records extends the trusted checkpoint's, checked here so that a log
    /// that does not extend it gets no bundle claiming it does.
    static func consistency(from trusted: Checkpoint, reader: LedgerReader, size: UInt64, root: Digest256)
        throws -> JSONValue
    {
        guard trusted.size <= size else {
            throw CheckpointError.notExtended(
                "the checkpoint has \(trusted.size) records, the log only \(size): it was truncated")
        }
        let proof =
            trusted.size == 0 || trusted.size == size
            ? [] : try reader.consistencyProof(from: trusted.size, to: size)
        guard
            trusted.size == 0
                || Merkle.verifyConsistency(
                    from: trusted.size, to: size, first: trusted.root, second: root, proof: proof)
        else {
            throw CheckpointError.notExtended(
                "a record at or before position \(trusted.size) was changed, removed or reordered")
        }
        return .object([
            "from_size": .integer(trusted.size),
            "proof": .array(proof.map { .string(Data($0.bytes).base64EncodedString()) }),
        ])
    }
}

/// Why `jqc prove` made no bundle, beside `CheckpointError`.
public enum ProvingError: Error, Equatable, CustomStringConvertible {
    /// A copy without the device key holds no checkpoint to prove against.
    case nothingToProveAgainst(path: String)
    /// `--cosigned`, and no witness has cosigned a checkpoint of this log.
    case noCosignedCheckpoint(path: String)
    /// `--cosigned`, and the inspection has records after the cosigned checkpoint's tree.
    case beyondCosigned(inspection: UUID, size: UInt64, later: Int, position: UInt64)

    public var description: String {
        switch self {
        case .nothingToProveAgainst(let path):
            "this copy of the ledger holds no device key and no checkpoint signed by it (\(path) is missing), "
                + "so there is nothing to prove the inspection against and nothing was signed. Give a checkpoint "
                + "the device signed with --checkpoint FILE, or run 'jqc prove' on the device."
        case .noCosignedCheckpoint(let path):
            "no witness has cosigned a checkpoint of this log (\(path) is missing or holds no cosignature by a "
                + "configured witness), so nothing can be proven against one: configure witnesses ('jqc witness add "
                + "URL --key VKEY') and run 'jqc witness sync', then prove again"
        case .beyondCosigned(let inspection, let size, let later, let position):
            "inspection \(inspection.lowercased) has \(later) record\(later == 1 ? "" : "s") after the latest "
                + "cosigned checkpoint (\(size) records; its last is at position \(position)), so a bundle against it "
                + "would leave \(later == 1 ? "it" : "them") out: run 'jqc witness sync' to have the witnesses cosign "
                + "today's checkpoint, then prove again (or prove without --cosigned)"
        }
    }
}
