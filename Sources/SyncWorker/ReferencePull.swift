import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore

/// Reference data (facilities with their areas, templates with their form
/// schemas) as the server has it, read leniently where the real server's
/// shapes differ from this project's development server:
///
/// - A facility listed without `areas` has them fetched from
///   `GET /facilities/{id}/areas`: otherwise no inspection could name an area.
/// - A template without `version` gets one derived from its content (the
///   first 28 bits of the SHA-256 of its `form_schema` as sent), so the same
///   form always has the same version and a changed form a new one.
/// - A template jqc cannot use (a field type it does not know, a broken form)
///   is skipped with a warning naming it; the rest of the pull is kept.
public struct ReferencePull: Sendable {
    /// What was pulled.
    public var snapshot: ReferenceCache.Snapshot
    /// One line per template skipped, naming it and why.
    public var warnings: [String]

    /// Pulls everything through `session` (refreshed once on a 401).
    public static func fetch(_ session: ServerSession) throws(APIError) -> ReferencePull {
        let json = try session.authorized { token throws(APIError) in
            try session.api.referenceData(accessToken: token)
        }
        return try read(json)
    }

    /// Reads `{"facilities": [...], "templates": [...]}` as the API client gathered it.
    static func read(_ json: JSONValue) throws(APIError) -> ReferencePull {
        var facilities: [Facility] = []
        for item in json["facilities"]?.arrayValue ?? [] {
            do {
                facilities.append(try Facility(json: item))
            } catch {
                throw .malformedResponse("a facility in /facilities: \(error)")
            }
        }
        var templates: [Template] = []
        var warnings: [String] = []
        for item in json["templates"]?.arrayValue ?? [] {
            let label = templateLabel(item)
            do {
                let template = try Template(json: withVersion(item))
                try template.validate()
                templates.append(template)
            } catch {
                warnings.append(
                    "Template \(label) was skipped: \(error.description) This jqc cannot record it; the other "
                        + "templates and facilities are kept unless that would leave none to record with.")
            }
        }
        return ReferencePull(snapshot: .init(facilities: facilities, templates: templates), warnings: warnings)
    }

    /// `7 "Fire Safety"`, or as much of it as the server sent.
    static func templateLabel(_ item: JSONValue) -> String {
        let id = APIClient.recordID(item["id"]) ?? "?"
        guard let name = item["name"]?.stringValue else { return id }
        return "\(id) \"\(TerminalText.singleLine(name))\""
    }

    /// The template with a `version`: its own, else one derived from its content.
    static func withVersion(_ item: JSONValue) -> JSONValue {
        guard case .object(var members) = item, item["version"] == nil || item["version"] == .null else {
            return item
        }
        members.removeAll { $0.key == "version" }
        members.append(.init("version", .integer(Int64(derivedVersion(item)))))
        return .object(members)
    }

    /// A whole number from the template's form: the same form, the same version.
    static func derivedVersion(_ item: JSONValue) -> Int {
        let content = (item["form_schema"] ?? .null).serialized()
        let digest = SHA256Hasher().digest(Array(content.utf8)).hex
        return Int(digest.prefix(7), radix: 16) ?? 0
    }
}
