// MARK: - Decoding the server's JSON

extension Template {
    /// Decodes one template as `GET /templates/{id}` sends it:
    /// `{id, name, version, form_schema: {fields: [...]}}`, then validates it.
    ///
    /// `form_schema` may also be the list of fields itself, or either form
    /// as a JSON string (the app once stored it that way). Unknown keys are
    /// ignored: the server may add display hints this program does not use.
    public init(json: JSONValue) throws(DomainError) {
        guard case .object = json else {
            throw .invalidTemplate(template: "(unnamed)", reason: "a template is a JSON object, not \(json.kindName)")
        }
        let rawID = json["id"] ?? .null
        let idName = rawID.stringValue ?? rawID.serialized()
        let id = try RecordID.normalize(json: rawID, what: "template id")
        guard let name = json["name"]?.stringValue else {
            throw .invalidTemplate(template: idName, reason: "\"name\" is missing or not a string")
        }
        let label = "\(id) \"\(name)\""
        guard let versionValue = json["version"], let version = Self.wholeNumber(versionValue), version >= 0 else {
            throw .invalidTemplate(template: label, reason: "\"version\" is missing or not a whole number")
        }
        var schema = json["form_schema"] ?? .null
        if case .string(let text) = schema {
            schema = try JSONValue(parsing: text)
        }
        let list: [JSONValue]
        switch schema {
        case .array(let items): list = items
        case .object:
            guard let items = schema["fields"]?.arrayValue else {
                throw .invalidTemplate(template: label, reason: "\"form_schema\" has no \"fields\" list")
            }
            list = items
        default:
            throw .invalidTemplate(template: label, reason: "\"form_schema\" is missing or not an object")
        }
        var fields: [TemplateField] = []
        fields.reserveCapacity(list.count)
        for (index, item) in list.enumerated() {
            fields.append(try TemplateField(json: item, template: label, index: index))
        }
        self.init(id: id, name: name, version: version, fields: fields)
        try validate()
    }

    /// Decodes a template from JSON text.
    public init(jsonText: String) throws(DomainError) {
        try self.init(json: try JSONValue(parsing: jsonText))
    }

    /// Decodes the list `GET /templates` returns (or the fixture file).
    public static func list(json: JSONValue) throws(DomainError) -> [Template] {
        guard case .array(let items) = json else {
            throw .invalidTemplate(template: "(list)", reason: "a template list is a JSON array, not \(json.kindName)")
        }
        var templates: [Template] = []
        for item in items { templates.append(try Template(json: item)) }
        return templates
    }

    /// A whole number given as a JSON integer or a string of digits.
    static func wholeNumber(_ value: JSONValue) -> Int? {
        if let integer = value.integerValue { return Int(exactly: integer) }
        if let text = value.stringValue, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return Int(text)
        }
        return nil
    }

    // MARK: - JSON output

    /// The template in its canonical shape as JSON (the `template` of a
    /// `template.pinned` export; see `Schemas/template.schema.json`).
    public var jsonValue: JSONValue {
        .object([
            .init("id", .string(id)), .init("name", .string(name)), .init("version", .integer(version)),
            .init("fields", .array(fields.map(\.jsonValue))),
        ])
    }
}

extension TemplateField {
    init(json: JSONValue, template: String, index: Int) throws(DomainError) {
        guard case .object = json else {
            throw .invalidTemplate(template: template, reason: "field \(index + 1) is \(json.kindName), not an object")
        }
        let id: FieldID
        do {
            id = FieldID(rawValue: try FieldID.normalize(json: json["id"] ?? .null))
        } catch {
            throw .invalidID(
                what: "field id (field \(index + 1) of template \(template))", raw: error.raw, reason: error.reason)
        }
        let label = json["label"]?.stringValue ?? ""
        guard let typeName = json["type"]?.stringValue else {
            throw .invalidTemplate(template: template, reason: "field \(id) \"\(label)\" has no \"type\"")
        }
        guard let type = FieldType(rawValue: typeName) else {
            throw .unknownFieldType(template: template, field: id, label: label, type: typeName)
        }
        let description = FieldDescription(id: id, label: label, type: type)
        func refuse(_ reason: String) -> DomainError {
            .invalidTemplateField(template: template, field: description, reason: reason)
        }
        guard json["label"]?.stringValue != nil else { throw refuse("has no \"label\" string") }
        var required = false
        switch json["required"] {
        case nil, .null?: break
        case .bool(let flag)?: required = flag
        case let other?: throw refuse("has \"required\" as \(other.kindName), not a boolean")
        }
        func strings(_ key: String) throws(DomainError) -> [String]? {
            switch json[key] {
            case nil, .null?: return nil
            case .array(let items)?:
                var out: [String] = []
                for item in items {
                    guard let text = item.stringValue else { throw refuse("has \"\(key)\" holding \(item.kindName)") }
                    out.append(text)
                }
                return out
            case let other?: throw refuse("has \"\(key)\" as \(other.kindName), not a list of strings")
            }
        }
        func layout(_ key: String) throws(DomainError) -> Int {
            guard let value = json[key] else { throw refuse("has no \"\(key)\" (layout on the 12-column grid)") }
            guard let number = Template.wholeNumber(value) else {
                throw refuse("has \"\(key)\" \(value.serialized()), not a whole number")
            }
            return number
        }
        self.init(
            id: id, type: type, label: label, required: required, options: try strings("options"),
            columns: try strings("columns"), col: try layout("col"), row: try layout("row"),
            colSpan: try layout("colSpan"), rowSpan: try layout("rowSpan"))
    }

    /// The field in its canonical shape as JSON; layout keys are snake_case
    /// like every key the ledger writes.
    public var jsonValue: JSONValue {
        var members: [JSONValue.Member] = [
            .init("id", .string(id.rawValue)), .init("type", .string(type.rawValue)),
            .init("label", .string(label)), .init("required", .bool(required)),
        ]
        if let options { members.append(.init("options", .array(options.map(JSONValue.string)))) }
        if let columns { members.append(.init("columns", .array(columns.map(JSONValue.string)))) }
        members += [
            .init("col", .integer(col)), .init("row", .integer(row)), .init("col_span", .integer(colSpan)),
            .init("row_span", .integer(rowSpan)),
        ]
        return .object(members)
    }
}
