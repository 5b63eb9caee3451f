import FoundationEssentials
import InspectionAudit
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

/// The latest checkpoint witnesses cosigned (`cosigned-checkpoint` in the
/// ledger directory), checked offline from what is stored: the device's
/// signature by a key the log published, the log's root at its size, and
/// each cosignature line against the configured witnesses' keys
/// (`witnesses.json`), counted against the quorum.
public struct CosignedCheckpoint: Sendable {
    /// The checkpoint the witnesses cosigned.
    public var checkpoint: Checkpoint
    /// The witnesses whose cosignature verified, with their time (POSIX seconds).
    public var cosigners: [(name: String, timestamp: UInt64)]
    public var configured: Int
    public var quorum: Int
    /// Set when the log does not have the cosigned root at its size (changed after it was cosigned).
    public var rewritten: String?

    public var quorumMet: Bool { quorum > 0 && cosigners.count >= quorum }

    /// What `jqc audit` says of it.
    public var line: String {
        if let rewritten { return "witness: the cosigned checkpoint does NOT match this log: \(rewritten)" }
        let names = cosigners.map { cosigner in
            "\(cosigner.name) at "
                + Timestamp(microsecondsSinceEpoch: Int64(clamping: cosigner.timestamp) &* 1_000_000).iso8601
        }
        let count = "\(cosigners.count) of \(configured) witnesses"
        let size = "the checkpoint of \(checkpoint.size) records"
        guard !cosigners.isEmpty else {
            return "witness: NOT cosigned: no configured witness's cosignature of \(size) verifies (\(count), "
                + "quorum \(quorum) NOT met)"
        }
        return "witness: cosigned by \(names.joined(separator: ", ")) (\(count), quorum \(quorum) "
            + (quorumMet ? "met" : "NOT met") + "): \(size), which this log extends"
    }

    /// The line when no checkpoint was cosigned yet, or nil when no witness is configured.
    public static func missingLine(configured: Int, quorum: Int) -> String? {
        guard configured > 0 else { return nil }
        return "witness: NOT cosigned: no witness has cosigned a checkpoint of this log yet (0 of \(configured) "
            + "witnesses, quorum \(quorum) NOT met; 'jqc witness sync' submits it)"
    }

    /// The stored cosigned checkpoint of the ledger in `home` checked
    /// against `log`; nil when there is none.
    public static func read(home: LedgerDirectory, log: EventLog, device: UUID) throws -> CosignedCheckpoint? {
        let list = try WitnessList.load(home)
        guard let data = FileManager.default.contents(atPath: home.cosignedCheckpointPath) else { return nil }
        let note = String(decoding: data, as: UTF8.self)
        let keys = try log.read { try DeviceKeyFile.publishedRecords($0, device: device).map(\.key) }
        var opened: Checkpoint?
        for text in keys.reversed() {
            // Each key the log published, newest first: one that fails is not the signer; none is refused below.
            guard let key = try? NoteKey(parsing: text) else { continue }
            if let checkpoint = try? Checkpoint(verifying: note, key: key) {
                opened = checkpoint
                break
            }
        }
        guard let checkpoint = opened else {
            throw CheckpointError.unreadableKey(
                "\(home.cosignedCheckpointPath) is not a checkpoint signed by a key this log published; "
                    + "remove it and run 'jqc witness sync'")
        }
        // The signature lines: what follows the blank line after the checkpoint's text.
        let signatures = String(note.dropFirst(checkpoint.text.utf8.count + 1))
        var cosigners: [(name: String, timestamp: UInt64)] = []
        var refused: [String] = []
        for entry in list.witnesses {
            let key = try entry.cosignerKey()
            do {
                let found = try Cosignature.verified(lines: signatures, body: checkpoint.text, key: key)
                if let newest = found.max(by: { $0.timestamp < $1.timestamp }) {
                    cosigners.append((key.name, newest.timestamp))
                }
            } catch {
                // Never counted, and said: the sync that kept it had verified it, so the file was changed.
                refused.append("\(key.name): \(error)")
            }
        }
        var stored = CosignedCheckpoint(
            checkpoint: checkpoint, cosigners: cosigners, configured: list.witnesses.count,
            quorum: list.effectiveQuorum)
        if !refused.isEmpty { stored.rewritten = "a cosignature does not verify (\(refused.joined(separator: "; ")))" }
        let root = try log.read { reader -> Digest256? in
            checkpoint.size <= (try reader.treeSize()) ? try reader.treeRoot(size: checkpoint.size) : nil
        }
        if root != checkpoint.root {
            stored.rewritten =
                root.map {
                    "the log's first \(checkpoint.size) records have the root \(Data($0.bytes).base64EncodedString()), "
                        + "the witnesses cosigned \(Data(checkpoint.root.bytes).base64EncodedString())"
                } ?? "the witnesses cosigned \(checkpoint.size) records, the log has fewer: it was truncated"
        }
        return stored
    }
}
