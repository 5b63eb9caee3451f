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

    /// Characters a terminal acts on, each written as `\uXXXX` by every JSON
    /// writer: C1 controls (U+009B is a CSI by itself), DEL, bidi marks,
    /// embeddings, overrides and isolates, and the line and paragraph
    /// separators; the JSON still reads back as the exact text.
    static let terminalActive: [(UInt32, String)] = [
        (0x7F, #"\u007f"#), (0x80, #"\u0080"#), (0x85, #"\u0085"#), (0x9B, #"\u009b"#), (0x9F, #"\u009f"#),
        (0x061C, #"\u061c"#), (0x200E, #"\u200e"#), (0x200F, #"\u200f"#), (0x2028, #"\u2028"#),
        (0x2029, #"\u2029"#), (0x202A, #"\u202a"#), (0x202B, #"\u202b"#), (0x202C, #"\u202c"#),
        (0x202D, #"\u202d"#), (0x202E, #"\u202e"#), (0x2066, #"\u2066"#), (0x2067, #"\u2067"#),
        (0x2068, #"\u2068"#), (0x2069, #"\u2069"#), (0x1B, #"\u001b"#),
    ]

    @Test(arguments: terminalActive)
    func escapesWhatATerminalActsOn(codePoint: UInt32, escaped: String) throws {
        let text = "a" + String(Unicode.Scalar(codePoint)!) + "b"
        let value = JSONValue.object([.init(text, .string(text))])
        #expect(value.serialized() == "{\"a\(escaped)b\":\"a\(escaped)b\"}")
        #expect(value.prettyPrinted() == "{\n  \"a\(escaped)b\": \"a\(escaped)b\"\n}")
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }

    /// Printable text next to those ranges is written as it is: U+00A0 and
    /// U+00E9 share the C1 controls' first UTF-8 byte, U+2027, U+202F and
    /// U+206A border the bidi ranges, U+061B borders U+061C.
    @Test(arguments: [0xA0, 0xE9, 0x061B, 0x200D, 0x2027, 0x202F, 0x2065, 0x206A, 0x1F9EF] as [UInt32])
    func writesPrintableNeighboursAsTheyAre(codePoint: UInt32) {
        let text = "a" + String(Unicode.Scalar(codePoint)!) + "b"
        #expect(JSONValue.string(text).serialized() == "\"\(text)\"")
    }
}
