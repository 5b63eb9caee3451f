import InspectionDomain
import Testing

@Suite struct JSONValueTests {
    static let roundTrips: [String] = [
        "null", "true", "false", "0", "-12.50", "1e-05", "\"\"", #""a\"b\\c\n\t\u0001é✓""#, "[]", "{}",
        #"{"a":[1,{"b":null}],"c":"d"}"#, "123456789012345678901234567890",
    ]

    @Test(arguments: roundTrips)
    func parsesAndWritesBack(text: String) throws {
        let value = try JSONValue(parsing: text)
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }

    @Test func keepsNumbersAsWritten() throws {
        #expect(try JSONValue(parsing: "12.50") == .number("12.50"))
        #expect(try JSONValue(parsing: "5").integerValue == 5)
        #expect(try JSONValue(parsing: "5.0").integerValue == nil)
        #expect(try JSONValue(parsing: "5e0").integerValue == nil)
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try JSONValue(parsing: #""\ud83d\ude00 \u00e9\/""#) == .string("😀 é/"))
    }

    @Test func objectsCompareWithoutOrder() throws {
        #expect(try JSONValue(parsing: #"{"a":1,"b":2}"#) == JSONValue(parsing: #"{"b":2,"a":1}"#))
        #expect(try JSONValue(parsing: #"{"a":1}"#) != JSONValue(parsing: #"{"a":1,"b":2}"#))
    }

    static let malformed: [(String, String)] = [
        ("", "JSON ends where a value belongs"), ("{", "expected a quoted object key"),
        ("[1,]", "unexpected character"),
        ("01", "unexpected text after the JSON value"), ("1.", "a fraction needs digits"),
        ("-", "a number needs a digit"),
        ("\"\u{01}\"", "control character"), (#""\x""#, "unknown escape"), (#""\ud83d""#, "lone UTF-16 surrogate"),
        (#"{"a":1,"a":2}"#, "duplicate object key"), ("tru", "unknown literal"), ("NaN", "unexpected character"),
        ("[1] [2]", "unexpected text after"),
    ]

    @Test(arguments: malformed)
    func refusesMalformedJSON(text: String, reason: String) {
        let error = #expect(throws: DomainError.self) { try JSONValue(parsing: text) }
        #expect(error?.description.contains(reason) == true, "\(String(describing: error))")
    }

    @Test func refusesDeepNesting() {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(throws: DomainError.self) { try JSONValue(parsing: deep) }
    }

    @Test func writesDoublesShortest() {
        #expect(JSONValue.double(100).serialized() == "100")
        #expect(JSONValue.double(83.33).serialized() == "83.33")
        #expect(JSONValue.double(.nan) == .null)
    }

    /// What `jqc --json` prints: keys sorted at every depth, two-space
    /// indentation, numbers as their literal text, empty containers on one line.
    @Test func prettyPrintsSortedWithExactNumbers() throws {
        let value = try JSONValue(parsing: #"{"b":[12.50,{"z":1,"a":true}],"a":null,"_":[],"c":{}}"#)
        let expected = """
            {
              "_": [],
              "a": null,
              "b": [
                12.50,
                {
                  "a": true,
                  "z": 1
                }
              ],
              "c": {}
            }
            """
        #expect(value.sortingKeys().prettyPrinted() == expected)
        #expect(try JSONValue(parsing: value.sortingKeys().prettyPrinted()) == value)
    }
}
