import FoundationEssentials
import LedgerCore

// MARK: - The events of a handover

/// Whether the sending device keeps the right to record (`share`) or gives
/// it up (`handover`).
public enum HandoverMode: String, CaseIterable, Hashable, Sendable {
    case handover
    case share
}

/// `inspection.handed_over`: this device wrote a handover file of the
/// inspection. With mode `handover` it records nothing more on it and its
/// sync leaves it out; the record itself is the last one the file carries,
/// so the handover is signed with the rest.
///
/// Version 2 adds `to_device`: the recipient's device id when `--to` named a
/// device, binding a plain handover to that device (any other device that
/// receives the file gets a read-only copy); version 1 (`{mode, to}`) is read
/// in place, unbound.
public struct InspectionHandedOver: Hashable, Sendable {
    public var mode: HandoverMode
    /// The name given with `--to` (the device id, lower case, when it named
    /// a device), or nil.
    public var to: String?
    /// The device the file is bound to, or nil (unbound: a name, or none).
    public var toDevice: UUID?

    public init(mode: HandoverMode, to: String?, toDevice: UUID? = nil) {
        self.mode = mode
        self.to = to
        self.toDevice = toDevice
    }
}

/// One record of another device's log, carried as that device wrote it: its
/// CBOR bytes (what its leaf hashes), its position in that device's log and
/// its inclusion proof in the tree of the carried checkpoint.
public struct CarriedRecord: Hashable, Sendable {
    public var position: UInt64
    public var record: [UInt8]
    public var inclusion: [Digest256]

    public init(position: UInt64, record: [UInt8], inclusion: [Digest256]) {
        self.position = position
        self.record = record
        self.inclusion = inclusion
    }
}

/// `inspection.received`: this device took the inspection over from a
/// handover file. The payload keeps everything needed to verify the sender's
/// part again, as the sender's: its signed checkpoint, its public key and key
/// record, the template record and every record of the stream it carried,
/// each by its leaf hash with its inclusion proof, and the SHA-256 of the
/// file. Version 2 carries the records by reference (their bytes are in
/// `carried`, beside the payload); version 1 embedded them and is still read.
/// Version 3 references only the records new to this receiver: versions
/// s … k of the sender's stream, `continues` naming version s − 1 as held
/// here (by an earlier reception of that device in this stream), so each
/// exchange records about what was recorded since, never the whole stream
/// again (`Schemas/ledger-format.md` § Handover files, the receiver's record).
public struct InspectionReceived: Hashable, Sendable {
    /// The version of the sender's stream a version-3 reception continues:
    /// the highest an earlier reception of that device referenced, and that
    /// record's leaf hash, which the first record's back-link (key 13) must be.
    public struct Continuation: Hashable, Sendable {
        public var streamVersion: UInt64
        public var leaf: Digest256

        public init(streamVersion: UInt64, leaf: Digest256) {
            self.streamVersion = streamVersion
            self.leaf = leaf
        }
    }

    public var fromDevice: UUID
    public var mode: HandoverMode
    /// The sender's signed checkpoint (C2SP signed note).
    public var checkpoint: String
    /// The sender's verifier key.
    public var publicKey: String
    public var keyRecord: CarriedRecord
    public var templateRecord: CarriedRecord
    /// The inspection's records: stream versions 1 … k of the sender's
    /// stream, or (version 3, `continues` set) versions s … k.
    public var records: [CarriedReference]
    /// Nil: `records` start at version 1. Else the held version s − 1 they
    /// continue (version 3 only).
    public var continues: Continuation? = nil
    /// SHA-256 of the handover file as received.
    public var fileSHA256: Digest256
    /// The bytes the references resolve to, at every depth: not part of the
    /// payload (equality and hashing leave it out), attached by whoever read
    /// it (the store from its `carried` table, a file from `carried_records`;
    /// a version-1 payload brings its own).
    public var carried: CarriedRecords

