import Foundation
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
public struct InspectionHandedOver: Hashable, Sendable {
    public var mode: HandoverMode
    /// The name given with `--to`, or nil.
    public var to: String?

    public init(mode: HandoverMode, to: String?) {
        self.mode = mode
        self.to = to
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
/// each with its inclusion proof, and the SHA-256 of the file.
public struct InspectionReceived: Hashable, Sendable {
    public var fromDevice: UUID
    public var mode: HandoverMode
    /// The sender's signed checkpoint (C2SP signed note).
    public var checkpoint: String
    /// The sender's verifier key.
    public var publicKey: String
    public var keyRecord: CarriedRecord
    public var templateRecord: CarriedRecord
    /// The inspection's records, stream versions 1 … k of the sender's stream.
    public var records: [CarriedRecord]
    /// SHA-256 of the handover file as received.
    public var fileSHA256: Digest256

    public init(
        fromDevice: UUID, mode: HandoverMode, checkpoint: String, publicKey: String, keyRecord: CarriedRecord,
        templateRecord: CarriedRecord, records: [CarriedRecord], fileSHA256: Digest256
    ) {
        self.fromDevice = fromDevice
        self.mode = mode
        self.checkpoint = checkpoint
        self.publicKey = publicKey
        self.keyRecord = keyRecord
        self.templateRecord = templateRecord
        self.records = records
        self.fileSHA256 = fileSHA256
    }
}

/// Where an inspection went, as its `inspection.handed_over` left the state.
public struct HandOff: Hashable, Sendable {
    public var mode: HandoverMode
    public var to: String?
    public var at: Timestamp
    public var by: Actor

    /// "Dana's tablet" or "another device", for messages.
    public var destination: String { to.map { "\"\($0)\"" } ?? "another device" }
}

/// Where a received inspection came from.
public struct Reception: Hashable, Sendable {
    public var fromDevice: UUID
    public var mode: HandoverMode
    public var at: Timestamp
    public var by: Actor
    /// How many of the sender's records it carried.
    public var records: Int
}

// MARK: - Folding

extension InspectionState {
    /// Whether the inspection was handed over (mode `handover`) and this
    /// device records nothing more on it.
    public var isHandedAway: Bool { handedOver?.mode == .handover }
}

extension InspectionReceived {
    /// The carried records, decoded (those that decode).
    public var decodedRecords: [EventRecord] { records.compactMap { try? EventRecord(decoding: $0.record) } }

    /// The ids of every event the reception carries, and recursively those
    /// its carried receptions carry.
    public var carriedEventIDs: Set<UUID> { newEventIDs(besides: []) }

    /// The ids of the events the reception carries that are not in `known`:
    /// a reception already known is not opened (what it carries was folded
    /// with it).
    public func newEventIDs(besides known: Set<UUID>) -> Set<UUID> {
        var ids: Set<UUID> = []
        for record in decodedRecords where !known.contains(record.id) {
            ids.insert(record.id)
            if record.type == InspectionEventType.received.rawValue,
                case .received(let nested)? = try? InspectionEvent.decode(record)
            {
                ids.formUnion(nested.newEventIDs(besides: known))
            }
        }
        return ids
    }

    /// The template hash of the `inspection.started` among the carried
    /// records, or among what their receptions carry.
    public var startedTemplateHash: String? { Self.startedTemplateHash(in: decodedRecords) }

    /// The template hash of the `inspection.started` among `records`, or
    /// among what their receptions carry (a shared copy received and shared
    /// on carries the start inside its reception).
    public static func startedTemplateHash(in records: [EventRecord]) -> String? {
        for record in records where record.type == InspectionEventType.started.rawValue {
            if case .started(let started)? = try? EventUpcaster.decode(record, template: nil) {
                return started.templateHash
            }
        }
        for record in records where record.type == InspectionEventType.received.rawValue {
            if case .received(let nested)? = try? InspectionEvent.decode(record),
                let hash = nested.startedTemplateHash
            {
                return hash
            }
        }
        return nil
    }
}

extension InspectionEvent {
    /// The photo captures the event records: its own, or the sender's that a
    /// reception carries (whose files it stored).
    public var photoCaptures: [PhotoCaptured] {
        switch self {
        case .photoCaptured(let captured): return [captured]
        case .received(let received):
            return received.decodedRecords.compactMap { record in
                guard record.type == InspectionEventType.photoCaptured.rawValue,
                    case .photoCaptured(let captured)? = try? InspectionEvent.decode(record)
                else { return nil }
                return captured
            }
        default: return []
        }
    }
}

// MARK: - Payloads

extension CarriedRecord {
    var cbor: CBORValue {
        .textMap([
            ("position", .unsigned(position)), ("record", .bytes(record)),
            ("inclusion", .array(inclusion.map { .bytes($0.bytes) })),
        ])
    }

    var json: JSONValue {
        .object([
            .init("position", .integer(position)),
            .init("record", .string(Data(record).base64EncodedString())),
            .init("inclusion", .array(inclusion.map { .string(Data($0.bytes).base64EncodedString()) })),
        ])
    }

    static func read(_ value: CBORValue, _ key: String, _ r: PayloadReader) throws(DomainError) -> CarriedRecord {
        guard case .unsigned(let position)? = value["position"], position >= 1 else {
            throw r.malformed("\(key).position is not a position")
        }
        guard case .bytes(let record)? = value["record"] else { throw r.malformed("\(key).record is not bytes") }
        guard case .array(let hashes)? = value["inclusion"] else {
            throw r.malformed("\(key).inclusion is not an array")
        }
        var inclusion: [Digest256] = []
        for hash in hashes {
            guard case .bytes(let bytes) = hash, let digest = Digest256(bytes: bytes) else {
                throw r.malformed("\(key).inclusion holds something other than a 32-byte hash")
            }
            inclusion.append(digest)
        }
        return CarriedRecord(position: position, record: record, inclusion: inclusion)
    }
}

extension InspectionHandedOver {
    var cbor: CBORValue { .textMap([("mode", .text(mode.rawValue)), ("to", .optionalText(to))]) }

    var json: JSONValue { .object([.init("mode", .string(mode.rawValue)), .init("to", .optional(to))]) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionHandedOver {
        var mode: HandoverMode?
        var to: String??
        for _ in 0..<(try r.mapCount()) {
            switch try r.text() {
            case "mode":
                let raw = try r.text()
                guard let known = HandoverMode(rawValue: raw) else { throw r.malformed("unknown mode \"\(raw)\"") }
                mode = known
            case "to": to = .some(try r.nullableText())
            default: _ = try r.skip()
            }
        }
        return InspectionHandedOver(mode: try r.required(mode, "mode"), to: try r.required(to, "to"))
    }
}

extension InspectionReceived {
    var cbor: CBORValue {
        .textMap([
            ("from_device", .text(fromDevice.lowercased)), ("mode", .text(mode.rawValue)),
            ("checkpoint", .text(checkpoint)), ("public_key", .text(publicKey)), ("key_record", keyRecord.cbor),
            ("template_record", templateRecord.cbor), ("records", .array(records.map(\.cbor))),
            ("file_sha256", .text(fileSHA256.hex)),
        ])
    }

    var json: JSONValue {
        .object([
            .init("from_device", .string(fromDevice.lowercased)), .init("mode", .string(mode.rawValue)),
            .init("checkpoint", .string(checkpoint)), .init("public_key", .string(publicKey)),
            .init("key_record", keyRecord.json), .init("template_record", templateRecord.json),
            .init("records", .array(records.map(\.json))), .init("file_sha256", .string(fileSHA256.hex)),
        ])
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionReceived {
        let value = try r.value()
        func text(_ key: String) throws(DomainError) -> String {
            guard case .text(let text)? = value[key] else { throw r.malformed("\(key) is not a text") }
            return text
        }
        guard let fromDevice = UUID(uuidString: try text("from_device")) else {
            throw r.malformed("from_device is not a UUID")
        }
        guard let mode = HandoverMode(rawValue: try text("mode")) else { throw r.malformed("unknown mode") }
        guard let digest = Digest256(hex: try text("file_sha256")) else {
            throw r.malformed("file_sha256 is not a SHA-256 in hex")
        }
        guard let keyRecord = value["key_record"], let templateRecord = value["template_record"],
            case .array(let records)? = value["records"]
        else { throw r.malformed("key_record, template_record or records is missing") }
        var carried: [CarriedRecord] = []
        for (index, record) in records.enumerated() {
            carried.append(try CarriedRecord.read(record, "records[\(index)]", r))
        }
        return InspectionReceived(
            fromDevice: fromDevice, mode: mode, checkpoint: try text("checkpoint"), publicKey: try text("public_key"),
            keyRecord: try CarriedRecord.read(keyRecord, "key_record", r),
            templateRecord: try CarriedRecord.read(templateRecord, "template_record", r), records: carried,
            fileSHA256: digest)
    }
}
