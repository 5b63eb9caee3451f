import FoundationEssentials
import Glibc
import LedgerCore
import LedgerStore

extension LedgerDirectory {
    /// Makes a new ledger here (`jqc init`): the directory, `photos/`, an
    /// empty store, `config.json` (written after the store, so its presence
    /// means a whole ledger) and the device's signing key. Refuses a place
    /// that already holds a ledger, or a store without its `config.json`
    /// (that store is some device's log). Whatever this call made is removed
    /// when it fails (a full disk), so no half-made ledger is left to be
    /// mistaken for one. Answers the configuration written.
    public func create(
        serverURL: String?, caBundle: String?, witnessURL: String?, at now: Timestamp, device: UUID = UUID()
    ) throws -> LedgerConfig {
        try checkConfigFile()
        if exists { throw LedgerDirectoryError.ledgerExists(path) }
        let files = FileManager.default
        if files.fileExists(atPath: storeDataPath) {
            throw LedgerDirectoryError.storeWithoutConfig(store: storePath, config: configPath)
        }
        let made = [path, photosPath, storePath].filter { !files.fileExists(atPath: $0) }
        let config = LedgerConfig(
            deviceID: device, serverURL: serverURL, caBundle: caBundle, witnessURL: witnessURL, createdAt: now)
        do {
            try FileStore.makeDirectory(path)
            try FileStore.makeDirectory(photosPath)
            // A head file left by a ledger removed from here is not this new store's (`StoreHead`).
            unlink(storeHeadPath)
            try EventLog(directory: storePath, access: .creating).close()
            try config.save(self)
            try DeviceKeyFile.create(self, device: config.deviceID)
        } catch {
            removeMade(made)
            if case let failure as DurableFileError = error, failure.code == ENOSPC || failure.code == EDQUOT {
                throw LedgerError.noSpace(path: path, freeBytes: LedgerError.freeSpace(at: path))
            }
            if case LedgerError.noSpace = error {
                throw LedgerError.noSpace(path: path, freeBytes: LedgerError.freeSpace(at: path))
            }
            throw error
        }
        return config
    }

    /// Undoes a failed `create`: the directories it made, else the
    /// `config.json` it may have written into a directory that was there.
    /// Best effort on purpose: the failure being reported is the one that
    /// matters, and what cannot be removed here is named by it.
    private func removeMade(_ made: [String]) {
        for directory in made.reversed() { try? FileManager.default.removeItem(atPath: directory) }
        if !made.contains(path) { unlink(configPath) }
    }
}