    public init(
        fromDevice: UUID, mode: HandoverMode, checkpoint: String, publicKey: String, keyRecord: CarriedRecord,
        templateRecord: CarriedRecord, records: [CarriedReference], fileSHA256: Digest256,
        carried: CarriedRecords = CarriedRecords()
    ) {
        self.fromDevice = fromDevice
        self.mode = mode
        self.checkpoint = checkpoint
        self.publicKey = publicKey
        self.keyRecord = keyRecord
        self.templateRecord = templateRecord
        self.records = records
        self.fileSHA256 = fileSHA256
        self.carried = carried
    }

    /// A reception of `records` (their bytes, kept in `carried` with
    /// `closure`, the bytes what they reference needs).
    public init(
        fromDevice: UUID, mode: HandoverMode, checkpoint: String, publicKey: String, keyRecord: CarriedRecord,
        templateRecord: CarriedRecord, carrying records: [CarriedRecord], fileSHA256: Digest256,
        closure: CarriedRecords = CarriedRecords()
    ) {
        var carried = closure
        let references = records.map {
            CarriedReference(position: $0.position, leaf: carried.insert($0.record), inclusion: $0.inclusion)
        }
        self.init(
            fromDevice: fromDevice, mode: mode, checkpoint: checkpoint, publicKey: publicKey, keyRecord: keyRecord,
            templateRecord: templateRecord, records: references, fileSHA256: fileSHA256, carried: carried)
    }

    public static func == (a: InspectionReceived, b: InspectionReceived) -> Bool {
        a.fromDevice == b.fromDevice && a.mode == b.mode && a.checkpoint == b.checkpoint
            && a.publicKey == b.publicKey && a.keyRecord == b.keyRecord && a.templateRecord == b.templateRecord
            && a.records == b.records && a.fileSHA256 == b.fileSHA256 && a.continues == b.continues
    }

    /// The sender's stream version of `records[0]`: 1, or one past `continues`.
    public var firstVersion: UInt64 { (continues?.streamVersion ?? 0) + 1 }

    /// The reception as version 3 records it: only versions `from` … k of
    /// the sender's stream, continuing version `from` − 1 (its leaf as held
    /// here). `records` must be versions 1 … k (a handover file's, in order).
    public func continuing(from version: UInt64, leaf: Digest256) -> InspectionReceived {
        guard version > 1, version <= UInt64(records.count) else { return self }
        var trimmed = self
        trimmed.records = Array(records[Int(version - 1)...])
        trimmed.continues = Continuation(streamVersion: version - 1, leaf: leaf)
        return trimmed
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(fromDevice)
        hasher.combine(checkpoint)
        hasher.combine(records)
        hasher.combine(fileSHA256)
    }
}

/// Where an inspection went, as its `inspection.handed_over` left the state.
public struct HandOff: Hashable, Sendable {
    public var mode: HandoverMode
    public var to: String?
    public var at: Timestamp
    public var by: Actor
    /// The device the handover is bound to (`--to DEVICE`), or nil.
    public var toDevice: UUID? = nil

    /// "device 0190…", "Dana's tablet" or "another device", for messages.
    public var destination: String {
        if let toDevice { return "device \(toDevice.lowercased)" }
        return to.map { "\"\($0)\"" } ?? "another device"
    }
}

/// Where a received inspection came from.
public struct ReceptionOrigin: Hashable, Sendable {
    public var fromDevice: UUID
    public var mode: HandoverMode
    public var at: Timestamp
    public var by: Actor
    /// How many of the sender's records it carried (with the earlier
    /// receptions a version-3 one continues: the sender's stream version k).
    public var records: Int
    /// The device a plain handover it carried was bound to (`to_device` of
    /// the sender's `inspection.handed_over`, its last record), or nil.
    public var addressedTo: UUID? = nil
}

// MARK: - Folding

extension InspectionState {
    /// Whether the inspection was handed over (mode `handover`) and this
    /// device records nothing more on it.
    public var isHandedAway: Bool { handedOver?.mode == .handover }

