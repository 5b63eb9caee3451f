import Foundation
import Testing

@testable import LedgerCore

@Suite struct CBORTests {
    /// Encodings from RFC 8949 Appendix A, in their deterministic form.
    static let vectors: [(CBORValue, String)] = [
        (.unsigned(0), "00"),
        (.unsigned(23), "17"),
        (.unsigned(24), "1818"),
        (.unsigned(255), "18ff"),
        (.unsigned(256), "190100"),
        (.unsigned(65_536), "1a00010000"),
        (.unsigned(1_000_000_000_000), "1b000000e8d4a51000"),
        (.unsigned(UInt64.max), "1bffffffffffffffff"),
        (.integer(-1), "20"),
        (.integer(-100), "3863"),
        (.integer(-1000), "3903e7"),
        (.text(""), "60"),
        (.text("IETF"), "6449455446"),
        (.text("ü"), "62c3bc"),
        (.bytes([1, 2, 3, 4]), "4401020304"),
        (.array([.unsigned(1), .array([.unsigned(2), .unsigned(3)])]), "8201820203"),
        (.bool(false), "f4"),
        (.bool(true), "f5"),
        (.null, "f6"),
        (.double(1.5), "f93e00"),
        (.double(100_000.0), "fa47c35000"),
        (.double(1.1), "fb3ff199999999999a"),
        (.double(-4.0), "f9c400"),
    ]

    @Test(arguments: vectors)
    func encodesDeterministically(value: CBORValue, hex: String) throws {
        #expect(Hex.encode(value.encoded()) == hex)
        #expect(try CBORValue(decoding: Hex.decode(hex)!) == value)
    }

    @Test func mapKeysAreSortedByTheirEncoding() {
        let map = CBORValue.textMap([("bb", .unsigned(1)), ("b", .unsigned(2)), ("a", .unsigned(3))])
        // a, b, bb: shorter encodings sort first, then bytewise.
        #expect(Hex.encode(map.encoded()) == "a3616103616202626262" + "01")
        #expect(CBORWriter.sortedTextKeys(["bb", "b", "a"]) == ["a", "b", "bb"])
    }

    @Test func equalMapsBuiltInAnyOrderEncodeTheSame() {
        let a = CBORValue.textMap([("x", .unsigned(1)), ("y", .text("two"))])
        let b = CBORValue.textMap([("y", .text("two")), ("x", .unsigned(1))])
        #expect(a.encoded() == b.encoded())
    }

    static let malformed: [(String, String)] = [
        ("19 01", "truncated"),
        ("62 c3", "truncated"),
        ("5f", "unsupported"),
        ("c0 00", "unsupported"),
        ("62 ff fe", "utf8"),
        ("00 00", "trailing"),
    ]

    @Test(arguments: malformed)
    func refusesMalformedInput(hex: String, kind: String) throws {
        let bytes = Hex.decode(hex.replacingOccurrences(of: " ", with: ""))!
        #expect(throws: CBORError.self) { try CBORValue(decoding: bytes) }
        do {
            _ = try CBORValue(decoding: bytes)
        } catch {
            switch (error, kind) {
            // A string longer than the bytes left is refused by its declared length.
            case (.truncated, "truncated"), (.lengthExceedsData, "truncated"), (.unsupported, "unsupported"),
                (.invalidUTF8, "utf8"),
                (.unsupported, "trailing"):
                break
            default:
                Issue.record("expected \(kind), got \(error)")
            }
        }
    }

    @Test func readerRefusesTheWrongType() throws {
        let bytes: [UInt8] = [0x64, 0x49, 0x45, 0x54, 0x46]
        var reader = CBORReader(bytes)
        #expect(throws: CBORError.unexpectedType(expected: "unsigned integer", found: 0x64, offset: 0)) {
            try reader.readUnsigned()
        }
        // A failed read leaves the reader where it was.
        #expect(try reader.readText() == "IETF")
    }

    /// Texts a hyphenated UUID is read from, and ones it is not (read as
    /// text instead, by Foundation's parser, as before the fast path).
    static let uuidTexts: [(text: String, fast: Bool)] = [
        ("6ba7b810-9dad-11d1-80b4-00c04fd430c8", true),
        ("6BA7B810-9DAD-11D1-80B4-00C04FD430C8", true),
        ("6Ba7b810-9DaD-11d1-80B4-00c04Fd430C8", true),
        ("00000000-0000-0000-0000-000000000000", true),
        ("ffffffff-ffff-ffff-ffff-ffffffffffff", true),
        ("6ba7b810-9dad-11d1-80b4-00c04fd430c", false),
        ("6ba7b810-9dad-11d1-80b4-00c04fd430c8a", false),
        ("6ba7b8109dad-11d1-80b4-00c04fd430c8-", false),
        ("6ba7b810-9dad-11d1-80b4-00c04fd430cg", false),
        ("6ba7b810 9dad 11d1 80b4 00c04fd430c8", false),
        ("{6ba7b810-9dad-11d1-80b4-00c04fd430}", false),
        ("6ba7b810-9dad-11d1-80b4-00c04fd430c\u{E9}", false),
        ("", false),
    ]

    @Test(arguments: uuidTexts.indices)
    func aHyphenatedUUIDIsReadAsFoundationReadsIt(index: Int) {
        let (text, fast) = Self.uuidTexts[index]
        let bytes = CBORValue.text(text).encoded() + [0xF6]
        var reader = CBORReader(bytes)
        let read = reader.readHyphenatedUUID()
        if fast {
            #expect(read == UUID(uuidString: text), "\(text)")
            #expect(read != nil)
            #expect(reader.offset == bytes.count - 1, "the text is stepped over")
        } else {
            #expect(read == nil, "\(text)")
            #expect(reader.offset == 0, "nothing is read")
            #expect(UUID(uuidString: text) == nil, "Foundation refuses it too")
        }
    }

    @Test func aUUIDTextNotInItsShortestHeadOrNotTextIsLeftForTheCaller() {
        let text = Array("6ba7b810-9dad-11d1-80b4-00c04fd430c8".utf8)
        for bytes in [[0x79, 0x00, 0x24] + text, [0x58, 0x24] + text, [0x78, 0x24] + text.dropLast()] {
            var reader = CBORReader(bytes)
            #expect(reader.readHyphenatedUUID() == nil)
            #expect(reader.offset == 0)
        }
    }

    @Test func skipItemReturnsTheItemsRange() throws {
        let value = CBORValue.array([.textMap([("a", .array([.unsigned(1), .null]))]), .unsigned(7)])
        let bytes = value.encoded()
        var reader = CBORReader(bytes)
        #expect(try reader.readArrayHeader() == 2)
        let range = try reader.skipItem()
        #expect(try CBORValue(decoding: Array(bytes[range])) == .textMap([("a", .array([.unsigned(1), .null]))]))
        #expect(try reader.readUnsigned() == 7)
        let atEnd = reader.isAtEnd
        #expect(atEnd)
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: true).joined(separator: replacement)
    }
}
