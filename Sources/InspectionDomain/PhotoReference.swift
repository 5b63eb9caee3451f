import FoundationEssentials
import LedgerCore

/// A captured photo or signature drawing, bound to the log by its hash.
///
/// The file lives in `photos/<sha256>` outside the hash chain; recording its
/// SHA-256 and size in the event that captured it is what proves the file an
/// auditor opens is the one the inspector took.
public struct PhotoReference: Hashable, Sendable {
    public var photoID: UUID
    public var sha256: Digest256
    /// The file's size in bytes (never 0: the server refuses empty files).
    public var size: Int
    /// The file's media type, like `image/jpeg`.
    public var mediaType: String

    /// A reference; `validate()` checks the size and media type.
    public init(photoID: UUID, sha256: Digest256, size: Int, mediaType: String) {
        self.photoID = photoID
        self.sha256 = sha256
        self.size = size
        self.mediaType = mediaType
    }

    /// Checks what a capture must have: bytes, and a media type of the form
    /// `type/subtype` in lower case.
    public func validate() throws(DomainError) {
        guard size > 0 else { throw .invalidPhoto(reason: "the file is empty (\(size) bytes)") }
        guard Self.isMediaType(mediaType) else {
            throw .invalidPhoto(reason: "\"\(mediaType)\" is not a media type such as image/jpeg")
        }
    }

    static func isMediaType(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty
                && part.utf8.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                        UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                        true
                    default: false
                    }
                }
        }
    }

    /// `{photo_id, sha256, size, media_type}`, the shape in payloads and exports.
    public var jsonValue: JSONValue {
        .object([
            .init("photo_id", .string(photoID.lowercased)), .init("sha256", .string(sha256.hex)),
            .init("size", .integer(size)), .init("media_type", .string(mediaType)),
        ])
    }

    /// Reads the JSON shape back; nil names what is missing.
    init(json: JSONValue) throws(ValueRefusal) {
        guard case .object = json else {
            throw ValueRefusal("a photo is an object {photo_id, sha256, size, media_type}, not \(json.kindName)")
        }
        guard let idText = json["photo_id"]?.stringValue, let id = UUID(uuidString: idText) else {
            throw ValueRefusal("\"photo_id\" must be a UUID")
        }
        guard let hex = json["sha256"]?.stringValue, let digest = Digest256(hex: hex) else {
            throw ValueRefusal("\"sha256\" must be 64 hexadecimal digits")
        }
        guard let size = json["size"]?.integerValue, let sizeInt = Int(exactly: size) else {
            throw ValueRefusal("\"size\" must be a whole number of bytes")
        }
        guard let mediaType = json["media_type"]?.stringValue else {
            throw ValueRefusal("\"media_type\" must be a string such as image/jpeg")
        }
        self.init(photoID: id, sha256: digest, size: sizeInt, mediaType: mediaType)
    }
}