    /// The device a plain handover was bound to when this device holds only
    /// a read-only copy of it: its latest reception is a handover addressed
    /// to another device (`docs/domain.md` § Sharing and merging, ownership).
    /// Nil when this device may record.
    public var readOnlyCopyOf: UUID? {
        guard let last = receivedFrom.last, last.mode == .handover, let bound = last.addressedTo,
            let device, bound != device
        else { return nil }
        return bound
    }
}

extension InspectionReceived {
    // The walks of nested receptions (`newEventIDs`, `startedRecord`,
    // `startedTemplateHash`) are in `CarriedRecords.swift`, bounded there.

    /// The device the sender's plain handover is bound to: `to_device` of its
    /// `inspection.handed_over`, the last carried record (verified so by the
    /// reception), or nil (a share, an unbound handover, a version-1 record).
    /// Read by the fold, which is total: a last record that does not resolve
    /// or decode binds nothing (the reception verified it before recording).
    public var addressedTo: UUID? {
        guard mode == .handover, let last = records.last, let bytes = carried.record(last.leaf) else { return nil }
        do {
            let record = try EventRecord(decoding: bytes)
            guard record.type == InspectionEventType.handedOver.rawValue,
                case .handedOver(let handed) = try EventUpcaster.decode(record, template: nil)
            else { return nil }
            return handed.toDevice
        } catch {
            return nil
        }
    }

    /// The photo captures among the carried records (those whose files the
    /// reception stored).
    public func photoCaptures() throws -> [(record: EventRecord, captured: PhotoCaptured)] {
        var found: [(record: EventRecord, captured: PhotoCaptured)] = []
        for record in try resolvedRecords() where record.type == InspectionEventType.photoCaptured.rawValue {
            if case .photoCaptured(let captured) = try event(of: record, template: nil) {
                found.append((record, captured))
            }
        }
        return found
    }
}

extension InspectionReceived {
    /// Every photo capture the reception carries at any depth: its sender's,
    /// and those of every reception among its records (recursively), each
    /// reception opened once however many reach it (by its leaf), walked
    /// with a stack rather than recursion so no file drives it deeper. These
    /// are the photo files a handover file carries (`photo_files` and
    /// `carried_photo_files`) and the photo store must hold.
    public func photoCapturesAtAnyDepth() throws -> [(record: EventRecord, captured: PhotoCaptured)] {
        var opened: Set<Digest256> = []
        return try photoCapturesAtAnyDepth(opened: &opened)
    }

    /// `photoCapturesAtAnyDepth()` over several receptions of one stream:
    /// `opened` holds the leaves of the nested receptions walked already (by
    /// an earlier reception of the same stream, which later ones carry
    /// again), so each is walked once for all of them.
    public func photoCapturesAtAnyDepth(opened: inout Set<Digest256>) throws -> [(
        record: EventRecord, captured: PhotoCaptured
    )] {
        var found: [(record: EventRecord, captured: PhotoCaptured)] = []
        var pending = [self]
        while let reception = pending.popLast() {
            for reference in reception.records {
                guard let bytes = reception.carried.record(reference.leaf) else {
                    throw CarriedRecordsError.missing(
                        leaf: reference.leaf, referencedBy: "the reception from \(reception.fromDevice.lowercased)")
                }
                let record: EventRecord
                do {
                    record = try EventRecord(decoding: bytes)
                } catch {
                    throw CarriedRecordsError.unreadable(leaf: reference.leaf, reason: "\(error)")
                }
                switch record.type {
                case InspectionEventType.photoCaptured.rawValue:
                    if case .photoCaptured(let captured) = try reception.event(of: record, template: nil) {
                        found.append((record, captured))
                    }
                case InspectionEventType.received.rawValue where opened.insert(reference.leaf).inserted:
                    if case .received(let nested) = try reception.event(of: record, template: nil) {
                        pending.append(nested)
                    }
                default: break
                }
            }
        }
        return found
    }
}

extension InspectionEvent {
    /// The photo captures the event records: its own, or those a reception
    /// carries at any depth (whose files it stored).
    public func photoCaptures() throws -> [PhotoCaptured] {
        switch self {
        case .photoCaptured(let captured): return [captured]
        case .received(let received): return try received.photoCapturesAtAnyDepth().map(\.captured)
        default: return []
        }
    }
}

