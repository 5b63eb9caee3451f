import Foundation
import InspectionDomain
import LedgerCore

/// A handover file (`jqc-handover/1`) decoded strictly, as a proof bundle is
/// and by the same reader (`StrictJSON`, `Bundle`): in every object each
/// member the format names, once, of its JSON type, and nothing else (a
/// repeated name, or one differing only in case, named as such); base64
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

    /// The proof bundle the file carries, as read (its strings unchanged):
    /// what `BundleCheck` checks, exactly as for a bundle file.
    var bundle: Bundle

    /// A file's pieces (an audit rebuilds one from a reception's payload):
    /// the bundle is made from them, as `jqc handover` writes it.
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
        bundle = Bundle(
            path: "bundle", inspection: inspection.lowercased, checkpoint: checkpoint, publicKey: publicKey,
            keyRecord: keyRecord.bundleEntry, records: records.map(\.bundleEntry),
            photos: photos.map {
                Bundle.Photo(photoID: $0.photoID.lowercased, sha256: $0.sha256.hex, position: $0.position)
            },
            consistency: nil)
    }

    static let members = ["format", "mode", "to", "from_device", "bundle", "template_record", "photo_files"]
    static let format = "jqc-handover/1"

    /// Decodes `bytes` (the whole file): the JSON as a bundle's is read
    /// (`StrictJSON`), the `bundle` member exactly as a bundle file
    /// (`Bundle`), then what a handover file adds: lower-case UUIDs and hex,
    /// base64 standard with padding and decoding to what it names.
    public init(decoding bytes: [UInt8]) throws(Unreadable) {
        do {
            try self.init(strict: StrictJSON.read(bytes, what: "the file"))
        } catch {
            throw Unreadable(reason: error.verdict)
        }
    }

    init(strict json: JSONValue) throws(BundleUnreadable) {
        if case .object(let members) = json {
            try StrictJSON.checkNames(members, "the file")
            if let format = members.first(where: { $0.key == "format" })?.value {
                guard case .string(let text) = format else { throw BundleUnreadable("format must be a string") }
                guard text == Self.format else {
                    throw BundleUnreadable("the file's format is \"\(BundleCheck.shown(text))\", not \(Self.format)")
                }
            }
        }
        let top = try StrictObject(json, Self.members, at: "", root: "the file")
        _ = try top.string("format")
        guard let mode = HandoverMode(rawValue: try top.string("mode")) else {
            throw BundleUnreadable("mode is neither \"handover\" nor \"share\"")
        }
        self.mode = mode
        if case .null = top.value("to") {
            to = nil
        } else {
            to = try top.string("to")
        }
        fromDevice = try Self.uuid(try top.string("from_device"), "from_device")
        let bundle = try Bundle(top.value("bundle"), at: "bundle", carriesConsistency: false)
        self.bundle = bundle
        inspection = try Self.uuid(bundle.inspection, bundle.at("inspection"))
        checkpoint = bundle.checkpoint
        publicKey = bundle.publicKey
        keyRecord = try Self.entry(bundle.keyRecord)
        var records: [Entry] = []
        for entry in bundle.records { records.append(try Self.entry(entry)) }
        self.records = records
        var photos: [Photo] = []
        for (index, photo) in bundle.photos.enumerated() {
            let path = "\(bundle.at("photos"))[\(index)]"
            photos.append(
                Photo(
                    photoID: try Self.uuid(photo.photoID, path + ".photo_id"),
                    sha256: try Self.digest(photo.sha256, path + ".sha256"), position: photo.position))
        }
        self.photos = photos
        templateRecord = try Self.entry(try Bundle.entry(top.value("template_record"), "template_record"))
        var files: [(sha256: Digest256, data: Data)] = []
        for (index, value) in try top.array("photo_files").enumerated() {
            let file = try StrictObject(value, ["sha256", "data"], at: "photo_files[\(index)]", root: "")
            files.append(
                (
                    try Self.digest(try file.string("sha256"), file.at("sha256")),
                    Data(try Self.base64(try file.string("data"), file.at("data")))
                ))
        }
        photoFiles = files
    }

    // MARK: - What a handover file adds to a bundle's strictness

    static func uuid(_ text: String, _ path: String) throws(BundleUnreadable) -> UUID {
        guard let id = UUID(uuidString: text), id.lowercased == text else {
            throw BundleUnreadable("\(path) is not a lower-case UUID")
        }
        return id
    }

    static func digest(_ text: String, _ path: String) throws(BundleUnreadable) -> Digest256 {
        guard text.utf8.count == 64, let digest = Digest256(hex: text), digest.hex == text else {
            throw BundleUnreadable("\(path) is not a SHA-256 in lower-case hex")
        }
        return digest
    }

    static func base64(_ text: String, _ path: String) throws(BundleUnreadable) -> [UInt8] {
        guard let data = StrictBase64.decode(text), Data(data).base64EncodedString() == text else {
            throw BundleUnreadable("\(path) is not standard base64 with padding")
        }
        return data
    }

    static func entry(_ entry: Bundle.Entry) throws(BundleUnreadable) -> Entry {
        var inclusion: [Digest256] = []
        for (index, hash) in entry.inclusion.enumerated() {
            let path = "\(entry.path).inclusion[\(index)]"
            guard let digest = Digest256(bytes: try base64(hash, path)) else {
                throw BundleUnreadable("\(path) is not a 32-byte hash")
            }
            inclusion.append(digest)
        }
        return Entry(
            position: entry.position, streamVersion: entry.streamVersion, type: entry.type,
            record: try base64(entry.record, "\(entry.path).record"), inclusion: inclusion, path: entry.path)
    }
}

extension HandoverFile.Entry {
    /// The entry as a bundle holds it.
    var bundleEntry: Bundle.Entry {
        Bundle.Entry(
            position: position, streamVersion: streamVersion, type: type,
            record: Data(record).base64EncodedString(),
            inclusion: inclusion.map { Data($0.bytes).base64EncodedString() },
            path: path)
    }
}
