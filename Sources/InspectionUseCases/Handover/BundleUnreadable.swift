import FoundationEssentials

/// A file that is not its format's JSON (a bundle's exit status 2): a proof
/// bundle or a handover file refused by the strict reading, one case per
/// reason, named by the path of the first problem (`bundle.records[0]`,
/// empty for the document itself). `description` is the line jqc prints.
public enum BundleUnreadable: Error, Equatable, Sendable, CustomStringConvertible {
    /// The JSON types a member is required to be.
    public enum Expected: Equatable, Sendable {
        case object, string, array
        /// A whole number from 0 to 2^63 − 1.
        case wholeNumber
    }

    // The JSON text itself.

    /// The bytes are not UTF-8.
    case notUTF8
    /// `document` ("the bundle", "the file") nests deeper than `maximumDepth`.
    case tooDeep(document: String, maximumDepth: Int)
    /// The text is not JSON; `detail` is the reader's own message.
    case notJSON(detail: String)

    // The members of an object (`place` is its path, or the document's name).

    /// A member is named twice.
    case repeatedMember(name: String, place: String)
    /// A member's name differs from an earlier one's only in the case of ASCII letters.
    case memberDiffersInCase(name: String, earlier: String, place: String)
    /// A member the format does not name.
    case unknownMember(name: String, place: String)
    /// A member the format requires is absent.
    case missingMember(name: String, place: String)
    /// The document is not an object.
    case documentNotAnObject(document: String)
    /// A member's value is not of its JSON type.
    case wrongType(path: String, expected: Expected)
    /// The document names a format this jqc does not read (`known` in order).
    case unknownFormat(document: String, found: String, known: [String])

    // What a handover file adds to a bundle's strictness.

    /// `mode` is neither `handover` nor `share`.
    case unknownMode
    /// Not a UUID in lower case.
    case notLowerCaseUUID(path: String)
    /// Not 64 lower-case hex digits.
    case notLowerCaseSHA256(path: String)
    /// Not standard base64 with its padding.
    case notStandardBase64(path: String)
    /// An inclusion hash that does not decode to 32 bytes.
    case notAHash(path: String)
    /// A sorted list names an entry twice (`key` is the member it is sorted by, `value` its value).
    case repeatedEntry(path: String, key: SortKey, value: String)
    /// A sorted list's entry comes before the one above it.
    case outOfOrder(path: String, key: SortKey)
    /// An entry's bytes (at `path`) do not hash to the `key` it states.
    case wrongHash(path: String, key: SortKey, stated: String)
    /// A carried reception's record whose references cannot be read.
    case referencesUnreadable(path: String, why: String)
    /// A `jqc-handover/1` file whose reception refers to records by leaf.
    case referencesInFirstFormat(why: String)
    /// `carried_records` does not hold what the receptions reference.
    case carriedRecordsIncomplete(why: String)
    /// `carried_records` holds a record no carried reception references.
    case unreferencedLeaf(leaf: String)

    /// The members the handover file's sorted lists are sorted by.
    public enum SortKey: String, Equatable, Sendable {
        /// `carried_photo_files` by `sha256`.
        case sha256
        /// `carried_records` by `leaf`.
        case leaf
    }

    public var description: String { "UNREADABLE: \(verdict)" }

    /// The reason without its `UNREADABLE:` (the words a handover refusal quotes).
    public var verdict: String {
        switch self {
        case .notUTF8: "the file is not UTF-8 text"
        case .tooDeep(let document, let depth): "\(document) nests deeper than \(depth) levels"
        case .notJSON: "the file is not well-formed JSON"
        case .repeatedMember(let name, let place): "member \"\(BundleCheck.shown(name))\" appears twice in \(place)"
        case .memberDiffersInCase(let name, let earlier, let place):
            "member \"\(BundleCheck.shown(name))\" differs from \"\(BundleCheck.shown(earlier))\" only in case in "
                + place
        case .unknownMember(let name, let place): "unknown member \"\(BundleCheck.shown(name))\" in \(place)"
        case .missingMember(let name, let place): "member \"\(name)\" is missing from \(place)"
        case .documentNotAnObject(let document): "\(document) is not a JSON object"
        case .wrongType(let path, let expected): "\(path) must be \(Self.words(expected))"
        case .unknownFormat(let document, let found, let known):
            "\(document)'s format is \"\(BundleCheck.shown(found))\", not \(Self.either(known))"
        case .unknownMode: "mode is neither \"handover\" nor \"share\""
        case .notLowerCaseUUID(let path): "\(path) is not a lower-case UUID"
        case .notLowerCaseSHA256(let path): "\(path) is not a SHA-256 in lower-case hex"
        case .notStandardBase64(let path): "\(path) is not standard base64 with padding"
        case .notAHash(let path): "\(path) is not a 32-byte hash"
        case .repeatedEntry(let path, .sha256, let value): "\(path) repeats the photo file \(value)"
        case .repeatedEntry(let path, .leaf, let value): "\(path) repeats leaf \(value)"
        case .outOfOrder(let path, let key): "\(path) is out of order (the entries are sorted by \(key.rawValue))"
        case .wrongHash(let path, let key, let stated): "\(path) does not hash to its \(key.rawValue) \(stated)"
        case .referencesUnreadable(let path, let why): "\(path) cannot be read: \(why)"
        case .referencesInFirstFormat(let why):
            "the file is of format jqc-handover/1, yet a reception it carries refers to records by leaf (\(why)): "
                + "only a jqc-handover/2 file carries them"
        case .carriedRecordsIncomplete(let why): "carried_records: \(why)"
        case .unreferencedLeaf(let leaf): "carried_records holds leaf \(leaf), which no carried reception references"
        }
    }

    /// The reader's own message, for standard error.
    public var detail: String? {
        guard case .notJSON(let detail) = self else { return nil }
        return detail
    }

    private static func words(_ expected: Expected) -> String {
        switch expected {
        case .object: "an object"
        case .string: "a string"
        case .array: "an array"
        case .wholeNumber: "a whole number from 0 to \(Int64.max)"
        }
    }

    /// `a`, `a or b`, `a, b or c`.
    private static func either(_ names: [String]) -> String {
        guard let last = names.last, names.count > 1 else { return names.last ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + last
    }
}
