import FoundationEssentials
import LedgerCore

// The inspector's own events: `inspection.started`, `template.pinned`,
// `inspection.field_set`, `inspection.field_cleared`, `inspection.submitted`,
// `inspection.discarded`. Each payload's keys are its `Key` enum, which its
// CBOR, its JSON and its decoder share.

// MARK: - inspection.field_set

extension FieldAnswer {
    enum Key: String, PayloadKey {
        case fieldID = "field_id", fieldType = "field_type", value
        static let encodedKeys = encode()
    }

    /// The most frequent event, written by hand, keys in deterministic order
    /// ("value" < "field_id" < "field_type": shorter first).
    func payloadCBOR() -> [UInt8] {
        var writer = CBORWriter(reservingCapacity: 48)
        writer.writeMapHeader(count: 3)
        writer.write(text: Key.value.rawValue)
        value.write(to: &writer)
        writer.write(text: Key.fieldID.rawValue)
        writer.write(text: fieldID.rawValue)
        writer.write(text: Key.fieldType.rawValue)
        writer.write(text: fieldType.rawValue)
        return writer.bytes
    }

    var cbor: CBORValue {
        Key.map([(.fieldID, .text(fieldID.rawValue)), (.fieldType, .text(fieldType.rawValue)), (.value, value.cbor)])
    }

    var json: JSONValue {
        Key.object([
            (.fieldID, .string(fieldID.rawValue)), (.fieldType, .string(fieldType.rawValue)),
            (.value, value.jsonValue),
        ])
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> FieldAnswer {
        var fieldID: FieldID?
        var fieldType: FieldType?
        var valueOffset: Int?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .fieldID?: fieldID = FieldID(rawValue: try r.text())
            case .fieldType?: fieldType = try FieldType.read(from: &r)
            // Deterministic order puts "value" before "field_type", and the
            // value's meaning depends on the type: come back to it.
            case .value?: valueOffset = try r.skip()
            case nil: try r.skip()
            }
        }
        let type = try r.required(fieldType, Key.fieldType)
        var valueReader = r.rewound(to: try r.required(valueOffset, Key.value))
        let value = try FieldValue.read(from: &valueReader, type: type)
        return FieldAnswer(fieldID: try r.required(fieldID, Key.fieldID), fieldType: type, value: value)
    }
}

extension FieldType {
    static let encodedNames = allCases.map { Array($0.rawValue.utf8) }

    /// Reads a field type's name without making a `String` of it.
    static func read(from r: inout PayloadReader) throws(DomainError) -> FieldType {
        let start = r.reader.offset
        guard let index = try r.matchText(encodedNames) else {
            var again = r.rewound(to: start)
            throw r.malformed("unknown field type \"\(try again.text())\"")
        }
        return allCases[index]
    }
}

// MARK: - inspection.field_cleared

extension FieldCleared {
    enum Key: String, PayloadKey {
        case fieldID = "field_id"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map([(.fieldID, .text(fieldID.rawValue))]) }

    var json: JSONValue { Key.object([(.fieldID, .string(fieldID.rawValue))]) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> FieldCleared {
        var fieldID: FieldID?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .fieldID?: fieldID = FieldID(rawValue: try r.text())
            case nil: try r.skip()
            }
        }
        return FieldCleared(fieldID: try r.required(fieldID, Key.fieldID))
    }
}

// MARK: - inspection.started

extension InspectionStarted {
    enum Key: String, PayloadKey {
        case templateID = "template_id", templateHash = "template_hash", facilityID = "facility_id"
        case facilityName = "facility_name", areaID = "area_id", areaName = "area_name"
        case parent = "parent_inspection_id", parentServerID = "parent_server_id", prefilled
        static let encodedKeys = encode()
    }

    /// The keys of each answer under `prefilled` (`{field_id: {field_type, value}}`).
    enum PrefilledKey: String, PayloadKey {
        case fieldType = "field_type", value
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        var pairs: [(Key, CBORValue)] = [
            (.templateID, .text(templateID)), (.templateHash, .text(templateHash)),
            (.facilityID, .text(facilityID)), (.facilityName, .text(facilityName)),
            (.areaID, .optionalText(areaID)), (.areaName, .optionalText(areaName)),
            (.parent, .optionalText(parentInspectionID?.lowercased)),
            (
                .prefilled,
                .textMap(
                    prefilled.map { answer in
                        (
                            answer.fieldID.rawValue,
                            PrefilledKey.map([
                                (.fieldType, .text(answer.fieldType.rawValue)), (.value, answer.value.cbor),
                            ])
                        )
                    })
            ),
        ]
        // Written only when set, so every other start keeps the bytes it always had.
        if let parentServerID { pairs.append((.parentServerID, .text(parentServerID))) }
        return Key.map(pairs)
    }

