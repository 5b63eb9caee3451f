import InspectionDomain

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

    public var description: String {
        switch self {
        case .invalid(let why): "the reference data is not usable: \(why). Nothing was changed."
        }
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
