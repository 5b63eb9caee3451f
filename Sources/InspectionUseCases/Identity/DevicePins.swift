import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// What this ledger knows of the other devices it received files from, read
/// from its log: each one's pinned keys, the signed checkpoints its files
/// carried (with the leaves they proved), and the forks seen. It is derived,
/// never stored: the `device.key_pinned` and `device.fork_seen` events of
/// this device's own stream, and every `inspection.received` of the log.
///
/// A reception recorded before keys were pinned (an older jqc) counts as a
/// pin of the key it was verified with (its payload's `public_key`), so a
/// ledger written before pins existed is protected without a migration.
public struct DevicePins: Sendable {
    /// Where a pinned key comes from.
    public enum PinSource: Sendable, Equatable {
        /// A `device.key_pinned` event at this position of the log.
        case event(position: UInt64, fileSHA256: Digest256)
        /// The `inspection.received` at this position, recorded before pins
        /// were recorded.
        case reception(position: UInt64)
    }

    /// One key held for a device.
    public struct PinnedKey: Sendable, Equatable {
        /// The C2SP verifier key.
        public var key: String
        public var source: PinSource
        public var keyID: String { DeviceKeyFile.keyID(key) }
    }

    /// One signed checkpoint of a device that this ledger holds: carried by a
    /// reception (proven when it was received) or kept as a fork's evidence.
    public struct HeldCheckpoint: Sendable, Equatable {
        public var size: UInt64
        public var root: Digest256
        public var note: String
        /// The leaf hash of every record proven in it, by its position in
        /// that device's log.
        public var leaves: [UInt64: Digest256]
        /// Where it is held, for messages ("the reception at position 12").
        public var heldBy: String

        public var seen: DeviceStreamEvent.SeenCheckpoint {
            .init(size: size, root: Data(root.bytes).base64EncodedString(), note: note)
        }
    }

    /// Everything held of one device.
    public struct Device: Sendable {
        public var id: UUID
        /// Every key pinned for it, oldest first (a rotation endorsed by a
        /// pinned key adds the new one).
        public var keys: [PinnedKey] = []
        public var checkpoints: [HeldCheckpoint] = []
        public var forks: [DeviceStreamEvent.ForkSeen] = []
        /// When its first and last received file were recorded here.
        public var firstSeen: Timestamp?
        public var lastSeen: Timestamp?
        /// Its files received.
        public var receptions = 0
        /// Its distinct records this ledger holds (by leaf).
        public var leaves: Set<Digest256> = []

        /// The key pinned last: the one its next file is expected to be signed by.
        public var currentKey: PinnedKey? { keys.last }
        public var isForked: Bool { !forks.isEmpty }

        mutating func pin(_ key: String, _ source: PinSource) {
            guard let index = keys.firstIndex(where: { $0.key == key }) else {
                keys.append(PinnedKey(key: key, source: source))
                return
            }
            // The pin recorded with a reception (the event after it in the
            // same transaction) is the better account of the same key.
            if case .event = source, case .reception = keys[index].source { keys[index].source = source }
        }

        mutating func seen(at time: Timestamp) {
            if firstSeen == nil { firstSeen = time }
            lastSeen = time
        }
    }

    /// The devices heard from, by id.
    public var devices: [UUID: Device] = [:]

    /// The devices in the order this ledger first heard from them.
    public var ordered: [Device] {
        devices.values.sorted {
            let (a, b) = ($0.firstSeen?.microsecondsSinceEpoch ?? 0, $1.firstSeen?.microsecondsSinceEpoch ?? 0)
            return a != b ? a < b : $0.id.lowercased < $1.id.lowercased
        }
    }

    public init() {}

    /// Reads the pins, checkpoints and forks of the whole log, as `reader`
    /// sees it (what `receive` and `jqc devices` need): `receptions` are
    /// every `inspection.received` record of the log, in log order
    /// (`InspectionLedger.receptionRecords(in:)` reads them from the
    /// receptions view in the same snapshot). `own` is this device's id:
    /// only its own stream's pins and forks count (another device's, carried
    /// here, are its business), and only that stream is read beside the
    /// receptions; nil (a copy whose device is not known) takes them from
    /// any stream, walking the log for them.
    public static func read(
        _ reader: LedgerReader, own: UUID?, receptionRecords receptions: [EventRecord]
    ) throws -> DevicePins {
        var pins = DevicePins()
        let chain = HashChain()
        for record in receptions {
            assert(record.type == InspectionEventType.received.rawValue, "a reception list held another record")
            // The payload alone: references carry their leaves, so the
            // `carried` table need not be read for this.
            if case .received(let received) = try EventUpcaster.decode(record, template: nil) {
                pins.add(received, record: record, chain: chain)
            }
        }
        if let own {
            for record in try reader.records(inStream: own) { pins.absorb(record) }
        } else {
            let types: Set = [DeviceStreamEventType.keyPinned.rawValue, DeviceStreamEventType.forkSeen.rawValue]
            try reader.forEachRecord { record in
                if types.contains(record.type) { pins.absorb(record) }
                return true
            }
        }
        return pins
    }

