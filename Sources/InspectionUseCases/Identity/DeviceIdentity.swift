import FoundationEssentials
import Glibc
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// One device's signing identity: its key file in the ledger directory and
/// the keys its log published (`device.key_published` events in the
/// device's own stream). The log, not the file, decides which key is in
/// force: a key file is used only when it is the key published last; one is
/// made only when the log has published none; a new key replaces the old
/// one only through `rotate`, which records it (endorsed by the old key when
/// that key is still there).
public struct DeviceIdentity: Sendable {
    public let directory: LedgerDirectory
    public let device: UUID

    public init(directory: LedgerDirectory, device: UUID) {
        self.directory = directory
        self.device = device
    }

    /// The actor of the device's own records.
    public var actor: Actor { Actor(id: "device:\(device.lowercased)", name: "jqc", verified: true) }

    /// Where a rotation keeps the new key until its event is recorded.
    var pendingKeyPath: String { directory.pendingDeviceKeyPath }

    /// What the key file and the log allow, read from `log` (which may be a
    /// read-only copy): nothing is written.
    public func decide(log: EventLog) throws -> DeviceSigning {
        let published = try publishedKeys(log)
        let file = try DeviceKeyFile.load(directory, device: device)
        // A log without a key record, from a ledger that has signed before
        // (signing publishes the key first), lost that record: publishing
        // again would sign whatever the log now holds.
        if published.isEmpty, FileManager.default.fileExists(atPath: lastCheckpointPath) {
            throw DeviceKeyError.keyRecordLost(evidence: lastCheckpointPath)
        }
        return try DeviceSigning.decide(file: file, published: published, path: directory.deviceKeyPath)
    }

    /// The last checkpoint the device signed, kept beside the store.
    var lastCheckpointPath: String { directory.lastCheckpointPath }

    /// Every key the log published for the device, oldest first, with its position.
    public func publishedKeys(_ log: EventLog) throws -> [(key: String, position: UInt64)] {
        try log.read { reader in
            try DeviceKeyFile.publishedRecords(reader, device: device).map { ($0.key, $0.record.position) }
        }
    }

    /// The key this device signs with: the key file when it is the key the
    /// log published last; the file's key published first when the log has
    /// none; a new key made and published when there is neither. Anything
    /// else (a missing, replaced, exposed or unreadable key file) is an error
    /// that says how to restore it. A rotation interrupted after its event
    /// was recorded is finished first.
    public func signingKey(ledger: InspectionLedger, at time: Timestamp) throws -> NoteKey {
        try finishInterruptedRotation(ledger.log)
        switch try decide(log: ledger.log) {
        case .use(let key):
            return key
        case .publish(let key):
            try record(key, endorsement: nil, ledger: ledger, at: time)
            return key
        case .create:
            let key = try DeviceKeyFile.create(directory, device: device)
            do {
                try record(key, endorsement: nil, ledger: ledger, at: time)
            } catch {
                // Not published (a full disk refused the event): the key it
                // made goes too, so the refused command leaves nothing new.
                unlink(directory.deviceKeyPath)
                throw error
            }
            return key
        }
    }

    /// What a rotation recorded.
    public struct Rotation: Sendable, Equatable {
        /// The new key's verifier key.
        public var key: String
        /// The key it replaces (nil when the log had published none).
        public var previous: String?
        /// Whether the old key endorsed the new one (false: it was lost).
        public var endorsed: Bool
    }

