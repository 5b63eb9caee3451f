import FoundationEssentials
import InspectionStore
import LedgerCore
import LedgerStore

// MARK: - Checkpoints handed over, checked against the log

/// Reading a checkpoint handed over in a file, verified with the key the log records.
public enum CheckpointFile {
    public static func read(_ path: String, log: EventLog, home: LedgerDirectory, pinned: NoteKey? = nil) throws
        -> (Checkpoint, NoteKey)
    {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CheckpointError.unreadable(path)
        }
        return try verify(String(decoding: data, as: UTF8.self), log: log, home: home, pinned: pinned)
    }

    /// A signed checkpoint note verified with a key the log published (a
    /// file's contents, or a witness's answer), or with `pinned` alone: the
    /// auditor's own copy of the key (`--key VKEY`), whatever the log says.
    public static func verify(_ text: String, log: EventLog, home: LedgerDirectory, pinned: NoteKey? = nil) throws
        -> (Checkpoint, NoteKey)
    {
        if let pinned {
            do {
                return (try Checkpoint(verifying: text, key: pinned), pinned)
            } catch {
                throw CheckpointError.notPinned(pinned, "\(error)")
            }
        }
        let config = try LedgerConfig.load(home)
        // Any key the device published counts, if it was published within
        // the tree the checkpoint signs (a key published later cannot sign
        // for an earlier log): so a replaced key file keeps old checkpoints valid.
        let published = try log.read { try DeviceKeyFile.publishedRecords($0, device: config.deviceID) }
        guard !published.isEmpty else { throw CheckpointError.noKeyRecord(device: config.deviceID) }
        var firstError: NoteError?
        for (verifierKey, record) in published.reversed() {
            let key = try NoteKey(parsing: verifierKey)
            do {
                let checkpoint = try Checkpoint(verifying: text, key: key)
                guard record.position <= checkpoint.size else {
                    throw NoteError.unverified(
                        "its key was published at position \(record.position), after the \(checkpoint.size) records it signs"
                    )
                }
                return (checkpoint, key)
            } catch let error as NoteError {
                firstError = firstError ?? error
            }
        }
        // Every key either returned or left its error: the list was not empty.
        guard let firstError else { preconditionFailure("no published key opened the checkpoint, and none failed") }
        throw firstError
    }
}

/// A checkpoint that this log does not extend, or cannot be read.
public enum CheckpointError: Error, CustomStringConvertible {
    case unreadable(String)
    case notExtended(String)
    /// The log records no key to check a checkpoint with. Signing now would
    /// publish a key and sign this very log, whatever was done to it.
    case noKeyRecord(device: UUID)
    /// The checkpoint does not verify with the key the auditor pinned.
    case notPinned(NoteKey, String)
    /// `--key` is not a verifier key.
    case unreadableKey(String)

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read the checkpoint file \(path)"
        case .notPinned(let key, let why):
            "NOT VERIFIED: the checkpoint is not signed by the pinned key \(KeyNaming.described(key)): \(why)"
        case .unreadableKey(let why):
            "--key is not an Ed25519 verifier key (<name>+<key id>+<base64 key>): \(why). Give the key as 'jqc key' "
                + "prints it."
        case .notExtended(let why): "NOT INTACT: the log does not extend the checkpoint: \(why)"
        case .noKeyRecord(let device):
            "NOT VERIFIED: the log records no signing key for device \(device.lowercased), so no checkpoint can be checked "
                + "against it: if this device signed checkpoints before, its key record was removed from the log. "
                + "Do not sign this log ('jqc checkpoint' would sign whatever it now holds); run 'jqc verify --full' "
                + "and check it against a checkpoint or digest kept elsewhere."
        }
    }
}

/// The proof that the log extends a checkpoint: a consistency proof from the
/// checkpoint's size to today's, checked against both roots.
public enum CheckpointProof {
    public static func extends(_ checkpoint: Checkpoint, log: EventLog) throws -> (size: UInt64, hashes: Int) {
        try log.read { reader in
            let size = try reader.treeSize()
            guard checkpoint.size <= size else {
                throw CheckpointError.notExtended(
                    "the checkpoint has \(checkpoint.size) records, the log only \(size): it was truncated")
            }
            // The head's own chain link, so the newest record is bound too.
            do {
                _ = try reader.verifiedHead()
            } catch let error as HeadCheckError {
                throw CheckpointError.notExtended("\(error.finding)")
            }
            let root = try reader.treeRoot(size: size)
            guard checkpoint.size > 0 else { return (size, 0) }
            let proof = try reader.consistencyProof(from: checkpoint.size, to: size)
            guard
                Merkle.verifyConsistency(
                    from: checkpoint.size, to: size, first: checkpoint.root, second: root, proof: proof)
            else {
                throw CheckpointError.notExtended(
                    "the log's first \(checkpoint.size) records are not the ones the checkpoint signed: "
                        + "a record at or before position \(checkpoint.size) was changed, removed or reordered "
                        + "(run 'jqc verify --full' to find which)")
            }
            return (size, proof.count)
        }
    }
}

/// How checks name the key that signed: its name and key id, whether the
/// auditor pinned it, and how many keys the log published.
public enum KeyNaming {
    /// `jqc/<device> (key id 1a2b3c4d)`.
    public static func described(_ key: NoteKey) -> String {
        "\(key.name) (key id \(Hex.encode(key.keyID)))"
    }

    /// `jqc/<device> (key id 1a2b3c4d, pinned)`, with "; the log published
    /// 2 keys" inside the parentheses when it rotated its key.
    public static func signer(_ key: NoteKey, pinned: Bool, publishedKeys: Int) -> String {
        "\(key.name) (key id \(Hex.encode(key.keyID)), \(pinned ? "pinned" : "a key the log published")"
            + (publishedKeys > 1 ? "; the log published \(publishedKeys) keys" : "") + ")"
    }

    /// The keys the device's log published.
    public static func publishedKeys(_ log: EventLog, home: LedgerDirectory) throws -> Int {
        let device = try LedgerConfig.load(home).deviceID
        return try log.read { try DeviceKeyFile.publishedRecords($0, device: device).count }
    }

    /// The auditor's `--key VKEY`, read.
    public static func pinned(_ text: String?) throws -> NoteKey? {
        guard let text else { return nil }
        let key: NoteKey
        do {
            key = try NoteKey(parsing: text)
        } catch {
            throw CheckpointError.unreadableKey("\(error)")
        }
        guard key.seed == nil else {
            throw CheckpointError.unreadableKey("it is a private signing key; pin the public verifier key")
        }
        return key
    }
}
