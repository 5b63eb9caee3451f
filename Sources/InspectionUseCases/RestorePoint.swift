import Foundation
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

/// A backup is a restore point for its device, never a second device: both
/// copies carry the same device id and key, and two ledgers of one device
/// that both record and sync make two histories of it. So `jqc backup`
/// marks its copy (`restore-point.json`, Schemas/ledger-format.md § The
/// ledger directory). A ledger with the mark warns on every recording
/// command until `jqc sync` has asked the witness whether it holds history
/// of this device that the local log does not have (`RestorePointCheck`);
/// a check that passes removes the mark.
public struct RestorePoint: Codable, Sendable, Equatable {
    public static let format = "jqc-restore-point/1"

    public var format: String
    /// The device id, lower case.
    public var device: String
    /// When the backup was made (RFC 3339, UTC).
    public var madeAt: String
    /// The records of the log the backup holds.
    public var records: UInt64
    /// What the last check found, when it found another copy's history:
    /// recording commands repeat it.
    public var found: String?

    enum CodingKeys: String, CodingKey {
        case format, device
        case madeAt = "made_at"
        case records, found
    }

    init(format: String, device: String, madeAt: String, records: UInt64) {
        self.format = format
        self.device = device
        self.madeAt = madeAt
        self.records = records
    }

    public init(device: UUID, madeAt: Timestamp, records: UInt64) {
        format = Self.format
        self.device = device.lowercased
        self.madeAt = madeAt.iso8601
        self.records = records
    }

    public static func path(_ home: LedgerDirectory) -> String { home.path + "/restore-point.json" }

    /// The mark of the ledger in `home`, nil when it has none. A mark that
    /// cannot be read is still a mark (a restore point of unknown size): it
    /// is never taken for "checked".
    public static func load(_ home: LedgerDirectory) -> RestorePoint? {
        let path = path(home)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path),
            let point = try? JSONDecoder().decode(RestorePoint.self, from: data)
        else {
            return RestorePoint(format: format, device: "", madeAt: "", records: 0)
        }
        return point
    }

    /// Writes the mark into the ledger directory `home` (the backup's copy).
    public func save(_ home: LedgerDirectory) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try DurableFile.write(try encoder.encode(self), to: Self.path(home), mode: 0o644)
    }

    /// Removes the mark: a check passed.
    public static func clear(_ home: LedgerDirectory) throws {
        guard unlink(path(home)) == 0 || errno == ENOENT else {
            throw RestorePointError(path: path(home), code: errno)
        }
    }

    /// What a recording command says on a ledger with the mark.
    public var warning: String {
        if let found { return "warning: \(found)" }
        let made = madeAt.isEmpty ? "" : " made at \(madeAt) (\(records) records)"
        return "warning: this ledger is a restored backup\(made) and has not yet checked that no other copy of "
            + "this device recorded after it. A backup is a restore point, not a second device: if the ledger it "
            + "was taken from is still in use, record on one of them only. 'jqc sync' asks the witness first."
    }
}

/// `jqc sync` on a restored backup, before it sends anything: does the
/// witness (the configured one, else the sync server; the development
/// server's `GET /ledger/checkpoints/latest?device=…`) hold a checkpoint of
/// this device larger than the local log, or one the local log does not
/// extend? Then another copy of this device recorded after the backup, and
/// the sync is refused.
public enum RestorePointCheck {
    public enum Outcome: Sendable, Equatable {
        /// The witness holds nothing the local log lacks: the mark is removed.
        case passed
        /// Another copy of the device recorded after the backup.
        case newerHistory(String)
        /// The witness could not answer (none, HTTP 404, unreachable): the mark stays.
        case couldNotCheck(String)
    }

    /// Checks the ledger in `home` if it carries the mark; nil when it does not.
    public static func run(
        home: LedgerDirectory, config: LedgerConfig, ledger: InspectionLedger, session: ServerSession
    ) throws -> Outcome? {
        guard var point = RestorePoint.load(home) else { return nil }
        let witness = WitnessSetting.configured(config) ?? session.api.baseURL
        let name = DeviceKeyFile.name(config.deviceID)
        let held: CheckpointWitness.Held?
        do {
            held = try CheckpointWitness.latest(session: session, name: name, base: witness)
        } catch {
            let why: String
            if case .refused(404, _) = error {
                why = "\(witness) offers no witness (HTTP 404)"
            } else {
                why = "\(witness) did not answer (\(error.description))"
            }
            return .couldNotCheck(
                "restore point: whether another copy of this device recorded after the backup could NOT be "
                    + "checked: \(why). This ledger keeps warning before it records until a check passes; if you "
                    + "know the ledger it was restored from no longer records, remove \(RestorePoint.path(home)).")
        }
        let (size, rootAtHeld) = try ledger.log.read { reader -> (UInt64, Digest256?) in
            let size = try reader.treeSize()
            guard let held, held.size <= size else { return (size, nil) }
            return (size, try reader.treeRoot(size: held.size))
        }
        guard let held else {
            try RestorePoint.clear(home)
            return .passed
        }
        let finding: String
        if held.size > size {
            finding =
                "the witness \(witness) holds a checkpoint of \(held.size) records of this device"
                + (held.acknowledgedAt.map { " (acknowledged \($0))" } ?? "") + "; this ledger has only \(size)"
        } else if let root = held.root, let rootAtHeld, root != rootAtHeld {
            finding =
                "the witness \(witness) holds a checkpoint of \(held.size) records of this device that this "
                + "ledger's log does not extend (another history from record 1 to \(held.size))"
        } else {
            try RestorePoint.clear(home)
            return .passed
        }
        let device = config.deviceID.lowercased
        let message =
            "REFUSED: another copy of device \(device) recorded and synced after this backup was made: "
            + "\(finding). Two ledgers sharing a device id must never both record and sync; nothing was sent. "
            + "Keep both ledgers as they are. To go on with what this copy recorded, start a new device with "
            + "'jqc init' (its own directory) and hand each inspection over to it ('jqc handover ID -o FILE' here, "
            + "'jqc receive FILE' there); or go on with the other copy and stop using this one."
        point.found = message
        try point.save(home)
        return .newerHistory(message)
    }
}

/// The mark of a checked restore point could not be removed.
public struct RestorePointError: Error, CustomStringConvertible {
    public var path: String
    public var code: Int32
    public var description: String {
        "the check passed, but \(path) could not be removed (\(String(cString: strerror(code)))); remove it by hand"
    }
}
