import Foundation
import InspectionDomain
import LedgerCore

/// A handover file (`jqc-handover/1`) decoded strictly, as a proof bundle is:
/// in every object each member the format names, once, of its JSON type, and
/// nothing else (so a case variant of a name is an unknown member); base64
/// standard with padding; the first problem named by its path.
public struct HandoverFile: Sendable {
    /// A bundle entry: `{position, stream_version, type, record, inclusion}`.
    public struct Entry: Sendable {
        public var position: UInt64
        public var streamVersion: UInt64
        public var type: String
        public var record: [UInt8]
        public var inclusion: [Digest256]
        public var path: String

        public var carried: CarriedRecord { CarriedRecord(position: position, record: record, inclusion: inclusion) }
    }

    public struct Photo: Sendable {
        public var photoID: UUID
        public var sha256: Digest256
        public var position: UInt64
    }

    public var mode: HandoverMode
    public var to: String?
    public var fromDevice: UUID
    public var inspection: UUID
    public var checkpoint: String
    public var publicKey: String
    public var keyRecord: Entry
    public var records: [Entry]
    public var photos: [Photo]
    public var templateRecord: Entry
    /// `photo_files`: each one's stated hash and its bytes.
    public var photoFiles: [(sha256: Digest256, data: Data)]

    /// Why a file is not a handover file.
    public struct Unreadable: Error, CustomStringConvertible {
        public var reason: String
        public var description: String {
            "UNREADABLE: \(reason); nothing was recorded. Ask the sender for the file again ('jqc handover ID -o FILE' "
                + "writes it again)."
        }
    }

    init(
        mode: HandoverMode, to: String?, fromDevice: UUID, inspection: UUID, checkpoint: String, publicKey: String,
        keyRecord: Entry, records: [Entry], photos: [Photo], templateRecord: Entry,
        photoFiles: [(sha256: Digest256, data: Data)]
    ) {
        self.mode = mode
        self.to = to
        self.fromDevice = fromDevice
        self.inspection = inspection
        self.checkpoint = checkpoint
        self.publicKey = publicKey
        self.keyRecord = keyRecord
        self.records = records
        self.photos = photos
        self.templateRecord = templateRecord
        self.photoFiles = photoFiles
    }

    static let members = ["format", "mode", "to", "from_device", "bundle", "template_record", "photo_files"]
    static let bundleMembers = ["format", "inspection", "checkpoint", "public_key", "key_record", "records", "photos"]
    static let entryMembers = ["position", "stream_version", "type", "record", "inclusion"]

