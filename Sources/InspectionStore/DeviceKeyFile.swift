import FoundationEssentials
import Glibc
import LedgerCore
import LedgerStore

/// The device's Ed25519 signing key: `device.key` in the ledger directory
/// (mode 0600, never in the log), in the signed-note signer-key encoding. Its
/// public half is recorded in the log as a `device.key_published` event in
/// the device's own stream (the device id), so the log says which key signs
/// it, and a key file that is not that key is refused instead of used.
public enum DeviceKeyFile {
    public static let eventType = "device.key_published"

    /// The longest key file read: a signer key is about 100 bytes.
    static let largestFile = 4096

    /// The key name and checkpoint origin: `jqc/<device id>`.
    public static func name(_ deviceID: UUID) -> String { "jqc/\(deviceID.lowercased)" }

    /// The stored private key, or nil when the directory has none. Refuses a
    /// key file that is a symbolic link or not a regular file, that others
    /// may read or write, that does not hold a private key, or whose key is
    /// named for another device.
    public static func load(
        _ directory: LedgerDirectory, device: UUID, allowingExposed: Bool = false
    ) throws(DeviceKeyError) -> NoteKey? {
        try load(path: directory.deviceKeyPath, device: device, allowingExposed: allowingExposed)
    }

    /// `load` of the key file at `path` (a rotation's pending key).
    public static func load(
        path: String, device: UUID, allowingExposed: Bool = false
    ) throws(DeviceKeyError) -> NoteKey? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .unusable(path: path, why: "it cannot be examined (\(String(cString: strerror(errno))))")
        }
        try checkKind(info, path: path, allowingExposed: allowingExposed)
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .unusable(path: path, why: "it cannot be opened (\(String(cString: strerror(errno))))")
        }
        let handle = OpenFile(owning: descriptor, name: path)
        // What was opened must be what was examined: a swap in between is refused.
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, opened.st_ino == info.st_ino, opened.st_dev == info.st_dev else {
            throw .unusable(path: path, why: "it was replaced while it was being opened")
        }
        let data: [UInt8]
        do {
            data = try handle.read(upTo: largestFile + 1)
        } catch {
            throw .unusable(path: path, why: "it cannot be read (\(error.reason))")
        }
        guard data.count <= largestFile else {
            throw .unusable(path: path, why: "it is larger than any key file (\(largestFile) bytes at most)")
        }
        let key: NoteKey
        do {
            key = try NoteKey(parsing: String(decoding: data, as: UTF8.self))
        } catch {
            throw .unusable(path: path, why: "\(error)")
        }
        guard key.seed != nil else {
            throw .unusable(path: path, why: "it holds a verifier key, not the private key that signs")
        }
        guard key.name == name(device) else {
            throw .otherDevice(path: path, found: key.name, expected: name(device))
        }
        return key
    }

    /// A key file must be this user's regular file, readable by nobody else.
    static func checkKind(_ info: stat, path: String, allowingExposed: Bool) throws(DeviceKeyError) {
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG else {
            let what =
                switch kind {
                case S_IFLNK: "a symbolic link"
                case S_IFDIR: "a directory"
                case S_IFIFO: "a FIFO"
                case S_IFSOCK: "a socket"
                case S_IFCHR, S_IFBLK: "a device"
                default: "not a regular file"
                }
            throw .notARegularFile(path: path, what: what)
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 || allowingExposed else { throw .exposed(path: path, mode: mode) }
    }

    /// Makes a new key file for `device`; never replaces one that exists.
    @discardableResult
    public static func create(_ directory: LedgerDirectory, device: UUID) throws -> NoteKey {
        let path = directory.deviceKeyPath
        var info = stat()
        if lstat(path, &info) == 0 { throw DeviceKeyError.exists(path: path) }
        let key = try NoteKey.generate(name: name(device))
        guard let signer = key.signerKey else { preconditionFailure("a generated key holds its signer key") }
        try FileStore.writeAtomically(Data((signer + "\n").utf8), to: path, mode: 0o600)
        return key
    }

    /// The verifier key the log last recorded for the device, read through
    /// the device's stream (a few records, not a scan of the log).
    public static func publishedKey(in log: EventLog, device: UUID) throws -> String? {
        try log.read { reader in try publishedRecord(reader, device: device)?.key }
    }

    public static func publishedRecord(_ reader: LedgerReader, device: UUID) throws -> (
        key: String, record: EventRecord
    )? {
        try publishedRecords(reader, device: device).last
    }

    /// Every key the device's stream has published, oldest first.
    public static func publishedRecords(_ reader: LedgerReader, device: UUID) throws -> [(
        key: String, record: EventRecord
    )] {
        var found: [(String, EventRecord)] = []
        for record in try reader.records(inStream: device) where record.type == eventType {
            var cbor = CBORReader(record.payload)
            guard let text = try cbor.readValue()["key"]?.textValue else { continue }
            found.append((text, record))
        }
        return found
    }

    /// The key id of a verifier key, for messages (8 hex digits).
    public static func keyID(_ verifierKey: String) -> String {
        let parts = verifierKey.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 ? String(parts[1]) : "?"
    }
}

