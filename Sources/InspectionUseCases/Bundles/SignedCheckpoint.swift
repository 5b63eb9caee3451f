import FoundationEssentials
import Glibc
import InspectionStore
import LedgerCore
import LedgerStore

/// Signing a checkpoint of today's tree only when the records support it,
/// and remembering it as the anchor of the next check (`jqc checkpoint`,
/// `jqc prove`, `jqc handover`).
///
/// The last checkpoint this device signed is kept beside the store, in
/// `last-checkpoint` (the signed note, 0600): the next `checkpoint` or `prove`
/// checks the stored tree from it at O(log n) plus the records appended since
/// (`LedgerReader.checkedTreeRoot`). Without one (or when it does not verify
/// with the device's key) every leaf is recomputed once; a damaged node is
/// refused either way.
public enum SignedCheckpoint {
    public static let fileName = LedgerLayout.lastCheckpoint

    public static func path(_ home: LedgerDirectory) -> String { home.lastCheckpointPath }

    /// The last checkpoint this device signed, if it verifies with `key`.
    /// A missing file or one that does not verify is no anchor: the check
    /// then recomputes every leaf, which is only slower, never weaker.
    public static func anchor(_ home: LedgerDirectory, key: NoteKey) -> Checkpoint? {
        guard let data = FileManager.default.contents(atPath: path(home)) else { return nil }
        return try? Checkpoint(verifying: String(decoding: data, as: UTF8.self), key: key)
    }

    /// Today's tree as a checkpoint, its root checked against the records
    /// (`TreeCheckError` otherwise), signed by `key`.
    public static func today(_ reader: LedgerReader, key: NoteKey, home: LedgerDirectory) throws -> (Checkpoint, String)
    {
        let anchor = anchor(home, key: key).map { (size: $0.size, root: $0.root) }
        let (size, root) = try reader.checkedTreeRoot(from: anchor)
        // The map's root of the same snapshot: the heads of exactly `size` records.
        let checkpoint = Checkpoint(origin: key.name, size: size, root: root, heads: try reader.headMapRoot())
        return (checkpoint, try checkpoint.signed(by: key))
    }

    /// Keeps `note` as the anchor of the next check; on a ledger that
    /// cannot be written (an auditor's read-only copy: a read-only file
    /// system, or no write permission) keeps nothing and says nothing. The
    /// anchor only makes the next check faster, and no reading command may
    /// write into such a copy or fail for want of writing.
    public static func remember(_ note: String, home: LedgerDirectory) throws {
        do {
            try DurableFile.write(Data(note.utf8), to: path(home), mode: 0o600)
        } catch  where [EROFS, EACCES, EPERM].contains(error.code) {
            return
        }
    }
}