// MARK: - Payloads

// Each payload map's keys are its `Key` enum (the handover's, the
// reception's, a carried record's, a carried reference's, a continuation's),
// which its CBOR, its JSON, its decoder and its messages share, as for every
// other event (`InspectionEvent+CBOR.swift`). The decoders walk the bytes
// with `PayloadReader`, checking each value's type where it is read and
// naming the path of the one that fails (`records[3].leaf`).

extension HandoverMode {
    static func read(from r: inout PayloadReader) throws(DomainError) -> HandoverMode {
        let raw = try r.text()
        guard let known = HandoverMode(rawValue: raw) else { throw r.malformed("unknown mode \"\(raw)\"") }
        return known
    }
}

extension PayloadReader {
    /// A log position (counted from 1) at `path`.
    mutating func position(at path: String) throws(DomainError) -> UInt64 {
        let position: UInt64
        do { position = try reader.readUnsigned() } catch { throw malformed("\(path) is not a position: \(error)") }
        guard position >= 1 else { throw malformed("\(path) is not a position: 0 (positions count from 1)") }
        return position
    }

    /// A byte string at `path`.
    mutating func byteString(at path: String) throws(DomainError) -> [UInt8] {
        do { return try reader.readBytes() } catch { throw malformed("\(path) is not bytes: \(error)") }
    }

    /// A 32-byte hash as bytes at `path`.
    mutating func hash(at path: String) throws(DomainError) -> Digest256 {
        let bytes = try byteString(at: path)
        guard let digest = Digest256(bytes: bytes) else {
            throw malformed("\(path) is not a 32-byte hash: it holds \(bytes.count) bytes")
        }
        return digest
    }

    /// An inclusion proof (an array of 32-byte hashes) at `path`.
    mutating func inclusion(at path: String) throws(DomainError) -> [Digest256] {
        let count: Int
        do { count = try reader.readArrayHeader() } catch { throw malformed("\(path) is not an array: \(error)") }
        var hashes: [Digest256] = []
        hashes.reserveCapacity(count)
        for index in 0..<count { hashes.append(try hash(at: "\(path)[\(index)]")) }
        return hashes
    }

    /// The value of `key` of the map at `path`, which must be present.
    func required<T, Key: PayloadKey>(_ value: T?, _ key: Key, in path: String) throws(DomainError) -> T {
        guard let value else { throw malformed("the key \"\(path).\(key.rawValue)\" is missing") }
        return value
    }
}

extension CarriedRecord {
    enum Key: String, PayloadKey {
        case position, record, inclusion
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        Key.map([
            (.position, .unsigned(position)), (.record, .bytes(record)),
            (.inclusion, .array(inclusion.map { .bytes($0.bytes) })),
        ])
    }

    var json: JSONValue {
        Key.object([
            (.position, .integer(position)), (.record, .string(Data(record).base64EncodedString())),
            (.inclusion, .array(inclusion.map { .string(Data($0.bytes).base64EncodedString()) })),
        ])
    }

    /// Reads the map at `path` (`key_record`, `records[3]`, ...).
    static func read(from r: inout PayloadReader, at path: String) throws(DomainError) -> CarriedRecord {
        var position: UInt64?
        var record: [UInt8]?
        var inclusion: [Digest256]?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .position?: position = try r.position(at: "\(path).\(Key.position.rawValue)")
            case .record?: record = try r.byteString(at: "\(path).\(Key.record.rawValue)")
            case .inclusion?: inclusion = try r.inclusion(at: "\(path).\(Key.inclusion.rawValue)")
            case nil: try r.skip()
            }
        }
        return CarriedRecord(
            position: try r.required(position, Key.position, in: path),
            record: try r.required(record, Key.record, in: path),
            inclusion: try r.required(inclusion, Key.inclusion, in: path))
    }
}

extension InspectionHandedOver {
    enum Key: String, PayloadKey {
        case mode, to, toDevice = "to_device"
        static let encodedKeys = encode()
    }