/// The device key cannot be used, and why; each says how to restore it.
public enum DeviceKeyError: Error, Equatable, CustomStringConvertible {
    /// The file exists but is not a usable signer key.
    case unusable(path: String, why: String)
    /// The path is a symbolic link, a directory, a FIFO…
    case notARegularFile(path: String, what: String)
    /// Others may read or write it.
    case exposed(path: String, mode: mode_t)
    /// The key is named for another device.
    case otherDevice(path: String, found: String, expected: String)
    /// The log published a key, and the directory has no key file.
    case missing(path: String, published: String, position: UInt64)
    /// The key file holds another key than the one the log published last.
    case replaced(path: String, found: String, published: String, position: UInt64, wasEarlier: Bool)
    /// A key file exists where a new one was to be made.
    case exists(path: String)
    /// The log records no key for the device (nothing it holds was ever signed).
    case notPublished(device: UUID)
    /// The log records no key, though the ledger signed checkpoints before
    /// (`evidence` names the file that shows it): the key record was lost.
    case keyRecordLost(evidence: String)

    static let restore =
        "Restore the device's own device.key from a backup ('jqc backup' copies it; mode 0600). If it is lost "
        + "for good, record a new key with 'jqc key rotate --old-key-lost': earlier checkpoints stay verifiable "
        + "with the old key."

    public var description: String {
        switch self {
        case .keyRecordLost(let evidence):
            "this ledger signed checkpoints before (\(evidence) holds the last one), but its log records no signing "
                + "key any more: the log lost its key record (it was removed, or the store was rolled back), so "
                + "nothing is signed and no key is published again. Do not sign this log; run 'jqc verify --full' and "
                + "check it against a checkpoint or digest kept elsewhere, or restore the ledger from a backup."
        case .unusable(let path, let why):
            "the device key \(path) is not usable: \(why). \(Self.restore)"
        case .notARegularFile(let path, let what):
            "the device key \(path) is \(what), not a regular file, so it is not used: a key must be the "
                + "ledger's own file. \(Self.restore)"
        case .exposed(let path, let mode):
            "the device key \(path) may be read or written by other users (mode \(String(mode, radix: 8))), so it "
                + "is not used: anyone who read it can sign for this device. If nobody else could, run 'chmod 600 "
                + "\(path)'; otherwise record a new key with 'jqc key rotate'."
        case .otherDevice(let path, let found, let expected):
            "the device key \(path) is named \(found), not \(expected): it belongs to another ledger and is not "
                + "used. \(Self.restore)"
        case .missing(let path, let published, let position):
            "this ledger's log published the signing key \(DeviceKeyFile.keyID(published)) (record \(position)), "
                + "but \(path) is missing, so nothing is signed and no new key is made. On an auditor's copy that "
                + "is expected: use 'jqc audit', 'jqc verify' and checkpoints handed over by the device. "
                + Self.restore
        case .replaced(let path, let found, let published, let position, let wasEarlier):
            "the device key \(path) (key \(DeviceKeyFile.keyID(found))) is not the key this ledger's log "
                + "published last (key \(DeviceKeyFile.keyID(published)), record \(position))"
                + (wasEarlier ? "; it is a key the device used before it was rotated" : "")
                + ", so it is not used and nothing is signed. \(Self.restore)"
        case .exists(let path):
            "\(path) already exists; no new key was made, so no key is replaced."
        case .notPublished(let device):
            "the log records no signing key for device \(device.lowercased), so nothing it holds was ever signed: "
                + "on the device itself, 'jqc checkpoint' makes and records one. On a copy, ask the device for a "
                + "checkpoint it signed."
        }
    }
}

/// What a device may sign with, decided from its key file and what its log
/// published (pure: the caller reads both).
public enum DeviceSigning: Equatable {
    /// The key file is the key the log published last.
    case use(NoteKey)
    /// The log has published no key: this one (the file's) is to be published first.
    case publish(NoteKey)
    /// Neither a key file nor a published key: a key is to be made and published.
    case create

    /// Decides, or says why the device may not sign.
    public static func decide(
        file: NoteKey?, published: [(key: String, position: UInt64)], path: String
    ) throws(DeviceKeyError) -> DeviceSigning {
        guard let last = published.last else { return file.map(DeviceSigning.publish) ?? .create }
        guard let file else { throw .missing(path: path, published: last.key, position: last.position) }
        guard file.verifierKey == last.key else {
            throw .replaced(
                path: path, found: file.verifierKey, published: last.key, position: last.position,
                wasEarlier: published.dropLast().contains { $0.key == file.verifierKey })
        }
        return .use(file)
    }
}
