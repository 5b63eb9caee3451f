import FoundationEssentials
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc backup DEST`: a consistent, verified copy of a ledger directory,
/// marked as this device's restore point.
///
/// The store is copied by LMDB itself (`mdb_env_copy2` with compaction)
/// inside one read transaction, so the copy is one committed state even
/// while another command records; the photo files are copied after it, so
/// every photo an event in the copy names is there. Then the configuration,
/// the witnesses and the signing key; the copy's chain is verified against
/// the ledger's, its own `store-head` written (a restore brings its own),
/// and `restore-point.json` marks it. The login is never copied.
public struct LedgerBackup: Sendable {
    /// The new ledger directory.
    public var target: LedgerDirectory
    /// What was copied and the head the copy verified to.
    public var summary: LedgerCopy.Summary
    /// Why `device.key` was not copied (a key jqc would refuse); nil when it
    /// was, or when the ledger has none.
    public var keyNotCopied: DeviceKeyError?
    /// Whether the copy holds a signing key.
    public var keyCopied: Bool

    /// Copies the ledger in `home` into `target` (a new or empty directory
    /// outside it, claimed by `CopyDestination`). `opening` opens the
    /// ledger's store, so a caller can name a missing store its own way.
    /// A failure removes what it wrote, and a full disk is named as such.
    public static func make(
        from home: LedgerDirectory, to target: LedgerDirectory, at now: Timestamp,
        opening: (() throws -> EventLog) throws -> EventLog = { try $0() }
    ) throws -> LedgerBackup {
        try home.requireLedger()
        let destination = try CopyDestination.claim(target.path, ledger: home.path, for: "backup")
        let log = try opening { try EventLog(directory: home.storePath, access: .reading) }
        defer { log.close() }
        do {
            try log.copyStore(to: target.storePath)
            let photos = try LedgerCopy.copyPhotos(from: home, to: target)
            try LedgerCopy.copyConfig(from: home, to: target)
            let keyNotCopied = try LedgerCopy.copyDeviceKey(from: home, to: target)
            let checked = try LedgerCopy.verifyCopy(at: target, against: log)
            try StoreHead(checked).recordDurably(at: target.storeHeadPath)
            // The copy is this device's restore point: restored, it checks
            // with the witness before it syncs (`RestorePointCheck`).
            let device = try LedgerConfig.load(home).deviceID
            try RestorePoint(device: device, madeAt: now, records: checked.position).save(target)
            return LedgerBackup(
                target: target, summary: LedgerCopy.Summary(events: checked.position, head: checked, photos: photos),
                keyNotCopied: keyNotCopied, keyCopied: FileManager.default.fileExists(atPath: target.deviceKeyPath))
        } catch {
            destination.remove()
            throw LedgerCopy.spaceNamed(error, at: target.path)
        }
    }
}
