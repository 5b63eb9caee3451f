import Foundation
import InspectionDomain
import LedgerCore
import Testing

@Suite struct TemplateTests {
    // MARK: - The fixtures

    @Test func decodesTheServerFixtures() throws {
        let templates = try Samples.templates()
        #expect(templates.map(\.id) == ["11", "22"])
        #expect(templates.map(\.name) == ["Restroom QC", "Office Area QC"])
        let restroom = templates[0]
        #expect(restroom.version == 3)
        #expect(restroom.fields.map(\.id.rawValue) == (1...11).map(\.description))
        #expect(
            restroom.fields.map(\.type) == [
                .section, .rating, .rating, .rating, .passFail, .passFail, .checkbox, .radio, .textarea, .image,
                .signature,
            ])
        let floors = restroom.fields[1]
        #expect(floors.label == "Floors")
        #expect(floors.required)
        #expect((floors.col, floors.row, floors.colSpan, floors.rowSpan) == (1, 2, 4, 1))
        #expect(restroom.fields[3].required == false)
        #expect(restroom.fields[7].options == ["Good", "Acceptable", "Poor"])
        let office = templates[1]
        #expect(office.fields.map(\.id.rawValue) == (1...14).map(\.description))
        #expect(office.fields[11].columns == ["Item", "Count", "Reorder?"])
        #expect(office.fields.allSatisfy { $0.options == nil || $0.type.offersOptions })
    }

    @Test func idsAreNeverOptionalText() throws {
        for template in try Samples.templates() {
            #expect(!template.id.contains("Optional"))
            for field in template.fields {
                #expect(!field.id.rawValue.contains("Optional"))
                #expect(Int(field.id.rawValue) != nil)
            }
        }
    }

    // MARK: - Id normalisation

    static func template(fieldID: String) -> String {
        """
        {"id": 7, "name": "T", "version": 1, "form_schema": {"fields": [
          {"id": \(fieldID), "type": "text", "label": "L", "col": 1, "row": 1, "colSpan": 12, "rowSpan": 1}]}}
        """
    }

    static let normalisedIDs: [(String, String)] = [
        ("5", "5"), ("\"5\"", "5"), ("\"05\"", "5"), ("0", "0"), ("\"000\"", "0"), ("\" 7 \"", "7"),
        ("12345678901234", "12345678901234"), ("\"notes-2\"", "notes-2"), ("\"a.b_c\"", "a.b_c"),
    ]

    @Test(arguments: normalisedIDs)
    func normalisesFieldIDs(json: String, expected: String) throws {
        let template = try Template(jsonText: Self.template(fieldID: json))
        #expect(template.fields[0].id == FieldID(rawValue: expected))
    }

    static let refusedIDs: [(String, String)] = [
        ("5.5", "not a fraction"), ("5.0", "not a fraction"), ("1e2", "not a fraction"), ("\"\"", "must not be empty"),
        ("\"   \"", "must not be empty"), ("-3", "never negative"), ("true", "not a boolean"), ("null", "not null"),
        ("[5]", "not an array"), ("\"has space\"", "letters, digits"),
    ]

    @Test(arguments: refusedIDs)
    func refusesUnusableFieldIDs(json: String, reason: String) throws {
        let error = #expect(throws: DomainError.self) { try Template(jsonText: Self.template(fieldID: json)) }
        guard case .invalidID(let what, _, let why)? = error else {
            Issue.record("expected invalidID, got \(String(describing: error))")
            return
        }
        #expect(what.contains("field id"))
        #expect(why.contains(reason))
        #expect(error!.description.contains("Use a whole number"))
    }

    @Test func normalisesTemplateIDsGivenAsStrings() throws {
        let template = try Template(
            jsonText: #"{"id": "022", "name": "T", "version": "4", "form_schema": {"fields": []}}"#)
        #expect(template.id == "22")
        #expect(template.version == 4)
    }

    // MARK: - Decode errors

    static func field(_ extra: String, type: String = "text") -> String {
        """
        {"id": 1, "name": "Bad", "version": 1, "form_schema": {"fields": [
          {"id": 1, "type": "\(type)", "label": "Broken", "col": 1, "row": 1, "colSpan": 4, "rowSpan": 1\(extra)}]}}
        """
    }

    static let decodeErrors: [(String, String, String)] = [
        ("unknown type", field("", type: "slider"), "has the type \"slider\", which this jqc does not know"),
        ("radio without options", field("", type: "radio"), "offers no options; a radio field needs at least one"),
        ("empty options", field(#", "options": []"#, type: "select"), "offers no options"),
        ("blank option", field(#", "options": ["A", " "]"#, type: "select"), "has an empty option"),
        ("options twice", field(#", "options": ["Pass", "pass"]"#, type: "radio"), "offers \"pass\" twice"),
        ("table without columns", field("", type: "table"), "has no columns"),
        ("options not strings", field(#", "options": [1]"#, type: "radio"), "holding a number"),
        ("required not bool", field(#", "required": "yes""#), "\"required\" as a string"),
        (
            "col 13",
            #"{"id": 1, "name": "Bad", "version": 1, "form_schema": {"fields": [{"id": 1, "type": "text", "label": "Broken", "col": 13, "row": 1, "colSpan": 1, "rowSpan": 1}]}}"#,
            "outside columns 1–12"
        ),
        (
            "past the grid",
            #"{"id": 1, "name": "Bad", "version": 1, "form_schema": {"fields": [{"id": 1, "type": "text", "label": "Broken", "col": 9, "row": 1, "colSpan": 5, "rowSpan": 1}]}}"#,
            "runs past column 12"
        ),
        (
            "row span 0",
            #"{"id": 1, "name": "Bad", "version": 1, "form_schema": {"fields": [{"id": 1, "type": "text", "label": "Broken", "col": 1, "row": 1, "colSpan": 1, "rowSpan": 0}]}}"#,
            "spans 0 rows"
        ),
        (
            "layout missing",
            #"{"id": 1, "name": "Bad", "version": 1, "form_schema": {"fields": [{"id": 1, "type": "text", "label": "Broken", "col": 1, "row": 1, "colSpan": 1}]}}"#,
            "has no \"rowSpan\""
        ),
        (
            "layout fraction",
            #"{"id": 1, "name": "Bad", "version": 1, "form_schema": {"fields": [{"id": 1, "type": "text", "label": "Broken", "col": 1.5, "row": 1, "colSpan": 1, "rowSpan": 1}]}}"#,
            "\"col\" 1.5, not a whole number"
        ),
        (
            "duplicate ids",
            #"{"id": 1, "name": "Bad", "version": 1, "form_schema": {"fields": [{"id": 5, "type": "text", "label": "A", "col": 1, "row": 1, "colSpan": 1, "rowSpan": 1}, {"id": "5", "type": "text", "label": "B", "col": 1, "row": 2, "colSpan": 1, "rowSpan": 1}]}}"#,
            "two fields have the id 5"
        ),
        ("no name", #"{"id": 1, "version": 1, "form_schema": {"fields": []}}"#, "\"name\" is missing"),
        (
            "fractional version", #"{"id": 1, "name": "T", "version": 1.5, "form_schema": {"fields": []}}"#,
            "\"version\""
        ),
        ("no form schema", #"{"id": 1, "name": "T", "version": 1}"#, "\"form_schema\" is missing"),
        ("not JSON", #"{"id": 1,"#, "The JSON could not be read"),
    ]

    @Test(arguments: decodeErrors)
    func refusesBrokenTemplates(name: String, json: String, message: String) {
        let error = #expect(throws: DomainError.self, "\(name)") { try Template(jsonText: json) }
        #expect(error?.description.contains(message) == true, "\(name): \(String(describing: error))")
    }

    @Test func anUnknownTypeIsNamed() {
        let error = #expect(throws: DomainError.self) { try Template(jsonText: Self.field("", type: "slider")) }
        #expect(error == .unknownFieldType(template: "1 \"Bad\"", field: "1", label: "Broken", type: "slider"))
    }

    @Test func acceptsAFormSchemaThatIsTheFieldList() throws {
        let template = try Template(
            jsonText: #"""
                {"id": 3, "name": "T", "version": 1, "form_schema":
                  [{"id": 1, "type": "checkbox", "label": "Done", "col": 1, "row": 1, "colSpan": 2, "rowSpan": 1}]}
                """#)
        #expect(template.fields.map(\.type) == [.checkbox])
    }

    // MARK: - Canonical form and hash

    /// Computed independently with Python's cbor2 (canonical=True) from the
    /// fixture JSON, so a change of the encoding cannot go unnoticed.
    static let pinnedHashes = [
        "11": "47e2316f15b7684032a04e56b90565942f76373858cbb0491e1114ab205af27c",
        "22": "e8e9e19b8aea3fa27f680178a21414c68c2ee356ba0e23e5fea6daac39c13ba2",
    ]

    @Test func contentHashIsStable() throws {
        for template in try Samples.templates() {
            #expect(template.contentHash == Self.pinnedHashes[template.id])
            // The same template read back from its canonical bytes hashes the same.
            let decoded = try Template(cbor: try CBORValue(decoding: template.canonicalCBOR.encoded()))
            #expect(decoded.contentHash == template.contentHash)
        }
    }

    @Test func canonicalCBORRoundTrips() throws {
        for template in try Samples.templates() {
            let bytes = template.canonicalCBOR.encoded()
            let decoded = try Template(cbor: try CBORValue(decoding: bytes))
            #expect(decoded == template)
            #expect(decoded.canonicalCBOR.encoded() == bytes)
            #expect(decoded.contentHash == template.contentHash)
        }
    }

    @Test func keyOrderOfTheServerJSONDoesNotChangeTheHash() throws {
        let a = try Template(
            jsonText: #"""
                {"id": 1, "name": "T", "version": 2, "form_schema": {"fields": [
                  {"id": 1, "type": "radio", "label": "Odor", "options": ["Good", "Poor"], "col": 1, "row": 1, "colSpan": 6, "rowSpan": 1}]}}
                """#)
        let b = try Template(
            jsonText: #"""
                {"form_schema": {"fields": [{"rowSpan": 1, "colSpan": 6, "row": 1, "col": 1, "options": ["Good", "Poor"],
                  "label": "Odor", "type": "radio", "required": false, "id": "1"}]}, "version": 2, "name": "T", "id": "1"}
                """#)
        #expect(a == b)
        #expect(a.contentHash == b.contentHash)
    }

    @Test func anyChangeChangesTheHash() throws {
        let base = try Samples.restroom()
        var renamed = base
        renamed.fields[1].label = "Floor"
        var moved = base
        moved.fields[1].row = 9
        var emptyColumns = base
        emptyColumns.fields[8].columns = []
        let hashes = [base, renamed, moved, emptyColumns].map(\.contentHash)
        #expect(Set(hashes).count == 4)
        // nil and [] are kept apart, so the pinned form decodes to exactly what was hashed.
        #expect(try Template(cbor: emptyColumns.canonicalCBOR) == emptyColumns)
    }

    @Test func aPinnedTemplateReadsBackEvenIfItBreaksTodaysRules() throws {
        var template = try Samples.restroom()
        template.fields[7].options = []
        #expect(throws: DomainError.self) { try template.validate() }
        #expect(try Template(cbor: template.canonicalCBOR) == template)
    }

    // MARK: - Finding fields

    static let lookups: [(String, String)] = [
        ("2", "2"), ("02", "2"), (" 2 ", "2"), ("Floors", "2"), ("floors", "2"), ("  FLOORS ", "2"),
        ("toilets and urinals", "3"), ("odor", "8"), ("11", "11"),
    ]

    @Test(arguments: lookups)
    func findsFieldsByIDOrLabel(reference: String, id: String) throws {
        #expect(try Samples.restroom().field(matching: reference).id == FieldID(rawValue: id))
    }

    @Test func anUnknownFieldListsTheCandidates() throws {
        let template = try Samples.restroom()
        let error = #expect(throws: DomainError.self) { try template.field(matching: "Flors") }
        guard case .unknownField(let reference, _, let candidates)? = error else {
            Issue.record("expected unknownField, got \(String(describing: error))")
            return
        }
        #expect(reference == "Flors")
        #expect(candidates.map(\.id.rawValue) == (2...11).map(\.description))
        #expect(error!.description.contains(#"2 "Floors", 3 "Toilets and urinals""#))
    }

    @Test func anAmbiguousLabelListsEveryMatch() throws {
        var template = try Samples.restroom()
        template.fields[3].label = "floors"
        let error = #expect(throws: DomainError.self) { try template.field(matching: "Floors") }
        guard case .ambiguousField(_, _, let candidates)? = error else {
            Issue.record("expected ambiguousField, got \(String(describing: error))")
            return
        }
        #expect(candidates.map(\.id) == ["2", "4"])
        #expect(error!.description.contains("Name the field by its id"))
        // The id still finds it.
        #expect(try template.field(matching: "4").label == "floors")
    }

    @Test func jsonOfTheCanonicalFormUsesSnakeCaseLayout() throws {
        let json = try Samples.restroom().jsonValue
        let field = json["fields"]?.arrayValue?[1]
        #expect(field?["col_span"] == .integer(4))
        #expect(field?["colSpan"] == nil)
        #expect(field?["options"] == nil)
        #expect(json["id"] == .string("11"))
    }
}
