import FoundationEssentials
import Glibc
import InspectionStore
import LedgerCore
import LedgerStore

/// What `backup` and `salvage` share: a new directory to copy into, the
/// photos, the configuration, and checking the copy.
public enum LedgerCopy {
    public struct Photos: Sendable {
        public var copied = 0
        /// Files whose bytes no longer hash to their name.
        public var mismatched: [String] = []

        public init() {}
    }

    public struct Summary: Sendable {
        public var events: UInt64
        public var head: LedgerDigest
        public var photos: Photos

        public init(events: UInt64, head: LedgerDigest, photos: Photos) {
            self.events = events
            self.head = head
            self.photos = photos
        }
    }

    /// A write that failed for lack of space, named as such.
    public static func spaceNamed(_ error: any Error, at path: String) -> any Error {
        if let failure = error as? DurableFileError, failure.code == ENOSPC || failure.code == EDQUOT {
            return LedgerError.noSpace(path: path, freeBytes: LedgerError.freeSpace(at: path))
        }
        return error
    }

    /// Copies every photo file (not the temporary files of an unfinished
    /// capture) and checks each copy against its name.
    public static func copyPhotos(from home: LedgerDirectory, to target: LedgerDirectory) throws -> Photos {
        try FileStore.makeDirectory(target.photosPath)
        var photos = Photos()
        var names: [String] = []
        if FileManager.default.fileExists(atPath: home.photosPath) {
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: home.photosPath)
            } catch {
                throw LedgerCopyError.unreadable(home.photosPath, "the photo directory cannot be listed")
            }
        }
        let store = PhotoStore(directory: target.photosPath)
        for name in names.sorted() where PhotoStore.isPhotoName(name) {
            guard let data = FileManager.default.contents(atPath: home.photosPath + "/" + name) else {
                throw LedgerCopyError.unreadable(home.photosPath + "/" + name, "it could not be read")
            }
            try DurableFile.write(data, to: target.photosPath + "/" + name, mode: 0o600)
            photos.copied += 1
            if store.check(sha256: name) != .matches { photos.mismatched.append(name) }
        }
        return photos
    }

    /// Copies the device's signing key (0600), so a restored ledger signs
    /// with the key its log published. A ledger made before keys has none.
    /// The key is checked first: a key file jqc would refuse (exposed, not
    /// a regular file, another device's) is not copied on, and the reason is
    /// returned for a warning; the rest of the backup goes ahead.
    public static func copyDeviceKey(from home: LedgerDirectory, to target: LedgerDirectory) throws -> DeviceKeyError? {
        let device = try LedgerConfig.load(home).deviceID
        do {
            guard try DeviceKeyFile.load(home, device: device) != nil else { return nil }
        } catch {
            return error
        }
        guard let data = FileManager.default.contents(atPath: home.deviceKeyPath) else {
            throw LedgerCopyError.unreadable(home.deviceKeyPath, "it could not be read")
        }
        try DurableFile.write(data, to: target.deviceKeyPath, mode: 0o600)
        return nil
    }

    public static func copyConfig(from home: LedgerDirectory, to target: LedgerDirectory) throws {
        guard let data = FileManager.default.contents(atPath: home.configPath) else {
            throw LedgerDirectoryError.noLedger(home.path)
        }
        try DurableFile.write(data, to: target.configPath, mode: 0o644)
        // The witnesses too: a restored copy asks them before it syncs (`RestorePointCheck`).
        if let witnesses = FileManager.default.contents(atPath: home.witnessesPath) {
            try DurableFile.write(witnesses, to: target.witnessesPath, mode: 0o644)
        }
    }

    /// Opens the copy read-only, verifies its whole chain and checks that it
    /// ends on the hash `source` stores at the same position.
    public static func verifyCopy(at target: LedgerDirectory, against source: EventLog) throws -> LedgerDigest {
        let copy = try EventLog(directory: target.storePath, access: .reading)
        defer { copy.close() }
        let report = try copy.verify()
        if let finding = report.finding {
            throw LedgerCopyError.copyDoesNotVerify(target.path, "\(finding)")
        }
        let head = report.head
        if head.position > 0 {
            let original = try source.read { reader in try reader.storedHash(at: head.position) }
            guard original == head.head else {
                throw LedgerCopyError.copyEndsElsewhere(target.path, position: head.position)
            }
        }
        return head
    }
}

/// A copy of the ledger that could not be made or does not match the ledger.
public enum LedgerCopyError: Error, CustomStringConvertible {
    /// A file of the ledger could not be read.
    case unreadable(String, String)
    /// The copy's chain does not verify.
    case copyDoesNotVerify(String, String)
    /// The copy ends on another hash than the ledger at the same position.
    case copyEndsElsewhere(String, position: UInt64)

    public var description: String {
        switch self {
        case .unreadable(let path, let why):
            "cannot read \(path): \(why)"
        case .copyDoesNotVerify(let path, let finding):
            "the copy at \(path) does not verify (\(finding)); it was removed. Run 'jqc verify' on the ledger itself."
        case .copyEndsElsewhere(let path, let position):
            "the copy at \(path) ends on another hash than the ledger at position \(position); it was removed. "
                + "Run 'jqc verify' on the ledger itself."
        }
    }
}
