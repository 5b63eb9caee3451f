import Foundation
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

    var inspection: String
    var checkpoint: String
    var publicKey: String
    var keyRecord: Entry
    var records: [Entry]
    var photos: [Photo]
    var consistency: Consistency?

    static let members = [
        "format", "inspection", "checkpoint", "public_key", "key_record", "records", "photos", "consistency",
    ]
    static let entryMembers = ["position", "stream_version", "type", "record", "inclusion"]
    static let photoMembers = ["photo_id", "sha256", "position"]
    static let consistencyMembers = ["from_size", "proof"]

    init(_ top: BundleJSON) throws(BundleUnreadable) {
        guard case .object(let members) = top else { throw BundleUnreadable("the bundle is not a JSON object") }
        try Self.checkNames(members, "")
        if let format = members.first(where: { $0.0 == "format" })?.1 {
            switch format {
            case .null: break
            case .string(let text) where text == BundleCheck.format: break
            case .string(let text):
                throw BundleUnreadable(
                    "the bundle's format is \"\(BundleCheck.shown(text))\", not \(BundleCheck.format)")
            default: throw BundleUnreadable("format must be a string")
            }
        }
        let object = try Self.object(members, Self.members, "", optional: ["consistency"])
        _ = try Self.string(object["format"]!, "format")
        inspection = try Self.string(object["inspection"]!, "inspection")
        checkpoint = try Self.string(object["checkpoint"]!, "checkpoint")
        publicKey = try Self.string(object["public_key"]!, "public_key")
        keyRecord = try Self.entry(object["key_record"]!, "key_record")
        records = try Self.array(object["records"]!, "records").enumerated().map { (i, item) throws(BundleUnreadable) in
            try Self.entry(item, "records[\(i)]")
        }
        photos = try Self.array(object["photos"]!, "photos").enumerated().map { (i, item) throws(BundleUnreadable) in
            try Self.photo(item, "photos[\(i)]")
        }
        if let value = object["consistency"] {
            let members = try Self.object(value, Self.consistencyMembers, "consistency")
            consistency = Consistency(
                fromSize: try Self.integer(members["from_size"]!, "consistency.from_size"),
                proof: try Self.strings(members["proof"]!, "consistency.proof"))
        }
    }

    static func place(_ path: String) -> String { path.isEmpty ? "the bundle" : path }
    static func join(_ path: String, _ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    static func asciiLower(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.map { ("A"..."Z").contains($0) ? .init($0.value + 32)! : $0 }))
    }

    static func checkNames(_ members: [(String, BundleJSON)], _ path: String) throws(BundleUnreadable) {
        var seen: [[UInt8]: String] = [:]
        for (name, _) in members {
            let lower = Array(asciiLower(name).utf8)
            guard let earlier = seen[lower] else {
                seen[lower] = name
                continue
            }
            if earlier.utf8.elementsEqual(name.utf8) {
                throw BundleUnreadable("member \"\(BundleCheck.shown(name))\" appears twice in \(place(path))")
            }
            throw BundleUnreadable(
                "member \"\(BundleCheck.shown(name))\" differs from \"\(BundleCheck.shown(earlier))\" only in case in "
                    + place(path))
        }
    }

    /// An object's members by name, checked against the names it may have.
    static func object(
        _ members: [(String, BundleJSON)], _ names: [String], _ path: String, optional: Set<String> = []
    ) throws(BundleUnreadable) -> [String: BundleJSON] {
        try checkNames(members, path)
        for (name, _) in members where !names.contains(where: { $0.utf8.elementsEqual(name.utf8) }) {
            throw BundleUnreadable("unknown member \"\(BundleCheck.shown(name))\" in \(place(path))")
        }
        var present: [String: BundleJSON] = [:]
        for (name, value) in members { present[name] = value }
        for name in names where present[name] == nil && !optional.contains(name) {
            throw BundleUnreadable("member \"\(name)\" is missing from \(place(path))")
        }
        return present
    }

    static func object(_ value: BundleJSON, _ names: [String], _ path: String) throws(BundleUnreadable) -> [String:
        BundleJSON]
    {
        guard case .object(let members) = value else { throw BundleUnreadable("\(path) must be an object") }
        return try object(members, names, path)
    }

    static func string(_ value: BundleJSON, _ path: String) throws(BundleUnreadable) -> String {
        guard case .string(let text) = value else { throw BundleUnreadable("\(path) must be a string") }
        return text
    }

    static func integer(_ value: BundleJSON, _ path: String) throws(BundleUnreadable) -> UInt64 {
        guard case .integer(let number?) = value, number >= 0 else {
            throw BundleUnreadable("\(path) must be a whole number from 0 to \(Int64.max)")
        }
        return UInt64(number)
    }

    static func array(_ value: BundleJSON, _ path: String) throws(BundleUnreadable) -> [BundleJSON] {
        guard case .array(let items) = value else { throw BundleUnreadable("\(path) must be an array") }
        return items
    }

    static func strings(_ value: BundleJSON, _ path: String) throws(BundleUnreadable) -> [String] {
        var out: [String] = []
        for (i, item) in try array(value, path).enumerated() { out.append(try string(item, "\(path)[\(i)]")) }
        return out
    }

    static func entry(_ value: BundleJSON, _ path: String) throws(BundleUnreadable) -> Entry {
        let members = try object(value, entryMembers, path)
        return Entry(
            position: try integer(members["position"]!, join(path, "position")),
            streamVersion: try integer(members["stream_version"]!, join(path, "stream_version")),
            type: try string(members["type"]!, join(path, "type")),
            record: try string(members["record"]!, join(path, "record")),
            inclusion: try strings(members["inclusion"]!, join(path, "inclusion")))
    }

    static func photo(_ value: BundleJSON, _ path: String) throws(BundleUnreadable) -> Photo {
        let members = try object(value, photoMembers, path)
        return Photo(
            photoID: try string(members["photo_id"]!, join(path, "photo_id")),
            sha256: try string(members["sha256"]!, join(path, "sha256")),
            position: try integer(members["position"]!, join(path, "position")))
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
