import Foundation
import InspectionStore
import LedgerCore
import LedgerStore

// MARK: - Checkpoints handed over, checked against the log

/// Reading a checkpoint handed over in a file, verified with the key the log records.
public enum CheckpointFile {
    public static func read(_ path: String, log: EventLog, home: LedgerDirectory) throws -> (Checkpoint, NoteKey) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CheckpointError.unreadable(path)
        }
        return try verify(String(decoding: data, as: UTF8.self), log: log, home: home)
    }

    /// A signed checkpoint note verified with a key the log published (a
    /// file's contents, or a witness's answer).
    public static func verify(_ text: String, log: EventLog, home: LedgerDirectory) throws -> (Checkpoint, NoteKey) {
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
        throw firstError!
    }
}

/// A checkpoint that this log does not extend, or cannot be read.
public enum CheckpointError: Error, CustomStringConvertible {
    case unreadable(String)
    case notExtended(String)
    /// The log records no key to check a checkpoint with. Signing now would
    /// publish a key and sign this very log, whatever was done to it.
    case noKeyRecord(device: UUID)

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read the checkpoint file \(path)"
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