    /// Version 2: `to_device` always written (null when unbound).
    var cbor: CBORValue {
        Key.map([
            (.mode, .text(mode.rawValue)), (.to, .optionalText(to)), (.toDevice, .optionalText(toDevice?.lowercased)),
        ])
    }

    var json: JSONValue {
        Key.object([
            (.mode, .string(mode.rawValue)), (.to, .optional(to)), (.toDevice, .optional(toDevice?.lowercased)),
        ])
    }

    /// Reads version 2, or version 1 in place (no `to_device`: unbound).
    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionHandedOver {
        var mode: HandoverMode?
        var to: String??
        var toDevice: UUID?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .mode?: mode = try HandoverMode.read(from: &r)
            case .to?: to = .some(try r.nullableText())
            case .toDevice? where r.schemaVersion >= 2: toDevice = try r.nullableUUID(Key.toDevice)
            case .toDevice?, nil: try r.skip()
            }
        }
        return InspectionHandedOver(
            mode: try r.required(mode, Key.mode), to: try r.required(to, Key.to), toDevice: toDevice)
    }
}

extension CarriedReference {
    enum Key: String, PayloadKey {
        case position, leaf, inclusion
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        Key.map([
            (.position, .unsigned(position)), (.leaf, .bytes(leaf.bytes)),
            (.inclusion, .array(inclusion.map { .bytes($0.bytes) })),
        ])
    }

    var json: JSONValue {
        Key.object([
            (.position, .integer(position)), (.leaf, .string(leaf.hex)),
            (.inclusion, .array(inclusion.map { .string(Data($0.bytes).base64EncodedString()) })),
        ])
    }

    /// Reads the map at `path` (`records[3]`).
    static func read(from r: inout PayloadReader, at path: String) throws(DomainError) -> CarriedReference {
        var position: UInt64?
        var leaf: Digest256?
        var inclusion: [Digest256]?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .position?: position = try r.position(at: "\(path).\(Key.position.rawValue)")
            case .leaf?: leaf = try r.hash(at: "\(path).\(Key.leaf.rawValue)")
            case .inclusion?: inclusion = try r.inclusion(at: "\(path).\(Key.inclusion.rawValue)")
            case nil: try r.skip()
            }
        }
        return CarriedReference(
            position: try r.required(position, Key.position, in: path),
            leaf: try r.required(leaf, Key.leaf, in: path),
            inclusion: try r.required(inclusion, Key.inclusion, in: path))
    }
}

extension InspectionReceived.Continuation {
    enum Key: String, PayloadKey {
        case streamVersion = "stream_version", leaf
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map([(.leaf, .bytes(leaf.bytes)), (.streamVersion, .unsigned(streamVersion))]) }

    var json: JSONValue { Key.object([(.streamVersion, .integer(streamVersion)), (.leaf, .string(leaf.hex))]) }

    /// Reads `continues`: null, or `{stream_version, leaf}`.
    static func read(from r: inout PayloadReader) throws(DomainError) -> Self? {
        guard !(try r.isNull()) else { return nil }
        let path = InspectionReceived.Key.continues.rawValue
        var version: UInt64?
        var leaf: Digest256?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .streamVersion?: version = try r.position(at: "\(path).\(Key.streamVersion.rawValue)")
            case .leaf?: leaf = try r.hash(at: "\(path).\(Key.leaf.rawValue)")
            case nil: try r.skip()
            }
        }
        return Self(
            streamVersion: try r.required(version, Key.streamVersion, in: path),
            leaf: try r.required(leaf, Key.leaf, in: path))
    }
}

extension InspectionReceived {
    enum Key: String, PayloadKey {
        case fromDevice = "from_device", mode, checkpoint, publicKey = "public_key", keyRecord = "key_record"
        case templateRecord = "template_record", records, continues, fileSHA256 = "file_sha256"
        static let encodedKeys = encode()
    }

