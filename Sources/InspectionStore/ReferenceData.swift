import InspectionDomain
import LedgerCore

/// A facility as the server describes it (reference data, a cache).
public struct Facility: Hashable, Sendable {
    public var id: String
    public var name: String
    public var address: String
    public var projectName: String
    public var areas: [Area]

    /// An area of a facility.
    public struct Area: Hashable, Sendable {
        public var id: String
        public var facilityID: String
        public var name: String
        public var areaType: String
    }

    /// Reads the server's facility JSON; ids may be integers or strings.
    public init(json: JSONValue) throws(ReferenceDataError) {
        guard let id = Self.normalizedID(json["id"]) else { throw .invalid("a facility has no usable id") }
        guard let name = json["name"]?.stringValue, !name.isEmpty else {
            throw .invalid("facility \(id) has no name")
        }
        self.id = id
        self.name = name
        address = json["address"]?.stringValue ?? ""
        projectName = json["project_name"]?.stringValue ?? ""
        var areas: [Area] = []
        for area in json["areas"]?.arrayValue ?? [] {
            guard let areaID = Self.normalizedID(area["id"]), let areaName = area["name"]?.stringValue else {
                throw .invalid("facility \(id) has an area without an id or a name")
            }
            areas.append(
                Area(
                    id: areaID, facilityID: Self.normalizedID(area["facility_id"]) ?? id, name: areaName,
                    areaType: area["area_type"]?.stringValue ?? ""))
        }
        self.areas = areas
    }

    public var jsonValue: JSONValue {
        .object([
            "id": .string(id), "name": .string(name), "address": .string(address),
            "project_name": .string(projectName),
            "areas": .array(
                areas.map { area in
                    .object([
                        "id": .string(area.id), "facility_id": .string(area.facilityID), "name": .string(area.name),
                        "area_type": .string(area.areaType),
                    ])
                }),
        ])
    }

    /// `101`, `"101"` → `"101"`; anything else (a fraction, an empty string) → nil.
    static func normalizedID(_ value: JSONValue?) -> String? {
        guard let value else { return nil }
        if let integer = value.integerValue { return String(integer) }
        if let text = value.stringValue {
            let trimmed = text.trimmingWhiteSpace
            return trimmed.isEmpty ? nil : trimmed
        }
        return nil
    }
}

/// Why reference data was not accepted.
public enum ReferenceDataError: Error, CustomStringConvertible {
    case invalid(String)
    /// One pull or import names the same id for two facilities or two
    /// templates: which one is meant cannot be told, so none is kept.
    case duplicateIDs(facilities: [String], templates: [String])
    /// Accepting the pull would take away what recording needs (`why`); the
    /// cache was kept as it was.
    case wouldLose(String)

    public var description: String {
        switch self {
        case .invalid(let why): "the reference data is not usable: \(why). Nothing was changed."
        case .wouldLose(let why):
            "the reference data was not accepted: \(why). The cached facilities and templates were kept as they "
                + "were. Fix the file, or ask the server's administrator; recorded inspections are not affected. "
                + "To add a file's templates to those cached, not replace them: 'jqc pull --from FILE --add'."
        case .duplicateIDs(let facilities, let templates):
            "the reference data is ambiguous: "
                + [
                    facilities.isEmpty ? nil : "facility ids \(Self.list(facilities))",
                    templates.isEmpty ? nil : "template ids \(Self.list(templates))",
                ].compactMap { $0 }.joined(separator: " and ")
                + " each appear more than once. Nothing was changed. Each id must name one facility or template: "
                + "fix the file, or ask the server's administrator."
        }
    }

    static func list(_ ids: [String]) -> String {
        let shown = ids.prefix(10).map { TerminalText.singleLine(String($0.prefix(40))) }
        return shown.joined(separator: ", ") + (ids.count > 10 ? " (and \(ids.count - 10) more)" : "")
    }

    /// The ids that occur more than once, in the order they first repeat.
    static func repeated(_ ids: [String]) -> [String] {
        var seen: Set<String> = []
        var repeated: [String] = []
        for id in ids where !seen.insert(id).inserted && !repeated.contains(id) { repeated.append(id) }
        return repeated
    }
}

extension String {
    var trimmingWhiteSpace: String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}
