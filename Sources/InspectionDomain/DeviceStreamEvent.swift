import FoundationEssentials
import LedgerCore

/// The stable name and schema version of every event type of a device's own
/// stream (stream = the device id), as `InspectionEventType` is for an
/// inspection's stream.
public enum DeviceStreamEventType: String, CaseIterable, Hashable, Sendable {
    case keyPublished = "device.key_published"
    case checkpointWitnessed = "sync.checkpoint_witnessed"
    case keyPinned = "device.key_pinned"
    case forkSeen = "device.fork_seen"
    case checkpointCosigned = "checkpoint.cosigned"

    /// The type stored as `name`, or nil for one of another stream or unknown.
    public static func named(_ name: String) -> DeviceStreamEventType? { DeviceStreamEventType(rawValue: name) }

    /// The version this program writes and reads.
    public var schemaVersion: Int { 1 }
}

/// The events of a device's own stream (stream = the device id), typed,
/// encoded and decoded like the inspection events: the signing key it
/// published (`device.key_published`), what a witness said of its
/// checkpoint (`sync.checkpoint_witnessed`), and what it learnt of the
/// devices it received files from: a sender's key pinned on first sight
/// (`device.key_pinned`) and two histories of one sender (`device.fork_seen`).
/// The log stores them as any
/// event; the inspection fold leaves them alone (`InspectionEvent.unrecognized`),
/// and `DeviceStreamEvent(stored)` reads one back for wording and audits.
public enum DeviceStreamEvent: Equatable, Sendable {
    case keyPublished(KeyPublished)
    case checkpointWitnessed(CheckpointWitnessed)
    case keyPinned(KeyPinned)
    case forkSeen(ForkSeen)
    case checkpointCosigned(CheckpointCosigned)

    public static let keyPublishedType = DeviceStreamEventType.keyPublished.rawValue
    public static let checkpointWitnessedType = DeviceStreamEventType.checkpointWitnessed.rawValue

    /// `device.key_published` v1 (`Schemas/events/device.key_published.schema.json`).
    public struct KeyPublished: Equatable, Sendable {
        /// The C2SP verifier key: `jqc/<device>+<key id>+<base64>`.
        public var key: String
        public var algorithm: String
        /// A rotation's endorsement by the previous key, when there is one.
        public var endorsement: String?
        /// A rotation declared without the previous key (`--old-key-lost`).
        public var previousKeyLost: Bool

        public init(
            key: String, algorithm: String = "ed25519", endorsement: String? = nil, previousKeyLost: Bool = false
        ) {
            self.key = key
            self.algorithm = algorithm
            self.endorsement = endorsement
            self.previousKeyLost = previousKeyLost
        }

        /// The key id: the 8 hex digits between the `+`s of the verifier key.
        public var keyID: String {
            let parts = key.split(separator: "+", omittingEmptySubsequences: false)
            return parts.count == 3 ? String(parts[1]) : key
        }

        enum Key: String, PayloadKey {
            case key, algorithm, endorsement, previousKeyLost = "previous_key_lost"
            static let encodedKeys = encode()
        }

        var cbor: CBORValue {
            var pairs: [(Key, CBORValue)] = [(.algorithm, .text(algorithm)), (.key, .text(key))]
            // Written only when they say something, as the schema has them.
            if let endorsement { pairs.append((.endorsement, .text(endorsement))) }
            if previousKeyLost { pairs.append((.previousKeyLost, .bool(true))) }
            return Key.map(pairs)
        }

        static func read(from r: inout PayloadReader) throws(DomainError) -> KeyPublished {
            var key: String?
            var algorithm: String?
            var endorsement: String?
            var lost = false
            for _ in 0..<(try r.mapCount()) {
                switch try r.namedKey(Key.self) {
                case .key?: key = try r.text()
                case .algorithm?: algorithm = try r.text()
                case .endorsement?: endorsement = try r.text()
                case .previousKeyLost?: lost = try r.bool()
                case nil: try r.skip()
                }
            }
            return KeyPublished(
                key: try r.required(key, Key.key), algorithm: try r.required(algorithm, Key.algorithm),
                endorsement: endorsement, previousKeyLost: lost)
        }
    }