    var json: JSONValue {
        var members: [(Key, JSONValue)] = [
            (.templateID, .string(templateID)), (.templateHash, .string(templateHash)),
            (.facilityID, .string(facilityID)), (.facilityName, .string(facilityName)),
            (.areaID, .optional(areaID)), (.areaName, .optional(areaName)),
            (.parent, .optional(parentInspectionID?.lowercased)),
        ]
        if let parentServerID { members.append((.parentServerID, .string(parentServerID))) }
        let answers: [JSONValue.Member] = prefilled.map { answer in
            .init(
                answer.fieldID.rawValue,
                PrefilledKey.object([
                    (.fieldType, .string(answer.fieldType.rawValue)), (.value, answer.value.jsonValue),
                ]))
        }
        return Key.object(members + [(.prefilled, .object(answers))])
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionStarted {
        var templateID: String?
        var templateHash: String?
        var facilityID: String?
        var facilityName: String?
        var areaID: String??
        var areaName: String??
        var parent: UUID??
        var parentServerID: String?
        var prefilled: [FieldAnswer]?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .templateID?: templateID = try r.text()
            case .templateHash?: templateHash = try r.text()
            case .facilityID?: facilityID = try r.text()
            case .facilityName?: facilityName = try r.text()
            case .areaID?: areaID = .some(try r.nullableText())
            case .areaName?: areaName = .some(try r.nullableText())
            case .parent?: parent = .some(try r.nullableUUID(Key.parent))
            case .parentServerID?: parentServerID = try r.text()
            case .prefilled?: prefilled = try readPrefilled(from: &r)
            case nil: try r.skip()
            }
        }
        return InspectionStarted(
            templateID: try r.required(templateID, Key.templateID),
            templateHash: try r.required(templateHash, Key.templateHash),
            facilityID: try r.required(facilityID, Key.facilityID),
            facilityName: try r.required(facilityName, Key.facilityName), areaID: try r.required(areaID, Key.areaID),
            areaName: try r.required(areaName, Key.areaName),
            parentInspectionID: try r.required(parent, Key.parent), parentServerID: parentServerID,
            prefilled: try r.required(prefilled, Key.prefilled))
    }

    /// `{field_id: {field_type, value}}`.
    static func readPrefilled(from r: inout PayloadReader) throws(DomainError) -> [FieldAnswer] {
        let count = try r.mapCount()
        var answers: [FieldAnswer] = []
        answers.reserveCapacity(count)
        for _ in 0..<count {
            let fieldID = FieldID(rawValue: try r.text())
            var fieldType: FieldType?
            var valueOffset: Int?
            for _ in 0..<(try r.mapCount()) {
                switch try r.key(PrefilledKey.self) {
                case .fieldType?: fieldType = try FieldType.read(from: &r)
                case .value?: valueOffset = try r.skip()
                case nil: try r.skip()
                }
            }
            let prefix = "\(Key.prefilled.rawValue).\(fieldID)."
            let type = try r.required(fieldType, prefix + PrefilledKey.fieldType.rawValue)
            var valueReader = r.rewound(to: try r.required(valueOffset, prefix + PrefilledKey.value.rawValue))
            answers.append(
                FieldAnswer(
                    fieldID: fieldID, fieldType: type, value: try FieldValue.read(from: &valueReader, type: type)))
        }
        return answers
    }
}

// MARK: - inspection.submitted

extension InspectionSubmitted {
    enum Key: String, PayloadKey {
        case score, followUpRequired = "follow_up_required"
        static let encodedKeys = encode()
    }

    var cbor: CBORValue {
        Key.map([(.score, score.map(CBORValue.double) ?? .null), (.followUpRequired, .bool(followUpRequired))])
    }

    var json: JSONValue {
        Key.object([(.score, score.map(JSONValue.double) ?? .null), (.followUpRequired, .bool(followUpRequired))])
    }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionSubmitted {
        var score: Double??
        var followUp: Bool?
        for _ in 0..<(try r.mapCount()) {
            switch try r.key(Key.self) {
            case .score?: score = .some(try r.isNull() ? nil : try r.double())
            case .followUpRequired?: followUp = try r.bool()
            case nil: try r.skip()
            }
        }
        return InspectionSubmitted(
            score: try r.required(score, Key.score), followUpRequired: try r.required(followUp, Key.followUpRequired))
    }
}

// MARK: - template.pinned

extension TemplatePinned {
    enum Key: String, PayloadKey {
        case templateHash = "template_hash", template
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map([(.templateHash, .text(templateHash)), (.template, template.canonicalCBOR)]) }

    var json: JSONValue { Key.object([(.templateHash, .string(templateHash)), (.template, template.jsonValue)]) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> TemplatePinned {
        var hash: String?
        var template: Template?
        for _ in 0..<(try r.mapCount()) {
            switch try r.namedKey(Key.self) {
            case .templateHash?: hash = try r.text()
            case .template?:
                let value = try r.value()
                do {
                    template = try Template(cbor: value)
                } catch {
                    throw r.malformed("the template cannot be read: \(error)")
                }
            case nil: try r.skip()
            }
        }
        return TemplatePinned(
            templateHash: try r.required(hash, Key.templateHash), template: try r.required(template, Key.template))
    }
}

// MARK: - inspection.discarded

extension InspectionDiscarded {
    enum Key: String, PayloadKey {
        case reason
        static let encodedKeys = encode()
    }

    var cbor: CBORValue { Key.map([(.reason, .optionalText(reason))]) }

    var json: JSONValue { Key.object([(.reason, .optional(reason))]) }

    static func read(from r: inout PayloadReader) throws(DomainError) -> InspectionDiscarded {
        var reason: String??
        for _ in 0..<(try r.mapCount()) {
            switch try r.namedKey(Key.self) {
            case .reason?: reason = .some(try r.nullableText())
            case nil: try r.skip()
            }
        }
        return InspectionDiscarded(reason: try r.required(reason, Key.reason))
    }
}