    /// Records a new signing key and makes it the key file. The old key (the
    /// file, when it is the key in force, even one others may read) signs an
    /// endorsement of the new one; without it `oldKeyLost` must be given, and
    /// the event says the old key was lost. The new key is written to
    /// `device.key.next` before its event and moved over `device.key` after,
    /// so a kill in between loses neither (`finishInterruptedRotation`).
    public func rotate(ledger: InspectionLedger, at time: Timestamp, oldKeyLost: Bool) throws -> Rotation {
        try finishInterruptedRotation(ledger.log)
        let published = try publishedKeys(ledger.log)
        let old: NoteKey? = try usableOldKey(published: published, oldKeyLost: oldKeyLost)
        let key = try NoteKey.generate(name: DeviceKeyFile.name(device))
        guard let signer = key.signerKey else { preconditionFailure("a generated key holds its signer key") }
        try FileStore.writeAtomically(Data((signer + "\n").utf8), to: pendingKeyPath, mode: 0o600)
        let endorsement = try old.map { try Self.endorsement(of: key, by: $0) }
        do {
            try record(key, endorsement: endorsement, lost: old == nil && !published.isEmpty, ledger: ledger, at: time)
        } catch {
            // The rotation did not happen: its pending key is not kept.
            unlink(pendingKeyPath)
            throw error
        }
        try moveIntoPlace()
        return Rotation(key: key.verifierKey, previous: published.last?.key, endorsed: endorsement != nil)
    }

    /// The old key for an endorsement, or nil when it is declared lost.
    private func usableOldKey(published: [(key: String, position: UInt64)], oldKeyLost: Bool) throws -> NoteKey? {
        guard let last = published.last else { return nil }
        if oldKeyLost { return nil }
        // A key others could read is still the device's own: it endorses the
        // key that replaces it.
        guard let file = try DeviceKeyFile.load(directory, device: device, allowingExposed: true) else {
            throw DeviceKeyError.missing(path: directory.deviceKeyPath, published: last.key, position: last.position)
        }
        guard file.verifierKey == last.key else {
            throw DeviceKeyError.replaced(
                path: directory.deviceKeyPath, found: file.verifierKey, published: last.key, position: last.position,
                wasEarlier: published.dropLast().contains { $0.key == file.verifierKey })
        }
        return file
    }

    /// A signed note by `old` naming `new`: `jqc key rotation`, the key name,
    /// the new verifier key.
    static func endorsement(of new: NoteKey, by old: NoteKey) throws -> String {
        let text = "jqc key rotation\n\(new.name)\n\(new.verifierKey)\n"
        return text + "\n" + (try old.signatureLine(for: text))
    }

    /// Records the `device.key_published` event, decided on this device's
    /// stream (`DeviceState`: a key published last is not published again).
    private func record(
        _ key: NoteKey, endorsement: String?, lost: Bool = false, ledger: InspectionLedger, at time: Timestamp
    ) throws {
        let published = DeviceStreamEvent.KeyPublished(
            key: key.verifierKey, algorithm: "ed25519", endorsement: endorsement, previousKeyLost: lost)
        try ledger.record([.publishKey(published)], onStreamOf: device, by: actor, clock: RecordedAt(time))
    }

    /// A rotation killed after its event was recorded left the new key in
    /// `device.key.next`: when that is the key the log published last, it
    /// becomes the key file. A pending key the log does not name is left
    /// alone (the rotation did not happen) and removed.
    func finishInterruptedRotation(_ log: EventLog) throws {
        guard FileManager.default.fileExists(atPath: pendingKeyPath) else { return }
        let pending = try DeviceKeyFile.load(path: pendingKeyPath, device: device)
        if let pending, try publishedKeys(log).last?.key == pending.verifierKey {
            try moveIntoPlace()
        } else if !log.isReadOnly {
            unlink(pendingKeyPath)
        }
    }

    /// The pending key becomes `device.key` (written durably, then the
    /// pending file goes).
    private func moveIntoPlace() throws {
        guard let data = FileManager.default.contents(atPath: pendingKeyPath) else {
            throw DeviceKeyError.unusable(
                path: pendingKeyPath, why: "the new key written by the rotation cannot be read")
        }
        try FileStore.writeAtomically(data, to: directory.deviceKeyPath, mode: 0o600)
        unlink(pendingKeyPath)
    }
}