    /// Version 3: the records by reference (`CarriedReference`), and
    /// `continues` (null, or `{stream_version, leaf}`).
    var cbor: CBORValue {
        Key.map([
            (.fromDevice, .text(fromDevice.lowercased)), (.mode, .text(mode.rawValue)),
            (.checkpoint, .text(checkpoint)), (.publicKey, .text(publicKey)), (.keyRecord, keyRecord.cbor),
            (.templateRecord, templateRecord.cbor), (.records, .array(records.map(\.cbor))),
            (.continues, continues?.cbor ?? .null), (.fileSHA256, .text(fileSHA256.hex)),
        ])
    }

    var json: JSONValue {
        Key.object([
            (.fromDevice, .string(fromDevice.lowercased)), (.mode, .string(mode.rawValue)),
            (.checkpoint, .string(checkpoint)), (.publicKey, .string(publicKey)),
            (.keyRecord, keyRecord.json), (.templateRecord, templateRecord.json),
            (.records, .array(records.map(\.json))), (.continues, continues?.json ?? .null),
            (.fileSHA256, .string(fileSHA256.hex)),
        ])
    }

    /// Reads version 3, 2 (no `continues`: the records start at version 1),
    /// or 1 (each record's bytes embedded: they are kept in `carried` under
    /// their leaves, so every version reads alike).
    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionReceived {
        var fromDevice: UUID?
        var mode: HandoverMode?
        var checkpoint: String?
        var publicKey: String?
        var keyRecord: CarriedRecord?
        var templateRecord: CarriedRecord?
        var records: [CarriedReference]?
        var continues: Continuation??
        var fileSHA256: Digest256?
        var carried = CarriedRecords()
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .fromDevice?: fromDevice = try r.uuid(Key.fromDevice)
            case .mode?: mode = try HandoverMode.read(from: &r)
            case .checkpoint?: checkpoint = try r.text()
            case .publicKey?: publicKey = try r.text()
            case .keyRecord?: keyRecord = try CarriedRecord.read(from: &r, at: Key.keyRecord.rawValue)
            case .templateRecord?: templateRecord = try CarriedRecord.read(from: &r, at: Key.templateRecord.rawValue)
            case .records?: records = try readRecords(from: &r, into: &carried)
            case .continues? where r.schemaVersion >= 3: continues = .some(try Continuation.read(from: &r))
            case .fileSHA256?: fileSHA256 = try r.digest(Key.fileSHA256)
            case .continues?, nil: try r.skip()
            }
        }
        var received = InspectionReceived(
            fromDevice: try r.required(fromDevice, Key.fromDevice), mode: try r.required(mode, Key.mode),
            checkpoint: try r.required(checkpoint, Key.checkpoint), publicKey: try r.required(publicKey, Key.publicKey),
            keyRecord: try r.required(keyRecord, Key.keyRecord),
            templateRecord: try r.required(templateRecord, Key.templateRecord),
            records: try r.required(records, Key.records), fileSHA256: try r.required(fileSHA256, Key.fileSHA256),
            carried: carried)
        // Version 3 always writes `continues` (null when the records start at 1).
        if r.schemaVersion >= 3 { received.continues = try r.required(continues, Key.continues) }
        return received
    }

    /// `records`: references (version 2 on), or the records themselves
    /// (version 1), whose bytes go into `carried`.
    static func readRecords(from r: inout PayloadReader, into carried: inout CarriedRecords) throws(DomainError)
        -> [CarriedReference]
    {
        let count: Int
        do { count = try r.reader.readArrayHeader() } catch {
            throw r.malformed("\(Key.records.rawValue) is not an array: \(error)")
        }
        var references: [CarriedReference] = []
        references.reserveCapacity(count)
        for index in 0..<count {
            let path = "\(Key.records.rawValue)[\(index)]"
            if r.schemaVersion == 1 {
                let embedded = try CarriedRecord.read(from: &r, at: path)
                references.append(
                    CarriedReference(
                        position: embedded.position, leaf: carried.insert(embedded.record),
                        inclusion: embedded.inclusion))
            } else {
                references.append(try CarriedReference.read(from: &r, at: path))
            }
        }
        return references
    }
}