    /// What a sync server, as a witness, said of the checkpoint sent: the
    /// schema's closed set, recorded as its raw value. A value outside it
    /// (a newer writer's) is kept as `unrecognized`, so its bytes and the
    /// audit's wording of it are unchanged.
    public enum WitnessOutcome: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The server checked the checkpoint and now holds it.
        case acknowledged
        /// 409: the checkpoint does not extend the one the server holds.
        case refused
        /// The server has no witness endpoint (404).
        case unsupported
        /// The server answered 200 with another checkpoint than the one sent.
        case wrongAnswer
        /// A recorded value this version does not know.
        case unrecognized(String)

        /// The recorded string.
        public var rawValue: String {
            switch self {
            case .acknowledged: "acknowledged"
            case .refused: "refused"
            case .unsupported: "unsupported"
            case .wrongAnswer: "wrong_answer"
            case .unrecognized(let text): text
            }
        }

        public init(rawValue: String) {
            switch rawValue {
            case "acknowledged": self = .acknowledged
            case "refused": self = .refused
            case "unsupported": self = .unsupported
            case "wrong_answer": self = .wrongAnswer
            default: self = .unrecognized(rawValue)
            }
        }

        /// A recorded string written as a literal (the tests' samples).
        public init(stringLiteral value: String) { self.init(rawValue: value) }

