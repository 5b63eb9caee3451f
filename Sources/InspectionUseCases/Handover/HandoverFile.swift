import Foundation
import InspectionDomain
import LedgerCore

/// A handover file (`jqc-handover/3`, or `/2`, `/1` as older jqc wrote them) decoded strictly, as a proof bundle is
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
    /// `to_device` (`/3`): the device a plain handover is bound to, or nil.
    public var toDevice: UUID?
    public var fromDevice: UUID
    public var inspection: UUID
    public var checkpoint: String
    public var publicKey: String
    public var keyRecord: Entry
    public var records: [Entry]
    public var photos: [Photo]
    public var templateRecord: Entry
    /// `photo_files`: each one's stated hash and its bytes.
    public var photoFiles: [(sha256: Digest256, data: PhotoBytes)]
    /// `carried_records` (`/2`): the bytes of every record the receptions
    /// among `records` carry by reference, at any depth, each once.
    public var carriedRecords = CarriedRecords()
    /// `carried_photo_files` (`/3`): the files of the photos carried records
    /// name at any depth that `photo_files` does not hold, each once, sorted
    /// by hash (their bytes hashing to it; which ones are due is
    /// `HandoverVerification`'s check 2).
    public var carriedPhotoFiles: [(sha256: Digest256, data: PhotoBytes)] = []
    /// The format read: 1, 2 or 3.
    public var formatVersion = 3

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
        photoFiles: [(sha256: Digest256, data: PhotoBytes)], carriedRecords: CarriedRecords = CarriedRecords()
    ) {
        self.carriedRecords = carriedRecords
        toDevice = nil
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
    /// The format `jqc handover` writes; `/2` (no `to_device`, no
    /// `carried_photo_files`) and `/1` (neither, nor `carried_records`, every
    /// reception embedding what it carried) are still read.
    static let format = "jqc-handover/3"
    static let formats = ["jqc-handover/1", "jqc-handover/2", format]

    /// Decodes `bytes` (the whole file): the JSON as a bundle's is read
    /// (`StrictJSON`), the `bundle` member exactly as a bundle file
    /// (`Bundle`), then what a handover file adds: lower-case UUIDs and hex,
    /// base64 standard with padding and decoding to what it names.
    public init(decoding bytes: [UInt8]) throws(Unreadable) {
        try self.init(decoding: bytes, staged: [:])
    }

    /// Decodes a file read by `HandoverFileReader`: `document` is its text
    /// with the base64 of each photo in `staged` left out (an empty string),
    /// its bytes in the staging file instead, judged as the text would be.
    init(decoding document: [UInt8], staged: [String: StagedPhotoFile]) throws(Unreadable) {
        do {
            try self.init(strict: StrictJSON.read(document, what: "the file"), staged: staged)
        } catch {
            throw Unreadable(reason: error.verdict)
        }
    }

    init(strict json: JSONValue, staged: [String: StagedPhotoFile] = [:]) throws(BundleUnreadable) {
        let version = try Self.formatVersion(of: json)
        formatVersion = version
        let top = try StrictObject(
            json,
            Self.members + (version >= 2 ? ["carried_records"] : [])
                + (version >= 3 ? ["to_device", "carried_photo_files"] : []), at: "", root: "the file")
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
        if version < 3 {
            toDevice = nil
        } else if case .null = top.value("to_device") {
            toDevice = nil
        } else {
            toDevice = try Self.uuid(try top.string("to_device"), "to_device")
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
        photoFiles = try Self.photoFiles(try top.array("photo_files"), staged: staged)
        carriedRecords = try Self.carried(version >= 2 ? try top.array("carried_records") : nil, records: records)
        carriedPhotoFiles = try Self.carriedPhotos(
            version >= 3 ? try top.array("carried_photo_files") : [], staged: staged)
    }

    /// The format a file names (1, 2 or 3; 1 when it names none, as the
    /// first format had no member for it), its top-level names checked first.
    static func formatVersion(of json: JSONValue) throws(BundleUnreadable) -> Int {
        guard case .object(let members) = json else { return 1 }
        try StrictJSON.checkNames(members, "the file")
        guard let format = members.first(where: { $0.key == "format" })?.value else { return 1 }
        guard case .string(let text) = format else { throw BundleUnreadable("format must be a string") }
        guard let index = Self.formats.firstIndex(of: text) else {
            throw BundleUnreadable(
                "the file's format is \"\(BundleCheck.shown(text))\", not "
                    + "\(Self.formats.dropLast().joined(separator: ", ")) or \(Self.format)")
        }
        return index + 1
    }

    /// `photo_files`, strictly: each `{sha256, data}`, in the order of the
    /// bundle's photos (whose files they are is `HandoverVerification`'s check 2).
    static func photoFiles(_ entries: [JSONValue], staged: [String: StagedPhotoFile]) throws(BundleUnreadable)
        -> [(sha256: Digest256, data: PhotoBytes)]
    {
        var files: [(sha256: Digest256, data: PhotoBytes)] = []
        for (index, value) in entries.enumerated() {
            let file = try StrictObject(value, ["sha256", "data"], at: "photo_files[\(index)]", root: "")
            files.append(
                (
                    try digest(try file.string("sha256"), file.at("sha256")),
                    try photoBytes(file, staged: staged[file.path])
                ))
        }
        return files
    }

    /// An entry's `data`: the staged file the reader decoded it into, or
    /// the base64 the document holds.
    static func photoBytes(_ entry: StrictObject, staged: StagedPhotoFile?) throws(BundleUnreadable) -> PhotoBytes {
        let text = try entry.string("data")
        guard let staged else { return .inMemory(Data(try base64(text, entry.at("data")))) }
        guard staged.isStandardBase64 else {
            throw BundleUnreadable("\(entry.at("data")) is not standard base64 with padding")
        }
        return .staged(staged)
    }

    /// `carried_photo_files`, strictly: each `{sha256, data}` once, sorted by
    /// `sha256`, its bytes hashing to it. Whether they are exactly the files
    /// the carried records name is check 2 of `HandoverVerification`.
    static func carriedPhotos(_ entries: [JSONValue], staged: [String: StagedPhotoFile]) throws(BundleUnreadable)
        -> [(sha256: Digest256, data: PhotoBytes)]
    {
        var files: [(sha256: Digest256, data: PhotoBytes)] = []
        var previous: String?
        let hasher = SHA256Hasher()
        for (index, value) in entries.enumerated() {
            let path = "carried_photo_files[\(index)]"
            let file = try StrictObject(value, ["sha256", "data"], at: path, root: "")
            let hashText = try file.string("sha256")
            let sha256 = try digest(hashText, file.at("sha256"))
            if let previous, hashText <= previous {
                throw BundleUnreadable(
                    hashText == previous
                        ? "\(path) repeats the photo file \(hashText)"
                        : "\(path) is out of order (the entries are sorted by sha256)")
            }
            previous = hashText
            let data = try photoBytes(file, staged: staged[path])
            guard data.sha256(hasher) == sha256 else {
                throw BundleUnreadable("\(path).data does not hash to its sha256 \(hashText)")
            }
            files.append((sha256, data))
        }
        return files
    }

    /// `carried_records`, strictly: each `{leaf, record}` once, sorted by
    /// leaf, its bytes hashing to it, and exactly the closure of what the
    /// version-2 receptions among `records` reference, at any depth (none in
    /// a `/1` file, where receptions embed their records).
    static func carried(_ entries: [JSONValue]?, records: [Entry]) throws(BundleUnreadable) -> CarriedRecords {
        var given = CarriedRecords()
        var previous: String?
        for (index, value) in (entries ?? []).enumerated() {
            let item = try StrictObject(value, ["leaf", "record"], at: "carried_records[\(index)]", root: "")
            let leafText = try item.string("leaf")
            let leaf = try digest(leafText, item.at("leaf"))
            if let previous, leafText <= previous {
                throw BundleUnreadable(
                    leafText == previous
                        ? "carried_records[\(index)] repeats leaf \(leafText)"
                        : "carried_records[\(index)] is out of order (the entries are sorted by leaf)")
            }
            previous = leafText
            let bytes = try base64(try item.string("record"), item.at("record"))
            guard given.insert(bytes) == leaf else {
                throw BundleUnreadable("carried_records[\(index)].record does not hash to its leaf \(leafText)")
            }
        }
        var referenced: [Digest256] = []
        for entry in records {
            // A record that does not read is refused by the verification,
            // named by its path, as any damaged record of a bundle.
            guard let decoded = try? EventRecord(decoding: entry.record),
                decoded.type == InspectionEventType.received.rawValue
            else { continue }
            do {
                referenced += try CarriedRecords.references(in: entry.record)
            } catch {
                throw BundleUnreadable("\(entry.path).record cannot be read: \(error)")
            }
        }
        let closure: CarriedRecords
        do {
            closure = try CarriedRecords.closure(of: referenced) { given.record($0) }
        } catch {
            throw BundleUnreadable(
                entries == nil
                    ? "the file is of format jqc-handover/1, yet a reception it carries refers to records by leaf "
                        + "(\(error)): only a jqc-handover/2 file carries them"
                    : "carried_records: \(error)")
        }
        if let extra = given.leaves.subtracting(closure.leaves).min(by: { $0.hex < $1.hex }) {
            throw BundleUnreadable("carried_records holds leaf \(extra.hex), which no carried reception references")
        }
        return closure
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

extension HandoverFile {
    /// The `inspection.received` that records this file (of SHA-256
    /// `sha256`): its records by reference, their bytes and the file's
    /// `carried_records` as its closure.
    public func reception(sha256: Digest256) -> InspectionReceived {
        InspectionReceived(
            fromDevice: fromDevice, mode: mode, checkpoint: checkpoint, publicKey: publicKey,
            keyRecord: keyRecord.carried, templateRecord: templateRecord.carried, carrying: records.map(\.carried),
            fileSHA256: sha256, closure: carriedRecords)
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