    /// The same, walking the whole log for the receptions: for a ledger
    /// opened without its views (`jqc devices` on an auditor's copy).
    public static func read(_ reader: LedgerReader, own: UUID?) throws -> DevicePins {
        var receptions: [EventRecord] = []
        let receivedType = InspectionEventType.received.rawValue
        try reader.forEachRecord { record in
            if record.type == receivedType { receptions.append(record) }
            return true
        }
        return try read(reader, own: own, receptionRecords: receptions)
    }

    /// Reads only this device's own stream (its pins and forks) and the
    /// given receptions: what an audit of one inspection needs, without
    /// reading the records of other inspections.
    public static func read(
        _ reader: LedgerReader, own: UUID, receptions: [(InspectionReceived, EventRecord)]
    ) throws -> DevicePins {
        var pins = DevicePins()
        let chain = HashChain()
        for (received, record) in receptions { pins.add(received, record: record, chain: chain) }
        for record in try reader.records(inStream: own) { pins.absorb(record) }
        return pins
    }

    /// Takes in a `device.key_pinned` or `device.fork_seen` record.
    mutating func absorb(_ record: EventRecord) {
        guard
            record.type == DeviceStreamEventType.keyPinned.rawValue
                || record.type == DeviceStreamEventType.forkSeen.rawValue,
            let event = DeviceStreamEvent.decodeStored(record)
        else { return }
        switch event {
        case .keyPinned(let pinned):
            devices[pinned.device, default: Device(id: pinned.device)].pin(
                pinned.publicKey, .event(position: record.position, fileSHA256: pinned.fileSHA256))
        case .forkSeen(let fork):
            var device = devices[fork.device, default: Device(id: fork.device)]
            if !device.forks.contains(fork) { device.forks.append(fork) }
            // The contradicting checkpoint is held too: the same file again
            // is the same fork, not a new one.
            if let second = HeldCheckpoint(fork.second, heldBy: "the fork recorded at position \(record.position)") {
                device.checkpoints.append(second)
            }
            devices[fork.device] = device
        default: break
        }
    }

    /// Adds what a reception recorded here holds of its sender.
    mutating func add(_ received: InspectionReceived, record: EventRecord, chain: HashChain) {
        var device = devices[received.fromDevice, default: Device(id: received.fromDevice)]
        device.pin(received.publicKey, .reception(position: record.position))
        device.seen(at: record.recordedAt)
        device.receptions += 1
        var leaves: [UInt64: Digest256] = [:]
        for reference in received.records {
            leaves[reference.position] = reference.leaf
            device.leaves.insert(reference.leaf)
        }
        leaves[received.keyRecord.position] = chain.leaf(ofRecord: received.keyRecord.record)
        leaves[received.templateRecord.position] = chain.leaf(ofRecord: received.templateRecord.record)
        // The checkpoint was verified with this key when it was received;
        // one that no longer parses is no evidence of anything.
        if let key = try? NoteKey(parsing: received.publicKey),
            let checkpoint = try? Checkpoint(verifying: received.checkpoint, key: key)
        {
            device.checkpoints.append(
                HeldCheckpoint(
                    size: checkpoint.size, root: checkpoint.root, note: received.checkpoint, leaves: leaves,
                    heldBy: "the reception at position \(record.position)"))
        }
        devices[received.fromDevice] = device
    }
}

extension DevicePins.HeldCheckpoint {
    /// A fork's evidence as a held checkpoint (its leaves are not kept).
    init?(_ seen: DeviceStreamEvent.SeenCheckpoint, heldBy: String) {
        guard let bytes = Data(base64Encoded: seen.root).map(Array.init), let root = Digest256(bytes: bytes) else {
            return nil
        }
        self.init(size: seen.size, root: root, note: seen.note, leaves: [:], heldBy: heldBy)
    }
}

extension DeviceStreamEvent {
    /// The device-stream event a stored record holds, or nil.
    static func decodeStored(_ record: EventRecord) -> DeviceStreamEvent? {
        DeviceStreamEvent(
            StoredPayload(type: record.type, schemaVersion: record.schemaVersion, payload: record.payload))
    }
}