        public var description: String { rawValue }
    }

    /// `sync.checkpoint_witnessed` v1 (`Schemas/events/sync.checkpoint_witnessed.schema.json`).
    public struct CheckpointWitnessed: Equatable, Sendable {
        public var outcome: WitnessOutcome
        public var server: String
        /// With `acknowledged`: the tree size of the checkpoint the server now holds.
        public var size: UInt64?
        /// With `acknowledged`: the root sent (base64), when recorded.
        public var root: String?
        public var message: String?

        public init(
            outcome: WitnessOutcome, server: String, size: UInt64? = nil, root: String? = nil, message: String? = nil
        ) {
            self.outcome = outcome
            self.server = server
            self.size = size
            self.root = root
            self.message = message
        }

        enum Key: String, PayloadKey {
            case outcome, server, size, root, message
            static let encodedKeys = encode()
        }

        var cbor: CBORValue {
            var pairs: [(Key, CBORValue)] = [(.server, .text(server)), (.outcome, .text(outcome.rawValue))]
            if let size { pairs.append((.size, .unsigned(size))) }
            if let root { pairs.append((.root, .text(root))) }
            if let message { pairs.append((.message, .text(message))) }
            return Key.map(pairs)
        }

        static func read(from r: inout PayloadReader) throws(DomainError) -> CheckpointWitnessed {
            var outcome: WitnessOutcome?
            var server: String?
            var size: UInt64?
            var root: String?
            var message: String?
            for _ in 0..<(try r.mapCount()) {
                switch try r.namedKey(Key.self) {
                case .outcome?: outcome = WitnessOutcome(rawValue: try r.text())
                case .server?: server = try r.text()
                case .size?:
                    let count = try r.int64()
                    guard count >= 0 else { throw r.malformed("\"size\" is negative") }
                    size = UInt64(count)
                case .root?: root = try r.text()
                case .message?: message = try r.text()
                case nil: try r.skip()
                }
            }
            return CheckpointWitnessed(
                outcome: try r.required(outcome, Key.outcome), server: try r.required(server, Key.server), size: size,
                root: root, message: message)
        }
    }

    /// `device.key_pinned` v1 (`Schemas/events/device.key_pinned.schema.json`):
    /// the key this device holds for another device, from the first verified
    /// file of that device (or `jqc receive --key`): a later file under that
    /// device's name must be signed by it, or carry a rotation it endorsed.
    public struct KeyPinned: Equatable, Sendable {
        /// The other device's id.
        public var device: UUID
        /// Its C2SP verifier key: `jqc/<device>+<key id>+<base64>`.
        public var publicKey: String
        public var keyID: String
        /// The file whose reception pinned it.
        public var fileSHA256: Digest256

        public init(device: UUID, publicKey: String, keyID: String, fileSHA256: Digest256) {
            self.device = device
            self.publicKey = publicKey
            self.keyID = keyID
            self.fileSHA256 = fileSHA256
        }

        enum Key: String, PayloadKey {
            case device, publicKey = "public_key", keyID = "key_id", fileSHA256 = "file_sha256"
            static let encodedKeys = encode()
        }

        var cbor: CBORValue {
            Key.map([
                (.device, .text(device.lowercased)), (.publicKey, .text(publicKey)), (.keyID, .text(keyID)),
                (.fileSHA256, .text(fileSHA256.hex)),
            ])
        }

        static func read(from r: inout PayloadReader) throws(DomainError) -> KeyPinned {
            var device: UUID?
            var key: String?
            var keyID: String?
            var file: Digest256?
            for _ in 0..<(try r.mapCount()) {
                switch try r.namedKey(Key.self) {
                case .device?: device = try r.uuid(Key.device)
                case .publicKey?: key = try r.text()
                case .keyID?: keyID = try r.text()
                case .fileSHA256?: file = try r.digest(Key.fileSHA256)
                case nil: try r.skip()
                }
            }
            return KeyPinned(
                device: try r.required(device, Key.device), publicKey: try r.required(key, Key.publicKey),
                keyID: try r.required(keyID, Key.keyID), fileSHA256: try r.required(file, Key.fileSHA256))
        }
    }

    /// One signed checkpoint of another device, as evidence: its tree size,
    /// root (base64, as the note has it) and the signed note itself.
    public struct SeenCheckpoint: Equatable, Sendable {
        public var size: UInt64
        public var root: String
        public var note: String

        public init(size: UInt64, root: String, note: String) {
            self.size = size
            self.root = root
            self.note = note
        }

        enum Key: String, PayloadKey {
            case size, root, note
            static let encodedKeys = encode()
        }

        var cbor: CBORValue { Key.map([(.size, .unsigned(size)), (.root, .text(root)), (.note, .text(note))]) }

        static func read(from r: inout PayloadReader, _ member: String) throws(DomainError) -> SeenCheckpoint {
            var size: UInt64?
            var root: String?
            var note: String?
            for _ in 0..<(try r.mapCount()) {
                switch try r.namedKey(Key.self) {
                case .size?:
                    let count = try r.int64()
                    guard count >= 0 else { throw r.malformed("\"\(member).size\" is negative") }
                    size = UInt64(count)
                case .root?: root = try r.text()
                case .note?: note = try r.text()
                case nil: try r.skip()
                }
            }
            return SeenCheckpoint(
                size: try r.required(size, "\(member).size"), root: try r.required(root, "\(member).root"),
                note: try r.required(note, "\(member).note"))
        }
    }

    /// `device.fork_seen` v1 (`Schemas/events/device.fork_seen.schema.json`):
    /// two checkpoints signed by one device's key that cannot both be its
    /// history (one size with two roots, or a record proven at one position
    /// in each with different leaves). Recorded though the file that showed
    /// it was refused: it is the evidence, and `audit` says FORKED.
    public struct ForkSeen: Equatable, Sendable {
        public var device: UUID
        /// The checkpoint this ledger held first.
        public var first: SeenCheckpoint
        /// The one that contradicts it.
        public var second: SeenCheckpoint

        public init(device: UUID, first: SeenCheckpoint, second: SeenCheckpoint) {
            self.device = device
            self.first = first
            self.second = second
        }

        enum Key: String, PayloadKey {
            case device, first, second
            static let encodedKeys = encode()
        }

        var cbor: CBORValue {
            Key.map([(.device, .text(device.lowercased)), (.first, first.cbor), (.second, second.cbor)])
        }

        static func read(from r: inout PayloadReader) throws(DomainError) -> ForkSeen {
            var device: UUID?
            var first: SeenCheckpoint?
            var second: SeenCheckpoint?
            for _ in 0..<(try r.mapCount()) {
                switch try r.namedKey(Key.self) {
                case .device?: device = try r.uuid(Key.device)
                case .first?: first = try SeenCheckpoint.read(from: &r, "first")
                case .second?: second = try SeenCheckpoint.read(from: &r, "second")
                case nil: try r.skip()
                }
            }
            return ForkSeen(
                device: try r.required(device, Key.device), first: try r.required(first, Key.first),
                second: try r.required(second, Key.second))
        }
    }

    /// `checkpoint.cosigned` v1 (`Schemas/events/checkpoint.cosigned.schema.json`):
    /// a witness's cosignature/v1 of the device's checkpoint, verified against
    /// the witness's configured key before it was recorded (one per witness
    /// and checkpoint; the note itself is kept in `cosigned-checkpoint`).
    public struct CheckpointCosigned: Equatable, Sendable {
        /// The witness's name (its cosigner key's name).
        public var witness: String
        /// Its key id, 8 hex digits.
        public var keyID: String
        /// The cosignature's timestamp, POSIX seconds.
        public var timestamp: UInt64
        /// The cosigned checkpoint's tree size and root (base64).
        public var size: UInt64
        public var root: String

        public init(witness: String, keyID: String, timestamp: UInt64, size: UInt64, root: String) {
            self.witness = witness
            self.keyID = keyID
            self.timestamp = timestamp
            self.size = size
            self.root = root
        }

        enum Key: String, PayloadKey {
            case witness, keyID = "key_id", timestamp, size, root
            static let encodedKeys = encode()
        }

        var cbor: CBORValue {
            Key.map([
                (.witness, .text(witness)), (.keyID, .text(keyID)), (.timestamp, .unsigned(timestamp)),
                (.size, .unsigned(size)), (.root, .text(root)),
            ])
        }

        static func read(from r: inout PayloadReader) throws(DomainError) -> CheckpointCosigned {
            var witness: String?
            var keyID: String?
            var timestamp: UInt64?
            var size: UInt64?
            var root: String?
            for _ in 0..<(try r.mapCount()) {
                switch try r.namedKey(Key.self) {
                case .witness?: witness = try r.text()
                case .keyID?: keyID = try r.text()
                case .timestamp?:
                    let value = try r.int64()
                    guard value >= 0 else { throw r.malformed("\"timestamp\" is negative") }
                    timestamp = UInt64(value)
                case .size?:
                    let value = try r.int64()
                    guard value >= 0 else { throw r.malformed("\"size\" is negative") }
                    size = UInt64(value)
                case .root?: root = try r.text()
                case nil: try r.skip()
                }
            }
            return CheckpointCosigned(
                witness: try r.required(witness, Key.witness), keyID: try r.required(keyID, Key.keyID),
                timestamp: try r.required(timestamp, Key.timestamp), size: try r.required(size, Key.size),
                root: try r.required(root, Key.root))
        }
    }

    /// The event's type.
    public var eventType: DeviceStreamEventType {
        switch self {
        case .keyPublished: .keyPublished
        case .checkpointWitnessed: .checkpointWitnessed
        case .keyPinned: .keyPinned
        case .forkSeen: .forkSeen
        case .checkpointCosigned: .checkpointCosigned
        }
    }

    // MARK: - Encoding

    /// The payload as one deterministic CBOR map, the bytes the hash chain covers.
    public func payloadCBOR() -> [UInt8] { payloadValue.encoded() }

    /// The payload as a CBOR tree.
    public var payloadValue: CBORValue {
        switch self {
        case .keyPublished(let e): e.cbor
        case .checkpointWitnessed(let e): e.cbor
        case .keyPinned(let e): e.cbor
        case .forkSeen(let e): e.cbor
        case .checkpointCosigned(let e): e.cbor
        }
    }

    /// The event ready for the log, in the device's own stream.
    public func pending(device: UUID, actor: Actor, recordedAt: Timestamp) -> PendingEvent {
        PendingEvent(
            stream: device, type: eventType.rawValue, schemaVersion: eventType.schemaVersion, actor: actor,
            device: device, recordedAt: recordedAt, payload: payloadCBOR())
    }

    // MARK: - Decoding

    /// Decodes a payload of a device stream's event type; nil for a type of
    /// another stream. A version this program does not read, or a payload
    /// that does not fit its schema, is a `DomainError`.
    public static func decode(type: String, schemaVersion: Int, payload: [UInt8]) throws(DomainError)
        -> DeviceStreamEvent?
    {
        guard let known = DeviceStreamEventType.named(type) else { return nil }
        guard schemaVersion == known.schemaVersion else {
            throw .unsupportedSchemaVersion(type: type, schemaVersion: schemaVersion, newest: known.schemaVersion)
        }
        var r = PayloadReader(payload, type: type, schemaVersion: schemaVersion)
        let event: DeviceStreamEvent
        switch known {
        case .keyPublished: event = .keyPublished(try KeyPublished.read(from: &r))
        case .checkpointWitnessed: event = .checkpointWitnessed(try CheckpointWitnessed.read(from: &r))
        case .keyPinned: event = .keyPinned(try KeyPinned.read(from: &r))
        case .forkSeen: event = .forkSeen(try ForkSeen.read(from: &r))
        case .checkpointCosigned: event = .checkpointCosigned(try CheckpointCosigned.read(from: &r))
        }
        try r.finish()
        return event
    }

    /// The event a stored payload holds, or nil when it is of another type
    /// or version, or its payload does not fit its schema (the wording then
    /// says so, with the payload's size).
    public init?(_ stored: StoredPayload) {
        do {
            guard
                let event = try Self.decode(
                    type: stored.type, schemaVersion: stored.schemaVersion, payload: stored.payload)
            else { return nil }
            self = event
        } catch {
            return nil
        }
    }
}
