import FoundationEssentials
import InspectionDomain
import LedgerCore

/// The bodies of the worker's writes, built from an inspection's folded
/// state: pure functions, so the exact shapes `Schemas/openapi.yaml` requires
/// are tested without a server.
public enum SyncRequests {
    // MARK: - POST /inspections

    /// The `InspectionRequest` of a completed inspection.
    ///
    /// - `client_id` is the inspection's UUID, the server's natural key.
    /// - `form_data` is keyed by field id, with `FieldValue.jsonValue` shapes;
    ///   an image or signature is the server path of its uploaded photo, or
    ///   `""` while it is not uploaded (never a local path or hash).
    /// - Times are RFC 3339 in UTC with microseconds; ids are sent as integers
    ///   when they are whole numbers.
    /// - `parent_inspection_id` is the parent's id on the server, or null.
    public static func inspection(
        _ state: InspectionState, photoPath: (UUID) -> String?, parentServerID: String?
    ) -> JSONValue {
        var members: [JSONValue.Member] = [
            .init("client_id", .string(state.id.lowercased)),
            .init("template_id", recordID(state.templateID)),
            .init("facility_id", recordID(state.facilityID)),
            .init("area_id", state.areaID.map(recordID) ?? .null),
            .init("form_data", formData(state, photoPath: photoPath)),
            .init("overall_score", state.score.map(JSONValue.double) ?? .null),
        ]
        let started = state.startedAt ?? state.completedAt
        if let started { members.append(.init("started_at", .string(started.iso8601))) }
        if let completed = state.completedAt ?? started {
            members.append(.init("completed_at", .string(completed.iso8601)))
        }
        members.append(.init("parent_inspection_id", parentServerID.map(recordID) ?? .null))
        members.append(.init("follow_up_required", .bool(state.followUpRequired)))
        return .object(members)
    }

    /// The answers keyed by field id, in the template's order. Unanswered
    /// fields are left out (the contract reads absent as unanswered); display
    /// fields never hold a value.
    static func formData(_ state: InspectionState, photoPath: (UUID) -> String?) -> JSONValue {
        let order = state.template?.fields.map(\.id) ?? state.values.keys.sorted()
        var seen = Set<FieldID>()
        var members: [JSONValue.Member] = []
        for id in order + state.values.keys.sorted() where seen.insert(id).inserted {
            guard let value = state.values[id] else { continue }
            if let field = state.template?.field(id: id), field.type.isDisplayOnly { continue }
            members.append(.init(id.rawValue, json(value, photoPath: photoPath)))
        }
        return .object(members)
    }

    static func json(_ value: FieldValue, photoPath: (UUID) -> String?) -> JSONValue {
        if case .photo(let photo) = value { return .string(photoPath(photo.photoID) ?? "") }
        return value.jsonValue
    }

    // MARK: - POST /issues

    /// The `IssueRequest` of a flagged issue, under the inspection's server id.
    public static func issue(
        _ issue: FlaggedIssue, of state: InspectionState, inspectionServerID: String, photoPath: String?
    ) -> JSONValue {
        .object([
            .init("client_id", .string(issue.id.lowercased)),
            .init("inspection_id", recordID(inspectionServerID)),
            .init("facility_id", recordID(state.facilityID)),
            .init("severity", .string(issue.severity.rawValue)),
            .init("description", .string(issue.description)),
            .init("photo_path", photoPath.map(JSONValue.string) ?? .null),
        ])
    }

    // MARK: - POST /photos/upload

    /// The multipart upload of a captured photo's stored bytes.
    public static func upload(_ photo: CapturedPhoto, bytes: [UInt8]) -> PhotoUpload {
        let fieldID = photo.fieldID?.rawValue
        return PhotoUpload(
            bytes: bytes, filename: "\(photo.photo.photoID.lowercased).\(fileExtension(photo.photo.mediaType))",
            mediaType: photo.photo.mediaType, entityType: photo.issueID == nil ? "inspection" : "issue",
            fieldID: fieldID.flatMap { isUploadFieldID($0) ? $0 : nil })
    }

    /// The contract's `field_id` pattern, `^[A-Za-z0-9_.-]{1,64}$`.
    static func isUploadFieldID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }

    static func fileExtension(_ mediaType: String) -> String {
        switch mediaType {
        case "image/jpeg": "jpg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/heic": "heic"
        default: "bin"
        }
    }

    // MARK: - Ids

    /// A server record id: an integer when the text is a whole number that
    /// JSON carries exactly (the server's ids are integers), else the text.
    static func recordID(_ text: String) -> JSONValue {
        if let value = Int64(text), value > 0, value <= 9_007_199_254_740_991, String(value) == text {
            return .integer(value)
        }
        return .string(text)
    }
}
