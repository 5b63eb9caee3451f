import FoundationEssentials
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
    public enum Unreadable: Error, Equatable, Sendable, CustomStringConvertible {
        /// A byte no JSON text can hold where it stands, seen while the
        /// file is read (`HandoverFileReader`), before it is all in memory.
        case unexpectedByte(offset: Int, byte: UInt8)
        /// The whole text read strictly, as a bundle is, and refused.
        case strict(BundleUnreadable)

        /// The reason in a few words, without what to do.
        public var reason: String {
            switch self {
            case .unexpectedByte(let offset, let byte):
                "the file is not well-formed JSON (byte 0x\(String(byte, radix: 16, uppercase: true)) at offset "
                    + "\(offset) cannot appear there)"
            case .strict(let unreadable): unreadable.verdict
            }
        }

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
            throw .strict(error)
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
            throw .unknownMode
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
        guard case .string(let text) = format else { throw .wrongType(path: "format", expected: .string) }
        guard let index = Self.formats.firstIndex(of: text) else {
            throw .unknownFormat(document: "the file", found: text, known: Self.formats)
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
            throw .notStandardBase64(path: entry.at("data"))
        }
        return .staged(staged)
    }

    /// `carried_photo_files`, strictly: each `{sha256, data}` once, sorted by
    /// `sha256`, its bytes hashing to it. Whether they are exactly the files
    /// the carried records name is check 2 of `HandoverVerification`.
    static func carriedPhotos(_ entries: [JSONValue], staged: [String: StagedPhotoFile]) throws(BundleUnreadable)
        -> [(sha256: Digest256, data: PhotoBytes)]
    {
        let hasher = SHA256Hasher()
        return try sortedByHash(entries, "carried_photo_files", key: .sha256, bytes: "data") {
            (file) throws(BundleUnreadable) in
            let data = try photoBytes(file, staged: staged[file.path])
            return (data, data.sha256(hasher))
        }.map { (sha256: $0.hash, data: $0.value) }
    }

    /// The entries of a list sorted by the hash of their bytes (`list` is
    /// `carried_photo_files` or `carried_records`): each `{key, bytes}`
    /// strictly, `key` a lower-case SHA-256 greater than the one before, and
    /// `read`'s hash of the bytes it read equal to it.
    static func sortedByHash<Value>(
        _ entries: [JSONValue], _ list: String, key: BundleUnreadable.SortKey, bytes: String,
        read: (StrictObject) throws(BundleUnreadable) -> (Value, Digest256)
    ) throws(BundleUnreadable) -> [(hash: Digest256, value: Value)] {
        var found: [(hash: Digest256, value: Value)] = []
        var previous: String?
        for (index, value) in entries.enumerated() {
            let item = try StrictObject(value, [key.rawValue, bytes], at: "\(list)[\(index)]", root: "")
            let text = try item.string(key.rawValue)
            let stated = try digest(text, item.at(key.rawValue))
            if let previous, text <= previous {
                throw text == previous
                    ? .repeatedEntry(path: item.path, key: key, value: text) : .outOfOrder(path: item.path, key: key)
            }
            previous = text
            let (content, hash) = try read(item)
            guard hash == stated else { throw .wrongHash(path: item.at(bytes), key: key, stated: text) }
            found.append((stated, content))
        }
        return found
    }

    /// `carried_records`, strictly: each `{leaf, record}` once, sorted by
    /// leaf, its bytes hashing to it, and exactly the closure of what the
    /// version-2 receptions among `records` reference, at any depth (none in
    /// a `/1` file, where receptions embed their records).
    static func carried(_ entries: [JSONValue]?, records: [Entry]) throws(BundleUnreadable) -> CarriedRecords {
        var given = CarriedRecords()
        _ = try sortedByHash(entries ?? [], "carried_records", key: .leaf, bytes: "record") {
            (item) throws(BundleUnreadable) in
            ((), given.insert(try base64(try item.string("record"), item.at("record"))))
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
                throw .referencesUnreadable(path: entry.path + ".record", why: "\(error)")
            }
        }
        let closure: CarriedRecords
        do {
            closure = try CarriedRecords.closure(of: referenced) { given.record($0) }
        } catch {
            throw entries == nil
                ? .referencesInFirstFormat(why: "\(error)") : .carriedRecordsIncomplete(why: "\(error)")
        }
        if let extra = given.leaves.subtracting(closure.leaves).min(by: { $0.hex < $1.hex }) {
            throw .unreferencedLeaf(leaf: extra.hex)
        }
        return closure
    }

    // MARK: - What a handover file adds to a bundle's strictness

    static func uuid(_ text: String, _ path: String) throws(BundleUnreadable) -> UUID {
        guard let id = UUID(uuidString: text), id.lowercased == text else {
            throw .notLowerCaseUUID(path: path)
        }
        return id
    }

    static func digest(_ text: String, _ path: String) throws(BundleUnreadable) -> Digest256 {
        guard text.utf8.count == 64, let digest = Digest256(hex: text), digest.hex == text else {
            throw .notLowerCaseSHA256(path: path)
        }
        return digest
    }

    static func base64(_ text: String, _ path: String) throws(BundleUnreadable) -> [UInt8] {
        guard let data = StrictBase64.decode(text), Data(data).base64EncodedString() == text else {
            throw .notStandardBase64(path: path)
        }
        return data
    }

    static func entry(_ entry: Bundle.Entry) throws(BundleUnreadable) -> Entry {
        var inclusion: [Digest256] = []
        for (index, hash) in entry.inclusion.enumerated() {
            let path = "\(entry.path).inclusion[\(index)]"
            guard let digest = Digest256(bytes: try base64(hash, path)) else {
                throw .notAHash(path: path)
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
