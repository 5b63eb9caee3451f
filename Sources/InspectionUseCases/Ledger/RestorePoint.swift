import FoundationEssentials
import Glibc
import HTTPCore
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
    /// Why the check could not be made, once it was said (no witness
    /// answered): later recording commands only remind, in one line, that
    /// `jqc restore-point clear` confirms the copy is the only one recording.
    public var uncheckable: String?
    /// Why the mark on disk could not be read, when it could not (never
    /// written): the warning says so, since what it held is lost.
    public var damage: String? = nil

    enum CodingKeys: String, CodingKey {
        case format, device
        case madeAt = "made_at"
        case records, found, uncheckable
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

    public static func path(_ home: LedgerDirectory) -> String { home.restorePointPath }

    /// The mark of the ledger in `home`, nil when it has none. A mark that
    /// cannot be read is still a mark (a restore point of unknown size): it
    /// is never taken for "checked".
    public static func load(_ home: LedgerDirectory) -> RestorePoint? {
        let path = path(home)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        // A mark that does not read (damaged, or of another jqc) keeps warning until a check passes: the safe
        // side; the warning names the damage, and the decoder's own words are not needed to say it.
        var damaged = RestorePoint(format: format, device: "", madeAt: "", records: 0)
        guard let data = FileManager.default.contents(atPath: path) else {
            damaged.damage = "it cannot be opened"
            return damaged
        }
        guard let point = try? JSONDecoder().decode(RestorePoint.self, from: data) else {
            damaged.damage = "it is not a restore-point mark this jqc reads (\(data.count) bytes)"
            return damaged
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
        if uncheckable != nil {
            return "warning: this ledger is a restored backup that no witness could check (said before); once you "
                + "know the ledger it was restored from no longer records, confirm with 'jqc restore-point clear'"
        }
        let made = madeAt.isEmpty ? "" : " made at \(madeAt) (\(records) records)"
        let damaged =
            damage.map {
                " (its mark \(LedgerLayout.restorePoint) is damaged: \($0); whatever an earlier check recorded in it is "
                    + "lost, so it counts as not checked)"
            } ?? ""
        return
            "warning: this ledger is a restored backup\(made)\(damaged) and has not yet checked that no other copy of "
            + "this device recorded after it. A backup is a restore point, not a second device: if the ledger it "
            + "was taken from is still in use, record on one of them only. 'jqc sync' asks the witness first."
    }

    /// What a recording command says on a ledger with the mark and no
    /// witness at all to ask: said once (the mark remembers it), then the
    /// one-line reminder of `warning`.
    public static func uncheckableWarning(_ home: LedgerDirectory) throws -> String? {
        guard var point = load(home) else { return nil }
        guard point.found == nil, point.uncheckable == nil else { return point.warning }
        let config = try LedgerConfig.load(home)
        guard try WitnessList.load(home).witnesses.isEmpty, WitnessSetting.configured(config) == nil else {
            return point.warning
        }
        let message =
            "restore point: this ledger is a restored backup, and whether another copy of this device recorded "
            + "after it can NOT be checked: no witness is configured, so nothing outside this device knows its "
            + "history. A backup is a restore point, not a second device: if the ledger it was taken from is "
            + "still in use, record on one of them only. Once you know it no longer records, confirm with "
            + "'jqc restore-point clear' (this is said once; a one-line reminder follows until then)."
        point.uncheckable = message
        try point.save(home)
        return "warning: " + message
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
        /// It still cannot be checked, as said before: nothing to say again.
        case stillUnchecked
    }

    /// The C2SP witnesses asked what they cosigned of this device, by
    /// submitting today's checkpoint (`tlog-witness` has no other question):
    /// a witness that cosigned more records than this copy holds, or another
    /// root at a size it holds, answers with a conflict this ledger cannot
    /// re-prove (`WitnessResult.forked`): another copy recorded after the
    /// backup. One cosignature and no fork passes (and is recorded, as a
    /// sync records it); no witness answering is a check not made.
    static func byWitnesses(
        home: LedgerDirectory, config: LedgerConfig, ledger: InspectionLedger, transport: any HTTPTransport,
        point: inout RestorePoint, cosigning: WitnessCosigning, clock: any LedgerClock
    ) throws -> Outcome {
        let round = try cosigning.run(ledger: ledger, transport: transport, clock: clock, always: true)
        let forks = round.results.compactMap { result -> String? in
            guard case .forked(let fork) = result else { return nil }
            let (witness, held, ours) = (fork.witness, fork.heldSize, fork.ours)
            let root = Data(ours.root.bytes).base64EncodedString()
            let what =
                held > ours.size
                ? "cosigned a checkpoint of \(held) records of this device; this restored copy holds only "
                    + "\(ours.size) (root \(root))"
                : "cosigned a checkpoint of \(held) records of this device whose root is not this copy's at that "
                    + "size (this copy: \(ours.size) records, root \(root))"
            return "the witness \(witness.key.name) (\(witness.url)) \(what)"
        }
        if !forks.isEmpty {
            return try refused(forks.joined(separator: "; "), home: home, config: config, point: &point)
        }
        if round.results.contains(where: { $0.cosignature != nil }) {
            try RestorePoint.clear(home)
            return .passed
        }
        let why = round.results.map(\.line).joined(separator: "; ")
        return .couldNotCheck(
            "restore point: whether another copy of this device recorded after the backup could NOT be checked: no "
                + "witness cosigned this copy's checkpoint (\(why)). Once you know the ledger it was restored from no "
                + "longer records, confirm with 'jqc restore-point clear'; until then recording commands remind you "
                + "in one line.")
    }

    /// Checks the ledger in `home` if it carries the mark; nil when it does
    /// not. With C2SP witnesses configured they are asked (`byWitnesses`);
    /// a check that could not be made is said once (`.couldNotCheck`), then
    /// `.stillUnchecked` until a check passes or `jqc restore-point clear`.
    public static func run(
        home: LedgerDirectory, config: LedgerConfig, ledger: InspectionLedger, session: ServerSession,
        key: @escaping () throws -> NoteKey, clock: any LedgerClock
    ) throws -> Outcome? {
        guard var point = RestorePoint.load(home) else { return nil }
        let list = try WitnessList.load(home)
        let outcome =
            list.witnesses.isEmpty
            ? try byServer(home: home, config: config, ledger: ledger, session: session, point: &point)
            : try byWitnesses(
                home: home, config: config, ledger: ledger, transport: session.transport, point: &point,
                cosigning: WitnessCosigning(list: list, directory: home, device: config.deviceID, key: key),
                clock: clock)
        guard case .couldNotCheck(let message) = outcome else { return outcome }
        if point.uncheckable != nil { return .stillUnchecked }
        point.uncheckable = message
        try point.save(home)
        return outcome
    }

    /// The legacy witness (or the sync server) asked for the device's latest checkpoint.
    static func byServer(
        home: LedgerDirectory, config: LedgerConfig, ledger: InspectionLedger, session: ServerSession,
        point: inout RestorePoint
    ) throws -> Outcome {
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
        return try refused(finding, home: home, config: config, point: &point)
    }

    /// The refusal when another copy's history was found, kept in the mark.
    static func refused(_ finding: String, home: LedgerDirectory, config: LedgerConfig, point: inout RestorePoint)
        throws -> Outcome
    {
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
