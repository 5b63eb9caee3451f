import LedgerCore

// MARK: - Canonical CBOR

extension Template {
    /// The whole template as a deterministic text-keyed CBOR map:
    /// `{id, name, version, fields: [{id, type, label, required, options?,
    /// columns?, col, row, col_span, row_span}]}`. Absent options and
    /// columns are omitted, so `nil` and `[]` stay distinct and hash apart.
    public var canonicalCBOR: CBORValue {
        .textMap([
            ("id", .text(id)), ("name", .text(name)), ("version", .integer(Int64(version))),
            ("fields", .array(fields.map(\.canonicalCBOR))),
        ])
    }

    /// Decodes `canonicalCBOR` exactly.
    ///
    /// It checks the shape only, not the rules `validate()` applies to
    /// templates from the server: a template that was pinned must stay
    /// readable for its inspection forever, even if a later version of this
    /// program grows stricter.
    public init(cbor: CBORValue) throws(DomainError) {
        func refuse(_ reason: String) -> DomainError {
            .invalidTemplate(template: cbor["id"]?.textValue ?? "(pinned)", reason: "its pinned form \(reason)")
        }
        guard case .map = cbor else { throw refuse("is not a map") }
        guard let id = cbor["id"]?.textValue else { throw refuse("has no text \"id\"") }
        guard let name = cbor["name"]?.textValue else { throw refuse("has no text \"name\"") }
        guard let version = cbor["version"]?.integerValue, let versionInt = Int(exactly: version) else {
            throw refuse("has no integer \"version\"")
        }
        guard case .array(let items)? = cbor["fields"] else { throw refuse("has no \"fields\" array") }
        var fields: [TemplateField] = []
        fields.reserveCapacity(items.count)
        for item in items {
            guard let field = TemplateField(cbor: item) else {
                throw refuse("has a malformed field: \(item)")
            }
            fields.append(field)
        }
        self.init(id: id, name: name, version: versionInt, fields: fields)
    }
}

extension TemplateField {
    var canonicalCBOR: CBORValue {
        var pairs: [(String, CBORValue)] = [
            ("id", .text(id.rawValue)), ("type", .text(type.rawValue)), ("label", .text(label)),
            ("required", .bool(required)), ("col", .integer(Int64(col))), ("row", .integer(Int64(row))),
            ("col_span", .integer(Int64(colSpan))), ("row_span", .integer(Int64(rowSpan))),
        ]
        if let options { pairs.append(("options", .array(options.map(CBORValue.text)))) }
        if let columns { pairs.append(("columns", .array(columns.map(CBORValue.text)))) }
        return .textMap(pairs)
    }

    init?(cbor: CBORValue) {
        guard let id = cbor["id"]?.textValue, let typeName = cbor["type"]?.textValue,
            let type = FieldType(rawValue: typeName), let label = cbor["label"]?.textValue,
            case .bool(let required)? = cbor["required"]
        else { return nil }
        func int(_ key: String) -> Int? { cbor[key]?.integerValue.flatMap { Int(exactly: $0) } }
        func texts(_ key: String) -> [String]?? {
            guard let value = cbor[key] else { return .some(nil) }
            guard case .array(let items) = value else { return nil }
            let strings = items.compactMap(\.textValue)
            return strings.count == items.count ? .some(strings) : nil
        }
        guard let col = int("col"), let row = int("row"), let colSpan = int("col_span"),
            let rowSpan = int("row_span"), let options = texts("options"), let columns = texts("columns")
        else { return nil }
        self.init(
            id: FieldID(rawValue: id), type: type, label: label, required: required, options: options,
            columns: columns, col: col, row: row, colSpan: colSpan, rowSpan: rowSpan)
    }
}
