import FoundationEssentials
import InspectionDomain
import LedgerCore

// MARK: - The bundle's members, decoded strictly

/// A proof bundle's members after the strict decoding of the format page:
/// no member named twice or in another case, none unknown or missing, every
/// value of its type (a whole number from 0 to 2^63 − 1 for an integer).
struct Bundle {
    struct Entry {
        var position: UInt64
        var streamVersion: UInt64
        var type: String
        var record: String
        var inclusion: [String]
        /// Where it is in the file (`records[2]`, `bundle.key_record`).
        var path: String
    }

    struct Photo: Equatable {
        var photoID: String
        var sha256: String
        var position: UInt64

        static func == (a: Photo, b: Photo) -> Bool {
            a.photoID.utf8.elementsEqual(b.photoID.utf8) && a.sha256.utf8.elementsEqual(b.sha256.utf8)
                && a.position == b.position
        }
    }

    struct Consistency {
        var fromSize: UInt64
        var proof: [String]
    }

    /// Where the bundle is in its file: empty for a bundle file, `bundle`
    /// inside a handover file.
    var path: String
    var inspection: String
    var checkpoint: String
    var publicKey: String
    var keyRecord: Entry
    var records: [Entry]
    var photos: [Photo]
    var consistency: Consistency?
    /// `jqc-proof-bundle/2`'s map proof of the inspection's head; nil in /1.
    var head: Head?

    /// The `head` member: the inspection's last version and that record's
    /// leaf, proven in the checkpoint's map of stream heads by `proof`.
    struct Head {
        var streamVersion: UInt64
        var leaf: String
        var proof: [String]
    }

    static let headMembers = ["stream_version", "leaf", "proof"]

    static let members = [
        "format", "inspection", "checkpoint", "public_key", "key_record", "records", "photos", "consistency",
    ]
    static let entryMembers = ["position", "stream_version", "type", "record", "inclusion"]
    static let photoMembers = ["photo_id", "sha256", "position"]
    static let consistencyMembers = ["from_size", "proof"]

    init(
        path: String, inspection: String, checkpoint: String, publicKey: String, keyRecord: Entry, records: [Entry],
        photos: [Photo], consistency: Consistency?
    ) {
        self.path = path
        self.inspection = inspection
        self.checkpoint = checkpoint
        self.publicKey = publicKey
        self.keyRecord = keyRecord
        self.records = records
        self.photos = photos
        self.consistency = consistency
    }

    /// The bundle `top` at `path` of its file (empty: the file is the
    /// bundle); `consistency` is allowed only when `carriesConsistency`.
    init(_ top: JSONValue, at path: String = "", carriesConsistency: Bool = true) throws(BundleUnreadable) {
        guard case .object(let members) = top else {
            throw path.isEmpty
                ? .documentNotAnObject(document: "the bundle") : .wrongType(path: path, expected: .object)
        }
        try StrictJSON.checkNames(members, StrictJSON.place(path, root: "the bundle"))
        // /2 (a top-level bundle only: a handover file embeds /1) adds `head`.
        var isComplete = false
        if let format = members.first(where: { $0.key == "format" })?.value {
            switch format {
            case .null: break
            case .string(let text) where text == BundleCheck.format: break
            case .string(let text) where text == BundleCheck.completeFormat && carriesConsistency: isComplete = true
            case .string(let text):
                throw .unknownFormat(
                    document: "the bundle", found: text,
                    known: [BundleCheck.format] + (carriesConsistency ? [BundleCheck.completeFormat] : []))
            default: throw .wrongType(path: StrictJSON.join(path, "format"), expected: .string)
            }
        }
        var names = carriesConsistency ? Self.members : Self.members.filter { $0 != "consistency" }
        if isComplete { names.append("head") }
        let object = try StrictObject(top, names, at: path, root: "the bundle", optional: ["consistency"])
        _ = try object.string("format")
        self.path = path
        inspection = try object.string("inspection")
        checkpoint = try object.string("checkpoint")
        publicKey = try object.string("public_key")
        keyRecord = try Self.entry(object.value("key_record"), object.at("key_record"))
        var records: [Entry] = []
        for (i, item) in try object.array("records").enumerated() {
            records.append(try Self.entry(item, "\(object.at("records"))[\(i)]"))
        }
        self.records = records
        var photos: [Photo] = []
        for (i, item) in try object.array("photos").enumerated() {
            let photo = try StrictObject(item, Self.photoMembers, at: "\(object.at("photos"))[\(i)]", root: "")
            photos.append(
                Photo(
                    photoID: try photo.string("photo_id"), sha256: try photo.string("sha256"),
                    position: try photo.integer("position")))
        }
        self.photos = photos
        if object.has("consistency") {
            let members = try object.object("consistency", Self.consistencyMembers)
            consistency = Consistency(fromSize: try members.integer("from_size"), proof: try members.strings("proof"))
        }
        if isComplete {
            let members = try object.object("head", Self.headMembers)
            head = Head(
                streamVersion: try members.integer("stream_version"), leaf: try members.string("leaf"),
                proof: try members.strings("proof"))
        }
    }

    /// A top-level member's path in the file.
    func at(_ name: String) -> String { StrictJSON.join(path, name) }

    static func entry(_ value: JSONValue, _ path: String) throws(BundleUnreadable) -> Entry {
        let members = try StrictObject(value, entryMembers, at: path, root: "")
        return Entry(
            position: try members.integer("position"), streamVersion: try members.integer("stream_version"),
            type: try members.string("type"), record: try members.string("record"),
            inclusion: try members.strings("inclusion"), path: path)
    }
}

// MARK: - Standard base64, as both tools read it

/// Standard base64 as Python's `b64decode(validate=True)` reads it: only the
/// alphabet, then at most two `=`; a last group of two or three characters
/// needs its padding.
enum StrictBase64 {
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        var pads = 0
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="):
                pads += 1
                guard pads <= 2 else { return nil }
                continue
            default: return nil
            }
            guard pads == 0 else { return nil }
            values.append(value)
        }
        switch values.count % 4 {
        case 1: return nil
        case 2: guard pads == 2 else { return nil }
        case 3: guard pads >= 1 else { return nil }
        default: break
        }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i + 1 < values.count {
            let group = values[i..<min(i + 4, values.count)]
            let a = group[group.startIndex]
            let b = group[group.startIndex + 1]
            out.append(a << 2 | b >> 4)
            if group.count > 2 {
                let c = group[group.startIndex + 2]
                out.append(b << 4 | c >> 2)
                if group.count > 3 { out.append(c << 6 | group[group.startIndex + 3]) }
            }
            i += 4
        }
        return out
    }
}
