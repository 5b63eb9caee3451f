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

    static let handoverFormats = ["jqc-handover/1", "jqc-handover/2", "jqc-handover/3"]

    static let cases: [(input: String, reason: BundleUnreadable)] = [
        (
            #"{"format": "jqc-handover/1", "format": "jqc-handover/1"}"#,
            .repeatedMember(name: "format", place: "the file")
        ),
        (
            #"{"format": "jqc-handover/4"}"#,
            .unknownFormat(document: "the file", found: "jqc-handover/4", known: handoverFormats)
        ),
        (#"{"format": 2}"#, .wrongType(path: "format", expected: .string)),
        (
            "{\"format\": \"jqc-handover/1\", \"Mode\": 1, \"mode\": 2}",
            .memberDiffersInCase(name: "mode", earlier: "Mode", place: "the file")
        ),
        (#"{"format": "jqc-handover/1", "extra": 1}"#, .unknownMember(name: "extra", place: "the file")),
        (handover(bundle: "[]"), .wrongType(path: "bundle", expected: .object)),
        (handover(bundle: #"{"records": [], "records": []}"#), .repeatedMember(name: "records", place: "bundle")),
        (
            handover(bundle: #"{"format": "jqc-proof-bundle/1", "consistency": {}}"#),
            .unknownMember(name: "consistency", place: "bundle")
        ),
        (
            handover(bundle: bundleStart + #""public_key": 5, "key_record": {}, "records": [], "photos": []}"#),
            .wrongType(path: "bundle.public_key", expected: .string)
        ),
        (
            handover(
                bundle: bundleStart
                    + #""public_key": "k", "key_record": {"position": 1, "stream_version": 1, "type": "t", "#
                    + #""record": "", "inclusion": []}, "records": [{"position": 5.0}], "photos": []}"#),
            .missingMember(name: "stream_version", place: "bundle.records[0]")
        ),
        (
            handover(
                bundle: bundleStart
                    + #""public_key": "k", "key_record": {"position": 1, "stream_version": 1, "type": "t", "#
                    + #""record": "", "inclusion": []}, "records": [{"position": 5.0, "stream_version": 1, "#
                    + #""type": "t", "record": "", "inclusion": []}], "photos": []}"#),
            .wrongType(path: "bundle.records[0].position", expected: .wholeNumber)
        ),
        (
            handover(
                bundle: bundleStart
                    + #""public_key": "k", "key_record": {"position": 1, "stream_version": 1, "type": "t", "#
                    + #""record": "", "inclusion": []}, "records": [], "photos": []}"#),
            .notLowerCaseUUID(path: "bundle.inspection")
        ),
        (
            "{\"format\": \"\\ud800\"}",
            .unknownFormat(document: "the file", found: "\u{FFFD}", known: handoverFormats)
        ),
        (String(repeating: "[", count: 65), .tooDeep(document: "the file", maximumDepth: 64)),
    ]

    @Test(arguments: cases)
    func aHandoverFileIsReadAsStrictlyAsABundleAndTheProblemNamedByItsPath(input: String, reason: BundleUnreadable) {
        #expect(throws: HandoverFile.Unreadable.strict(reason), "\(input)") {
            try HandoverFile(decoding: Array(input.utf8))
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
        #expect(throws: HandoverFile.Unreadable.strict(.notUTF8)) {
            try HandoverFile(decoding: [0x7B, 0xFF, 0x7D])
        }
    }

    /// Text that is not JSON: the reader's own message goes with it, for
    /// standard error, and not into the line.
    @Test func textThatIsNotJSONCarriesTheReadersMessage() throws {
        let error = try #require(throws: HandoverFile.Unreadable.self) {
            try HandoverFile(decoding: Array(#"{"format": "jqc-handover/1"}}"#.utf8))
        }
        guard case .strict(.notJSON(let detail)) = error else {
            Issue.record("not refused as JSON: \(error)")
            return
        }
        #expect(!detail.isEmpty && error.reason == BundleUnreadable.notJSON(detail: "").verdict)
    }
}
