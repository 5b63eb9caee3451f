import FoundationEssentials
import InspectionDomain

// MARK: - A file's JSON, read strictly as the bundle tools read it

/// The one strict reading of the JSON files jqc takes from another device or
/// an auditor (proof bundles, handover files): `JSONValue(parsing:)` read as
/// `Tools/verify-ledger --bundle` and `Tools/verify-bundle-go` read
/// (`JSONValue.Reading.asTheBundleToolsRead`: repeated names kept so they are
/// named here, a lone surrogate escape U+FFFD), then every object checked
/// against the members its format names (Schemas/ledger-format.md § Proof
/// bundles, strictness), the first problem named by its path.
enum StrictJSON {
    /// Nesting is bounded before parsing, as both tools do.
    static let maximumDepth = 64

    /// The file's bytes as one JSON value; `BundleUnreadable` when they are
    /// not (`what` names the document in the depth refusal: "the bundle").
    static func read(_ data: [UInt8], what: String) throws(BundleUnreadable) -> JSONValue {
        guard String(validating: data, as: UTF8.self) != nil else {
            throw .notUTF8
        }
        var scanner = Scanner()
        for byte in data where scanner.place(of: byte) == .outside && scanner.depth > maximumDepth {
            throw .tooDeep(document: what, maximumDepth: maximumDepth)
        }
        do {
            return try JSONValue(parsing: data, .asTheBundleToolsRead)
        } catch {
            throw .notJSON(detail: "\(error)")
        }
    }

    /// Where each byte of a JSON text lies, strings and their escapes told
    /// from the structure around them, and the nesting depth there: one
    /// byte at a time, so a reader can resume it chunk after chunk
    /// (`HandoverFileReader`) or run it over a whole text (`read`).
    struct Scanner {
        /// Where a byte lies.
        enum Place: Equatable {
            /// Outside every string; an opening quote is outside too.
            case outside
            /// Inside a string, a backslash that starts an escape included.
            case inString
            /// The byte after a backslash inside a string.
            case escaped
            /// The quote that ends a string.
            case closingQuote
        }

        /// `[` and `{` opened and not yet closed, outside strings.
        private(set) var depth = 0
        private var inString = false
        private var escaped = false

        mutating func place(of byte: UInt8) -> Place {
            if inString {
                if escaped {
                    escaped = false
                    return .escaped
                }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    return .closingQuote
                }
                return .inString
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
            return .outside
        }
    }

    /// `place` names an object in a message: its path, or `root` for the
    /// document itself ("the bundle", "the file").
    static func place(_ path: String, root: String) -> String { path.isEmpty ? root : path }
    static func join(_ path: String, _ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    static func asciiLower(_ text: String) -> [UInt8] {
        text.utf8.map { (0x41...0x5A).contains($0) ? $0 + 32 : $0 }
    }

    /// No member named twice, none differing from another only in the case
    /// of ASCII letters (names compared as their bytes, never as Swift
    /// strings, which equate canonically equivalent text).
    static func checkNames(_ members: [JSONValue.Member], _ place: String) throws(BundleUnreadable) {
        var seen: [[UInt8]: String] = [:]
        for member in members {
            let lower = asciiLower(member.key)
            guard let earlier = seen[lower] else {
                seen[lower] = member.key
                continue
            }
            if earlier.utf8.elementsEqual(member.key.utf8) {
                throw .repeatedMember(name: member.key, place: place)
            }
            throw .memberDiffersInCase(name: member.key, earlier: earlier, place: place)
        }
    }
}

/// An object of a strictly read file: each member its format names, once,
/// and nothing else; its values read by type, each refusal naming the path.
struct StrictObject {
    let path: String
    let members: [String: JSONValue]

    /// `value` at `path` as an object with `names` (those in `optional` may
    /// be absent); `root` names the document when `path` is empty.
    init(_ value: JSONValue, _ names: [String], at path: String, root: String, optional: Set<String> = [])
        throws(BundleUnreadable)
    {
        guard case .object(let members) = value else {
            throw path.isEmpty ? .documentNotAnObject(document: root) : .wrongType(path: path, expected: .object)
        }
        let place = StrictJSON.place(path, root: root)
        try StrictJSON.checkNames(members, place)
        for member in members where !names.contains(where: { $0.utf8.elementsEqual(member.key.utf8) }) {
            throw .unknownMember(name: member.key, place: place)
        }
        // The names are now exactly some of `names` (ASCII), so a dictionary
        // keyed by them is safe.
        var present: [String: JSONValue] = [:]
        for member in members { present[member.key] = member.value }
        for name in names where present[name] == nil && !optional.contains(name) {
            throw .missingMember(name: name, place: place)
        }
        self.path = path
        self.members = present
    }

    func at(_ name: String) -> String { StrictJSON.join(path, name) }

    func has(_ name: String) -> Bool { members[name] != nil }

    func value(_ name: String) -> JSONValue { members[name] ?? .null }

    func string(_ name: String) throws(BundleUnreadable) -> String { try Self.string(value(name), at(name)) }

    func integer(_ name: String) throws(BundleUnreadable) -> UInt64 { try Self.integer(value(name), at(name)) }

    func array(_ name: String) throws(BundleUnreadable) -> [JSONValue] { try Self.array(value(name), at(name)) }

    func strings(_ name: String) throws(BundleUnreadable) -> [String] {
        var out: [String] = []
        for (i, item) in try array(name).enumerated() { out.append(try Self.string(item, "\(at(name))[\(i)]")) }
        return out
    }

    func object(_ name: String, _ names: [String]) throws(BundleUnreadable) -> StrictObject {
        try StrictObject(value(name), names, at: at(name), root: "")
    }

    static func string(_ value: JSONValue, _ path: String) throws(BundleUnreadable) -> String {
        guard case .string(let text) = value else { throw .wrongType(path: path, expected: .string) }
        return text
    }

    /// A whole number from 0 to 2^63 − 1, written without fraction or
    /// exponent (`5.0` is not one).
    static func integer(_ value: JSONValue, _ path: String) throws(BundleUnreadable) -> UInt64 {
        guard let number = value.integerValue, number >= 0 else {
            throw .wrongType(path: path, expected: .wholeNumber)
        }
        return UInt64(number)
    }

    static func array(_ value: JSONValue, _ path: String) throws(BundleUnreadable) -> [JSONValue] {
        guard case .array(let items) = value else { throw .wrongType(path: path, expected: .array) }
        return items
    }
}
