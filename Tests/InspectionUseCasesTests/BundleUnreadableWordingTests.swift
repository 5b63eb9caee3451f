import Testing

@testable import InspectionUseCases

/// The line jqc prints for each reason a bundle or a handover file is
/// unreadable, word for word as before the reasons were cases (the bundle
/// tools and `Tools/tests/test_proof_bundles.py` require the same lines).
@Suite struct BundleUnreadableWordingTests {
    static let leaf = String(repeating: "ab", count: 32)

    static let cases: [(BundleUnreadable, String)] = [
        (.notUTF8, "the file is not UTF-8 text"),
        (.tooDeep(document: "the bundle", maximumDepth: 64), "the bundle nests deeper than 64 levels"),
        (.notJSON(detail: "unexpected end"), "the file is not well-formed JSON"),
        (.repeatedMember(name: "a", place: "the bundle"), #"member "a" appears twice in the bundle"#),
        (
            .memberDiffersInCase(name: "A", earlier: "a", place: "bundle"),
            #"member "A" differs from "a" only in case in bundle"#
        ),
        (.unknownMember(name: "\u{7}\u{FFFD}", place: "the file"), #"unknown member "\u{7}\u{fffd}" in the file"#),
        (.missingMember(name: "inspection", place: "the bundle"), #"member "inspection" is missing from the bundle"#),
        (.documentNotAnObject(document: "the bundle"), "the bundle is not a JSON object"),
        (.wrongType(path: "bundle", expected: .object), "bundle must be an object"),
        (.wrongType(path: "format", expected: .string), "format must be a string"),
        (.wrongType(path: "records", expected: .array), "records must be an array"),
        (
            .wrongType(path: "photos[0].position", expected: .wholeNumber),
            "photos[0].position must be a whole number from 0 to 9223372036854775807"
        ),
        (
            .unknownFormat(document: "the bundle", found: "x\"", known: ["jqc-proof-bundle/1"]),
            #"the bundle's format is "x\u{22}", not jqc-proof-bundle/1"#
        ),
        (
            .unknownFormat(document: "the bundle", found: "b", known: ["jqc-proof-bundle/1", "jqc-proof-bundle/2"]),
            #"the bundle's format is "b", not jqc-proof-bundle/1 or jqc-proof-bundle/2"#
        ),
        (
            .unknownFormat(
                document: "the file", found: "f", known: ["jqc-handover/1", "jqc-handover/2", "jqc-handover/3"]),
            #"the file's format is "f", not jqc-handover/1, jqc-handover/2 or jqc-handover/3"#
        ),
        (.unknownMode, #"mode is neither "handover" nor "share""#),
        (.notLowerCaseUUID(path: "from_device"), "from_device is not a lower-case UUID"),
        (
            .notLowerCaseSHA256(path: "photo_files[0].sha256"),
            "photo_files[0].sha256 is not a SHA-256 in lower-case hex"
        ),
        (.notStandardBase64(path: "photo_files[0].data"), "photo_files[0].data is not standard base64 with padding"),
        (.notAHash(path: "bundle.records[0].inclusion[1]"), "bundle.records[0].inclusion[1] is not a 32-byte hash"),
        (
            .repeatedEntry(path: "carried_photo_files[1]", key: .sha256, value: leaf),
            "carried_photo_files[1] repeats the photo file \(leaf)"
        ),
        (
            .repeatedEntry(path: "carried_records[1]", key: .leaf, value: leaf),
            "carried_records[1] repeats leaf \(leaf)"
        ),
        (
            .outOfOrder(path: "carried_photo_files[1]", key: .sha256),
            "carried_photo_files[1] is out of order (the entries are sorted by sha256)"
        ),
        (
            .outOfOrder(path: "carried_records[1]", key: .leaf),
            "carried_records[1] is out of order (the entries are sorted by leaf)"
        ),
        (
            .wrongHash(path: "carried_photo_files[0].data", key: .sha256, stated: leaf),
            "carried_photo_files[0].data does not hash to its sha256 \(leaf)"
        ),
        (
            .wrongHash(path: "carried_records[0].record", key: .leaf, stated: leaf),
            "carried_records[0].record does not hash to its leaf \(leaf)"
        ),
        (
            .referencesUnreadable(path: "bundle.records[2].record", why: "w"),
            "bundle.records[2].record cannot be read: w"
        ),
        (
            .referencesInFirstFormat(why: "w"),
            "the file is of format jqc-handover/1, yet a reception it carries refers to records by leaf (w): "
                + "only a jqc-handover/2 file carries them"
        ),
        (.carriedRecordsIncomplete(why: "w"), "carried_records: w"),
        (.unreferencedLeaf(leaf: leaf), "carried_records holds leaf \(leaf), which no carried reception references"),
    ]

    @Test(arguments: cases)
    func eachReasonIsWordedAsBefore(_ reason: BundleUnreadable, _ words: String) {
        #expect(reason.description == "UNREADABLE: " + words)
        #expect(HandoverFile.Unreadable.strict(reason).reason == words)
    }

    @Test func onlyTextThatIsNotJSONCarriesADetail() {
        #expect(BundleUnreadable.notJSON(detail: "at 3").detail == "at 3")
        #expect(Self.cases.filter { $0.0.detail != nil }.count == 1)
    }

    @Test func aByteTheReaderStoppedAtIsNamedWithItsOffset() {
        let unreadable = HandoverFile.Unreadable.unexpectedByte(offset: 7, byte: 0x1F)
        #expect(unreadable.reason == "the file is not well-formed JSON (byte 0x1F at offset 7 cannot appear there)")
        #expect(
            unreadable.description
                == "UNREADABLE: the file is not well-formed JSON (byte 0x1F at offset 7 cannot appear there); nothing "
                + "was recorded. Ask the sender for the file again ('jqc handover ID -o FILE' writes it again).")
    }
}
