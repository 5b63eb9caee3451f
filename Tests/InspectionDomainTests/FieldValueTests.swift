import Foundation
import InspectionDomain
import LedgerCore
import Testing

@Suite struct FieldValueTests {
    /// Which template a case uses: 11 "Restroom QC" or 22 "Office Area QC".
    static func template(_ id: String) throws -> Template {
        id == "11" ? try Samples.restroom() : try Samples.office()
    }

    // MARK: - Text input, accepted

    static let accepted: [(String, FieldID, String, FieldValue)] = [
        ("22", "2", " Ann Lee ", .text(" Ann Lee ")),
        ("22", "2", "", .text("")),
        ("11", "9", "Mop closet door sticks;\nsee photo", .text("Mop closet door sticks;\nsee photo")),
        ("22", "3", " ann.lee@harbor.example.com ", .text("ann.lee@harbor.example.com")),
        ("22", "4", "2026-02-28", .date(try! CalendarDate(year: 2026, month: 2, day: 28))),
        ("22", "4", "2024-02-29", .date(try! CalendarDate(year: 2024, month: 2, day: 29))),
        ("22", "5", "12.50", .number(try! ExactDecimal(parsing: "12.5"))),
        ("22", "5", "007", .number(try! ExactDecimal(parsing: "7"))),
        ("22", "5", "-0.0", .number(try! ExactDecimal(parsing: "0"))),
        ("22", "5", ".5", .number(try! ExactDecimal(parsing: "0.5"))),
        ("22", "5", "+4.", .number(try! ExactDecimal(parsing: "4"))),
        ("22", "5", "-3.750", .number(try! ExactDecimal(parsing: "-3.75"))),
        (
            "22", "5", "0.1000000000000000000000000000000000001",
            .number(try! ExactDecimal(parsing: "0.1000000000000000000000000000000000001"))
        ),
        ("22", "6", "evening", .option("Evening")),
        ("22", "6", " NIGHT ", .option("Night")),
        ("11", "8", "good", .option("Good")),
        ("22", "7", "lobby, desks", .options(["Desks", "Lobby"])),
        ("22", "7", "Conference rooms", .options(["Conference rooms"])),
        ("22", "7", "", .options([])),
        ("22", "7", #"["Kitchenette", "desks"]"#, .options(["Desks", "Kitchenette"])),
        ("22", "8", "0", .rating(0)),
        ("22", "8", "5", .rating(5)),
        ("22", "8", " 3 ", .rating(3)),
        ("22", "10", "PASS", .passFail(.pass)),
        ("22", "10", "fail", .passFail(.fail)),
        ("22", "10", "", .passFail(.unanswered)),
        ("22", "11", "n/a", .option("N/A")),
        ("22", "12", "Soap, 4, no; Towels,0,yes", .table([["Soap", "4", "no"], ["Towels", "0", "yes"]])),
        ("22", "12", #"[["Soap", "4", "no"]]"#, .table([["Soap", "4", "no"]])),
        ("22", "12", "", .table([])),
        ("22", "13", "yes", .bool(true)),
        ("22", "13", "TRUE", .bool(true)),
        ("22", "13", "1", .bool(true)),
        ("22", "13", "no", .bool(false)),
        ("22", "13", "False", .bool(false)),
        ("22", "13", "0", .bool(false)),
    ]

    @Test(arguments: accepted)
    func parsesWhatAPersonTypes(templateID: String, fieldID: FieldID, input: String, expected: FieldValue) throws {
        let field = Samples.field(try Self.template(templateID), fieldID)
        #expect(try FieldValue.parse(input, for: field) == expected)
    }

    // MARK: - Text input, refused

    static let refused: [(String, FieldID, String, String)] = [
        (
            "11", "2", "7",
            #"field 2 "Floors" (rating) refuses "7": a rating is a whole number from 0 to 5 (0 means unanswered)."#
        ),
        ("11", "2", "3.5", "a rating is a whole number from 0 to 5"),
        ("11", "2", "-1", "a rating is a whole number from 0 to 5"),
        ("11", "2", "four", "a rating is a whole number from 0 to 5"),
        ("11", "2", "", "a rating is a whole number from 0 to 5"),
        ("22", "5", "1e999", "without an exponent"),
        ("22", "5", "1.5E3", "without an exponent"),
        ("22", "5", "abc", "a number is digits"),
        ("22", "5", "", "at least one digit"),
        ("22", "5", "NaN", "a number is digits"),
        ("22", "5", "inf", "a number is digits"),
        ("22", "5", "1,000", "no thousands separators"),
        ("22", "5", "1.2.3", "a number is digits"),
        ("22", "5", "-", "at least one digit"),
        ("22", "5", "1234567890123456789012345678901234567890", "at most 38 significant digits"),
        ("22", "4", "2026-02-30", "2026-02 has no day 30"),
        ("22", "4", "2023-02-29", "2023-02 has no day 29"),
        ("22", "4", "2026-13-01", "there is no month 13"),
        ("22", "4", "0000-01-01", "the year must be from 0001"),
        ("22", "4", "26-01-01", "YYYY-MM-DD"),
        ("22", "4", "2026/01/01", "YYYY-MM-DD"),
        ("22", "4", "tomorrow", "YYYY-MM-DD"),
        ("22", "3", "ann", "an email address has one @"),
        ("22", "3", "ann@example", "an email address has one @"),
        ("22", "3", "ann lee@example.com", "an email address has one @"),
        ("22", "3", "@example.com", "an email address has one @"),
        ("22", "3", "ann@@example.com", "an email address has one @"),
        ("22", "3", "ann@example..com", "an email address has one @"),
        ("22", "3", "", "an email address has one @"),
        ("22", "13", "maybe", "a checkbox is true or false"),
        ("22", "13", "", "a checkbox is true or false"),
        (
            "22", "7", "Desks, Garage",
            #""Garage" is not offered; choose one of "Desks", "Kitchenette", "Conference rooms", "Lobby"."#
        ),
        ("22", "7", "Desks, desks", #""Desks" is chosen twice"#),
        ("22", "7", "[\"Desks\", 3]", "a checkbox group is a JSON array of strings"),
        ("22", "7", "[\"Desks\"", "not valid JSON"),
        ("22", "6", "Morning", #""Morning" is not offered; choose one of "Day", "Evening", "Night"."#),
        ("22", "6", "", "to leave it unanswered, clear the field"),
        ("11", "8", "Fine", "is not offered"),
        ("22", "10", "passed", "a pass_fail field is pass or fail"),
        ("22", "10", "yes", "a pass_fail field is pass or fail"),
        ("22", "12", "Soap,4,no;Towels", "row 2 has 1 cells, but the table has 3 columns"),
        ("22", "12", "Soap,4", "row 1 has 2 cells, but the table has 3 columns"),
        ("22", "12", #"[["Soap", "4", "no", "extra"]]"#, "row 1 has 4 cells"),
        ("22", "12", #"[["Soap", 4, "no"]]"#, "a table row is a JSON array of strings"),
    ]

    @Test(arguments: refused)
    func refusesWhatDoesNotFit(templateID: String, fieldID: FieldID, input: String, message: String) throws {
        let field = Samples.field(try Self.template(templateID), fieldID)
        let error = #expect(throws: DomainError.self) { try FieldValue.parse(input, for: field) }
        guard case .valueRefused(let named, let given, _)? = error else {
            Issue.record("expected valueRefused, got \(String(describing: error))")
            return
        }
        #expect(named == field.fieldDescription)
        #expect(given == input)
        #expect(error!.description.contains(message), "\(error!)")
        #expect(error!.description.hasPrefix("field \(field.id) \"\(field.label)\" (\(field.type)) refuses"))
    }

    static let notTyped: [(String, FieldID, DomainError)] = [
        ("11", "1", .displayOnlyField(FieldDescription(id: "1", label: "Restroom condition", type: .section))),
        (
            "22", "1",
            .displayOnlyField(
                FieldDescription(id: "1", label: "Complete every section. Ratings: 1 poor – 5 excellent.", type: .label)
            )
        ),
        ("11", "10", .photoFieldNeedsCapture(FieldDescription(id: "10", label: "Photo of problem area", type: .image))),
        (
            "11", "11",
            .photoFieldNeedsCapture(FieldDescription(id: "11", label: "Inspector signature", type: .signature))
        ),
    ]

    @Test(arguments: notTyped)
    func displayAndPhotoFieldsRefuseText(templateID: String, fieldID: FieldID, expected: DomainError) throws {
        let field = Samples.field(try Self.template(templateID), fieldID)
        let error = #expect(throws: DomainError.self) { try FieldValue.parse("anything", for: field) }
        #expect(error == expected)
    }

    @Test func photoFieldsPointToTheCommandThatAttachesFiles() throws {
        let field = Samples.field(try Samples.restroom(), "10")
        let error = #expect(throws: DomainError.self) { try FieldValue.parse("/tmp/x.jpg", for: field) }
        #expect(error?.description.contains("'jqc photo ID 10 FILE'") == true)
        let signature = Samples.field(try Samples.restroom(), "11")
        let refusal = #expect(throws: DomainError.self) { try FieldValue.parse("Dana", for: signature) }
        #expect(refusal?.description.contains("'jqc sign ID 11 FILE'") == true)
    }

    // MARK: - Typed values

    static let wrongKinds: [(FieldID, FieldValue, String)] = [
        ("8", .text("4"), "a rating is a whole number"),
        ("8", .rating(6), "a rating is a whole number from 0 to 5"),
        ("13", .text("true"), "a checkbox holds true or false"),
        ("6", .option("Dawn"), "is not offered"),
        ("7", .options(["Lobby", "LOBBY"]), "is chosen twice"),
        ("12", .table([["a"]]), "row 1 has 1 cells"),
        ("5", .text("12"), "a number field holds a decimal number"),
    ]

    @Test(arguments: wrongKinds)
    func validatesTypedValues(fieldID: FieldID, value: FieldValue, message: String) throws {
        let field = Samples.field(try Samples.office(), fieldID)
        let error = #expect(throws: DomainError.self) { try value.validated(for: field) }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }

    @Test func validationPutsChoicesInTheTemplatesForm() throws {
        let office = try Samples.office()
        #expect(try FieldValue.option("night").validated(for: Samples.field(office, "6")) == .option("Night"))
        #expect(
            try FieldValue.options(["lobby", "Desks"]).validated(for: Samples.field(office, "7"))
                == .options(["Desks", "Lobby"]))
    }

    @Test func photosMustHaveBytesAndAMediaType() throws {
        let field = Samples.field(try Samples.restroom(), "10")
        #expect(try FieldValue.photo(Samples.photo(1)).validated(for: field) == .photo(Samples.photo(1)))
        #expect(throws: DomainError.invalidPhoto(reason: "the file is empty (0 bytes)")) {
            try FieldValue.photo(Samples.photo(1, size: 0)).validated(for: field)
        }
        #expect(throws: DomainError.self) {
            try FieldValue.photo(Samples.photo(1, mediaType: "JPEG")).validated(for: field)
        }
    }

    @Test func emptinessFollowsTheDomain() throws {
        #expect(FieldValue.rating(0).isEmpty)
        #expect(FieldValue.passFail(.unanswered).isEmpty)
        #expect(FieldValue.text("  ").isEmpty)
        #expect(FieldValue.options([]).isEmpty)
        #expect(FieldValue.table([]).isEmpty)
        #expect(!FieldValue.bool(false).isEmpty)
        #expect(!FieldValue.rating(1).isEmpty)
        #expect(!FieldValue.number(try ExactDecimal(parsing: "0")).isEmpty)
    }

    // MARK: - JSON

    static let jsonAccepted: [(FieldID, String, FieldValue)] = [
        ("13", "true", .bool(true)),
        ("8", "4", .rating(4)),
        ("5", "12.50", .number(try! ExactDecimal(parsing: "12.5"))),
        ("5", "\"3\"", .number(try! ExactDecimal(parsing: "3"))),
        ("4", "\"2026-01-31\"", .date(try! CalendarDate(year: 2026, month: 1, day: 31))),
        ("7", #"["lobby", "Desks"]"#, .options(["Desks", "Lobby"])),
        ("6", "\"day\"", .option("Day")),
        ("10", "\"\"", .passFail(.unanswered)),
        ("12", #"[["Soap", "4", "no"]]"#, .table([["Soap", "4", "no"]])),
        ("2", "\"Ann\"", .text("Ann")),
    ]

    @Test(arguments: jsonAccepted)
    func readsJSONValues(fieldID: FieldID, json: String, expected: FieldValue) throws {
        let field = Samples.field(try Samples.office(), fieldID)
        #expect(try FieldValue(json: try JSONValue(parsing: json), for: field) == expected)
    }

    static let jsonRefused: [(FieldID, String, String)] = [
        ("13", "\"true\"", "a checkbox holds true or false (yes/no, 1/0). It was given a string."),
        ("13", "1", "It was given a number."),
        ("8", "4.0", "It was given a number"),
        ("8", "\"4\"", "It was given a string"),
        ("8", "9", "a rating is a whole number from 0 to 5"),
        ("5", "1e3", "without an exponent"),
        ("5", "true", "It was given a boolean"),
        ("7", "\"Desks\"", "a checkbox group is a JSON array of strings"),
        ("2", "null", "null means unanswered; clear the field instead"),
        ("4", "\"2026-02-31\"", "has no day 31"),
    ]

    @Test(arguments: jsonRefused)
    func refusesJSONOfTheWrongKind(fieldID: FieldID, json: String, message: String) throws {
        let field = Samples.field(try Samples.office(), fieldID)
        let error = #expect(throws: DomainError.self) { try FieldValue(json: try JSONValue(parsing: json), for: field) }
        #expect(error?.description.contains(message) == true, "\(String(describing: error))")
    }

    @Test func aPhotoReadsFromItsJSONObject() throws {
        let field = Samples.field(try Samples.office(), "14")
        let photo = Samples.photo(3)
        #expect(try FieldValue(json: FieldValue.photo(photo).jsonValue, for: field) == .photo(photo))
    }

    /// One value of every kind, each with a field that holds it.
    static func everyKind() throws -> [(TemplateField, FieldValue)] {
        let office = try Samples.office()
        let restroom = try Samples.restroom()
        return [
            (Samples.field(office, "2"), .text("Ann \"Lee\"\n")),
            (Samples.field(office, "3"), .text("ann@example.com")),
            (Samples.field(restroom, "9"), .text("Notes ✓")),
            (Samples.field(office, "5"), .number(try ExactDecimal(parsing: "-1234.5678"))),
            (Samples.field(office, "4"), .date(try CalendarDate(year: 2026, month: 3, day: 9))),
            (Samples.field(office, "13"), .bool(false)),
            (Samples.field(office, "7"), .options(["Desks", "Lobby"])),
            (Samples.field(office, "6"), .option("Evening")),
            (Samples.field(office, "11"), .option("N/A")),
            (Samples.field(office, "8"), .rating(4)),
            (Samples.field(office, "10"), .passFail(.fail)),
            (Samples.field(office, "10"), .passFail(.unanswered)),
            (Samples.field(office, "14"), .photo(Samples.photo(1))),
            (Samples.field(restroom, "10"), .photo(Samples.photo(2, mediaType: "image/png"))),
            (Samples.field(office, "12"), .table([["Soap", "4", "no"], ["Towels", "0", "yes"]])),
        ]
    }

    @Test func jsonRoundTripsEveryKind() throws {
        for (field, value) in try Self.everyKind() {
            let text = value.jsonValue.serialized()
            #expect(try FieldValue(json: try JSONValue(parsing: text), for: field) == value, "\(field.type)")
        }
    }

    @Test func numbersStayExactInJSON() throws {
        let value = try FieldValue.parse("0.10000000000000000001", for: Samples.field(try Samples.office(), "5"))
        #expect(value.jsonValue.serialized() == "0.10000000000000000001")
    }

    // MARK: - CBOR

    @Test func cborRoundTripsEveryKind() throws {
        for (field, value) in try Self.everyKind() {
            #expect(try FieldValue(cbor: value.cbor, for: field) == value, "\(field.type)")
            var writer = CBORWriter()
            value.write(to: &writer)
            #expect(writer.bytes == value.cbor.encoded(), "the fast writer agrees for \(field.type)")
        }
    }

    @Test func cborShapesAreTheDocumentedOnes() throws {
        #expect(FieldValue.number(try ExactDecimal(parsing: "12.50")).cbor == .text("12.5"))
        #expect(FieldValue.rating(3).cbor == .unsigned(3))
        #expect(FieldValue.date(try CalendarDate(year: 2026, month: 1, day: 2)).cbor == .text("2026-01-02"))
        #expect(FieldValue.passFail(.unanswered).cbor == .text(""))
        #expect(FieldValue.table([["a", "b"]]).cbor == .array([.array([.text("a"), .text("b")])]))
        let photo = Samples.photo(1)
        #expect(FieldValue.photo(photo).cbor["sha256"] == .text(photo.sha256.hex))
        #expect(FieldValue.photo(photo).cbor["size"] == .unsigned(48_213))
    }
}