    /// Decodes `bytes` (the whole file).
    public init(decoding bytes: [UInt8]) throws(Unreadable) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: bytes)
        } catch {
            throw Unreadable(reason: "not one JSON value: \(error)")
        }
        let top = try Self.object(json, "", Self.members, optional: [])
        guard case .string("jqc-handover/1")? = top["format"] else {
            throw Unreadable(reason: "format is not \"jqc-handover/1\"")
        }
        guard let mode = HandoverMode(rawValue: try Self.string(top["mode"], "mode")) else {
            throw Unreadable(reason: "mode is neither \"handover\" nor \"share\"")
        }
        self.mode = mode
        if case .null? = top["to"] {
            to = nil
        } else {
            to = try Self.string(top["to"], "to")
        }
        fromDevice = try Self.uuid(top["from_device"], "from_device")
        let bundle = try Self.object(top["bundle"] ?? .null, "bundle", Self.bundleMembers, optional: [])
        guard case .string("jqc-proof-bundle/1")? = bundle["format"] else {
            throw Unreadable(reason: "bundle.format is not \"jqc-proof-bundle/1\"")
        }
        inspection = try Self.uuid(bundle["inspection"], "bundle.inspection")
        checkpoint = try Self.string(bundle["checkpoint"], "bundle.checkpoint")
        publicKey = try Self.string(bundle["public_key"], "bundle.public_key")
        keyRecord = try Self.entry(bundle["key_record"], "bundle.key_record")
        var records: [Entry] = []
        for (index, value) in try Self.array(bundle["records"], "bundle.records").enumerated() {
            records.append(try Self.entry(value, "bundle.records[\(index)]"))
        }
        self.records = records
        var photos: [Photo] = []
        for (index, value) in try Self.array(bundle["photos"], "bundle.photos").enumerated() {
            let path = "bundle.photos[\(index)]"
            let photo = try Self.object(value, path, ["photo_id", "sha256", "position"], optional: [])
            photos.append(
                Photo(
                    photoID: try Self.uuid(photo["photo_id"], path + ".photo_id"),
                    sha256: try Self.digest(photo["sha256"], path + ".sha256"),
                    position: try Self.count(photo["position"], path + ".position")))
        }
        self.photos = photos
        templateRecord = try Self.entry(top["template_record"], "template_record")
        var files: [(sha256: Digest256, data: Data)] = []
        for (index, value) in try Self.array(top["photo_files"], "photo_files").enumerated() {
            let path = "photo_files[\(index)]"
            let file = try Self.object(value, path, ["sha256", "data"], optional: [])
            files.append(
                (try Self.digest(file["sha256"], path + ".sha256"), Data(try Self.base64(file["data"], path + ".data")))
            )
        }
        photoFiles = files
    }

    // MARK: - Strict pieces

    static func object(_ value: JSONValue, _ path: String, _ required: [String], optional: [String])
        throws(Unreadable) -> JSONValue
    {
        guard case .object(let members) = value else { throw Unreadable(reason: "\(name(path)) is not an object") }
        for member in members where !required.contains(member.key) && !optional.contains(member.key) {
            throw Unreadable(reason: "\(name(path)) has a member \"\(member.key)\" the format does not have")
        }
        for key in required where value[key] == nil {
            throw Unreadable(reason: "\(name(path)) has no member \"\(key)\"")
        }
        return value
    }

    static func name(_ path: String) -> String { path.isEmpty ? "the file" : path }

    static func string(_ value: JSONValue?, _ path: String) throws(Unreadable) -> String {
        guard case .string(let text)? = value else { throw Unreadable(reason: "\(path) is not a string") }
        return text
    }

    static func array(_ value: JSONValue?, _ path: String) throws(Unreadable) -> [JSONValue] {
        guard case .array(let items)? = value else { throw Unreadable(reason: "\(path) is not an array") }
        return items
    }

    static func count(_ value: JSONValue?, _ path: String) throws(Unreadable) -> UInt64 {
        guard case .number(let text)? = value, text.allSatisfy(\.isASCIIDigit), !text.isEmpty,
            text == "0" || !text.hasPrefix("0"), let number = UInt64(text), number <= UInt64(Int64.max)
        else { throw Unreadable(reason: "\(path) is not a whole number from 0 to 2^63 - 1") }
        return number
    }

    static func uuid(_ value: JSONValue?, _ path: String) throws(Unreadable) -> UUID {
        let text = try string(value, path)
        guard let id = UUID(uuidString: text), id.lowercased == text else {
            throw Unreadable(reason: "\(path) is not a lower-case UUID")
        }
        return id
    }

    static func digest(_ value: JSONValue?, _ path: String) throws(Unreadable) -> Digest256 {
        let text = try string(value, path)
        guard text.count == 64, let digest = Digest256(hex: text), digest.hex == text else {
            throw Unreadable(reason: "\(path) is not a SHA-256 in lower-case hex")
        }
        return digest
    }

    static func base64(_ value: JSONValue?, _ path: String) throws(Unreadable) -> [UInt8] {
        let text = try string(value, path)
        guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else {
            throw Unreadable(reason: "\(path) is not standard base64 with padding")
        }
        return Array(data)
    }

    static func entry(_ value: JSONValue?, _ path: String) throws(Unreadable) -> Entry {
        let entry = try object(value ?? .null, path, entryMembers, optional: [])
        var inclusion: [Digest256] = []
        for (index, hash) in try array(entry["inclusion"], path + ".inclusion").enumerated() {
            let bytes = try base64(hash, path + ".inclusion[\(index)]")
            guard let digest = Digest256(bytes: bytes) else {
                throw Unreadable(reason: "\(path).inclusion[\(index)] is not a 32-byte hash")
            }
            inclusion.append(digest)
        }
        return Entry(
            position: try count(entry["position"], path + ".position"),
            streamVersion: try count(entry["stream_version"], path + ".stream_version"),
            type: try string(entry["type"], path + ".type"), record: try base64(entry["record"], path + ".record"),
            inclusion: inclusion, path: path)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
