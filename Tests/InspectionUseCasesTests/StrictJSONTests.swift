import Foundation
import InspectionDomain
import Testing

@testable import InspectionUseCases

/// The one strict reading of bundles and handover files: `JSONValue(parsing:)`
/// as the bundle tools read (repeated names kept, to be named; a lone
/// surrogate U+FFFD), then the member checks of `StrictObject`, the first
/// problem named by its path, in a handover file as in a bundle.
@Suite struct StrictJSONTests {
    @Test func theBundleToolsReadingKeepsRepeatedNamesAndReplacesLoneSurrogates() throws {
        let text = Array(#"{"a": "\ud800x", "a": "\udc00\ud83d\ude00"}"#.utf8)
        #expect(throws: DomainError.self) { try JSONValue(parsing: text) }
        let read = try JSONValue(parsing: text, .asTheBundleToolsRead)
        guard case .object(let members) = read else {
            Issue.record("not an object: \(read)")
            return
        }
        #expect(members.map(\.key) == ["a", "a"])
        #expect(members.map(\.value) == [.string("\u{FFFD}x"), .string("\u{FFFD}\u{1F600}")])
    }

    /// A handover file around `bundle` (the members after `format`, `mode`,
    /// `to` and `from_device`, which are well formed).
    static func handover(bundle: String, rest: String = #""template_record": {}, "photo_files": []"#) -> String {
        #"{"format": "jqc-handover/1", "mode": "handover", "to": null, "#
            + #""from_device": "0b0e4a8e-8f8c-4d5c-9a53-3f7f4b3d2c10", "bundle": \#(bundle), \#(rest)}"#
    }

    static let bundleStart = #"{"format": "jqc-proof-bundle/1", "inspection": "x", "checkpoint": "c", "#

    static let cases: [(input: String, reason: String)] = [
        (#"{"format": "jqc-handover/1", "format": "jqc-handover/1"}"#, #"member "format" appears twice in the file"#),
        (
            #"{"format": "jqc-handover/4"}"#,
            #"the file's format is "jqc-handover/4", not jqc-handover/1, jqc-handover/2 or jqc-handover/3"#
        ),
        (#"{"format": 2}"#, "format must be a string"),
        (
            "{\"format\": \"jqc-handover/1\", \"Mode\": 1, \"mode\": 2}",
            #"member "mode" differs from "Mode" only in case in the file"#
        ),
        (#"{"format": "jqc-handover/1", "extra": 1}"#, #"unknown member "extra" in the file"#),
        (handover(bundle: "[]"), "bundle must be an object"),
        (handover(bundle: #"{"records": [], "records": []}"#), #"member "records" appears twice in bundle"#),
        (
            handover(bundle: #"{"format": "jqc-proof-bundle/1", "consistency": {}}"#),
            #"unknown member "consistency" in bundle"#
        ),
        (
            handover(bundle: bundleStart + #""public_key": 5, "key_record": {}, "records": [], "photos": []}"#),
            "bundle.public_key must be a string"
        ),
        (
            handover(
                bundle: bundleStart
                    + #""public_key": "k", "key_record": {"position": 1, "stream_version": 1, "type": "t", "#
                    + #""record": "", "inclusion": []}, "records": [{"position": 5.0}], "photos": []}"#),
            #"member "stream_version" is missing from bundle.records[0]"#
        ),
        (
            handover(
                bundle: bundleStart
                    + #""public_key": "k", "key_record": {"position": 1, "stream_version": 1, "type": "t", "#
                    + #""record": "", "inclusion": []}, "records": [{"position": 5.0, "stream_version": 1, "#
                    + #""type": "t", "record": "", "inclusion": []}], "photos": []}"#),
            "bundle.records[0].position must be a whole number from 0 to 9223372036854775807"
        ),
        (
            handover(
                bundle: bundleStart
                    + #""public_key": "k", "key_record": {"position": 1, "stream_version": 1, "type": "t", "#
                    + #""record": "", "inclusion": []}, "records": [], "photos": []}"#),
            "bundle.inspection is not a lower-case UUID"
        ),
        (
            "{\"format\": \"\\ud800\"}",
            #"the file's format is "\u{fffd}", not jqc-handover/1, jqc-handover/2 or jqc-handover/3"#
        ),
        (String(repeating: "[", count: 65), "the file nests deeper than 64 levels"),
        (#"{"format": "jqc-handover/1"}}"#, "the file is not well-formed JSON"),
    ]

    @Test(arguments: cases)
    func aHandoverFileIsReadAsStrictlyAsABundleAndTheProblemNamedByItsPath(input: String, reason: String) {
        do {
            _ = try HandoverFile(decoding: Array(input.utf8))
            Issue.record("read: \(input)")
        } catch {
            #expect(error.reason == reason, "\(input)")
        }
    }

    /// The scanner both readers share: where each byte lies (o outside, s in
    /// a string, e escaped, c the closing quote), and the same when resumed
    /// after every possible split, as `HandoverFileReader` resumes it.
    static let places: [(text: String, places: String, depth: Int)] = [
        (#"{"a":[1]}"#, "oosco" + "oooo", 0),
        (#"["\\"]"#, "ooseco", 0),
        (#"{"\"[":{"#, "oosescoo", 2),
        (#""}"}"#, "osco", -1),
    ]

    @Test(arguments: places)
    func theScannerPlacesEachByteAndResumesAtAnySplit(_ text: String, _ places: String, _ depth: Int) {
        func run(_ parts: [ArraySlice<UInt8>]) -> (String, Int) {
            var scanner = StrictJSON.Scanner()
            var out = ""
            for part in parts {
                for byte in part {
                    switch scanner.place(of: byte) {
                    case .outside: out += "o"
                    case .inString: out += "s"
                    case .escaped: out += "e"
                    case .closingQuote: out += "c"
                    }
                }
            }
            return (out, scanner.depth)
        }
        let bytes = Array(text.utf8)
        #expect(run([bytes[...]]) == (places, depth), "\(text)")
        for split in 0...bytes.count {
            #expect(run([bytes[..<split], bytes[split...]]) == (places, depth), "\(text) split at \(split)")
        }
    }

    @Test func bytesThatAreNotUTF8AreNamedSo() {
        do {
            _ = try HandoverFile(decoding: [0x7B, 0xFF, 0x7D])
            Issue.record("read")
        } catch {
            #expect(error.reason == "the file is not UTF-8 text")
        }
    }
}
