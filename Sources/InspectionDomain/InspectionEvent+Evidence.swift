import FoundationEssentials
import LedgerCore

// What an inspector adds as evidence: `photo.captured` and `issue.flagged`.
// Each payload's keys are its `Key` enum, which its CBOR, its JSON and its
// decoder share.

// MARK: - photo.captured

extension PhotoCaptured {
    enum Key: String, PayloadKey {
        case photoID = "photo_id", sha256, size, mediaType = "media_type", kind, fieldID = "field_id"
        case issueID = "issue_id"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        Key.map([
            (.photoID, .text(photo.photoID.lowercased)), (.sha256, .text(photo.sha256.hex)),
            (.size, .integer(Int64(photo.size))), (.mediaType, .text(photo.mediaType)),
            (.kind, .text(kind.rawValue)), (.fieldID, .optionalText(fieldID?.rawValue)),
            (.issueID, .optionalText(issueID?.lowercased)),
        ])
    }

    var json: JSONValue {
        Key.object([
            (.photoID, .string(photo.photoID.lowercased)), (.sha256, .string(photo.sha256.hex)),
            (.size, .integer(photo.size)), (.mediaType, .string(photo.mediaType)),
            (.kind, .string(kind.rawValue)), (.fieldID, .optional(fieldID?.rawValue)),
            (.issueID, .optional(issueID?.lowercased)),
        ])
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> PhotoCaptured {
        var id: UUID?
        var digest: Digest256?
        var size: Int?
        var mediaType: String?
        var kind: PhotoKind?
        var fieldID: String??
        var issueID: UUID??
        for _ in 0..<(try r.mapCount()) {
            switch try r.namedKey(Key.self) {
            case .photoID?: id = try r.uuid(Key.photoID)
            case .sha256?: digest = try r.digest(Key.sha256)
            case .size?: size = try r.int()
            case .mediaType?: mediaType = try r.text()
            case .kind?:
                let name = try r.text()
                guard let parsed = PhotoKind(rawValue: name) else {
                    throw r.malformed("unknown photo kind \"\(name)\"")
                }
                kind = parsed
            case .fieldID?: fieldID = .some(try r.nullableText())
            case .issueID?: issueID = .some(try r.nullableUUID(Key.issueID))
            case nil: try r.skip()
            }
        }
        let photo = PhotoReference(
            photoID: try r.required(id, Key.photoID), sha256: try r.required(digest, Key.sha256),
            size: try r.required(size, Key.size), mediaType: try r.required(mediaType, Key.mediaType))
        return PhotoCaptured(
            photo: photo, kind: try r.required(kind, Key.kind),
            fieldID: try r.required(fieldID, Key.fieldID).map(FieldID.init(rawValue:)),
            issueID: try r.required(issueID, Key.issueID))
    }
}

// MARK: - issue.flagged

extension IssueFlagged {
    enum Key: String, PayloadKey {
        case issueID = "issue_id", severity, description, photoID = "photo_id"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        Key.map([
            (.issueID, .text(issueID.lowercased)), (.severity, .text(severity.rawValue)),
            (.description, .text(description)), (.photoID, .optionalText(photoID?.lowercased)),
        ])
    }

    var json: JSONValue {
        Key.object([
            (.issueID, .string(issueID.lowercased)), (.severity, .string(severity.rawValue)),
            (.description, .string(description)), (.photoID, .optional(photoID?.lowercased)),
        ])
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> IssueFlagged {
        var issueID: UUID?
        var severity: IssueSeverity?
        var description: String?
        var photoID: UUID??
        for _ in 0..<(try r.mapCount()) {
            switch try r.namedKey(Key.self) {
            case .issueID?: issueID = try r.uuid(Key.issueID)
            case .severity?:
                let name = try r.text()
                guard let parsed = IssueSeverity(rawValue: name) else {
                    throw r.malformed("unknown severity \"\(name)\"")
                }
                severity = parsed
            case .description?: description = try r.text()
            case .photoID?: photoID = .some(try r.nullableUUID(Key.photoID))
            case nil: try r.skip()
            }
        }
        return IssueFlagged(
            issueID: try r.required(issueID, Key.issueID), severity: try r.required(severity, Key.severity),
            description: try r.required(description, Key.description),
            photoID: try r.required(photoID, Key.photoID))
    }
}
