import Foundation
import Testing

@testable import LedgerCore

/// Bytes nobody here wrote (a ledger kept by someone else, a damaged file)
/// must turn into an error, never a trap. Each case is one the issue named
/// or one the fuzz targets (`Tools/fuzz`) found; the fuzz corpus keeps the
/// same bytes under `Tests/Fuzz/corpus/`.
@Suite struct HostileBytesTests {
    /// Heads whose 64-bit length is far beyond the data: each used to reach
    /// `Int(...)` or a loop over the declared count unchecked.
    static let hugeLengths: [String] = [
        "bbffffffffffffffff",  // a map of 2^64 - 1 entries: the issue's nine bytes
        "9bffffffffffffffff",  // an array of 2^64 - 1 items
        "5bffffffffffffffff",  // a byte string of 2^64 - 1 bytes
        "7bffffffffffffffff",  // a text string of 2^64 - 1 bytes
        "bb7fffffffffffffff00",  // a map of Int.max entries
        "9b800000000000000000",  // an array longer than Int.max
        "7b000000010000000041",  // a text of 2^32 bytes with one byte left
        "a2016161",  // two entries, one present
        "6241", "4241", "8201", "a101",  // one byte short, counting the head's own byte
    ]

    @Test(arguments: hugeLengths)
    func aDeclaredLengthBeyondTheDataIsAnError(hex: String) throws {
        let bytes = try #require(Hex.decode(hex))
        #expect(throws: CBORError.self) { try CBORValue(decoding: bytes) }
        var reader = CBORReader(bytes)
        #expect(throws: CBORError.self) { try reader.skipItem() }
    }

    @Test(arguments: hugeLengths)
    func aRecordWithAHugeLengthIsMalformed(hex: String) throws {
        let bytes = try #require(Hex.decode(hex))
        #expect(throws: RecordError.self) { try EventRecord(decoding: bytes) }
        #expect(throws: RecordError.self) { try EventRecord.position(ofEncoded: bytes) }
    }

    @Test func theIssuesNineBytesNameTheLength() throws {
        let bytes: [UInt8] = [0xBB] + Array(repeating: 0xFF, count: 8)
        #expect(
            throws: RecordError.malformed(
                "CBOR item at byte 0 declares a length of 18446744073709551615 but only 0 bytes follow")
        ) { try EventRecord(decoding: bytes) }
    }

    @Test(arguments: [0x81, 0xA1] as [UInt8])
    func tenThousandNestedLevelsAreAnError(opener: UInt8) {
        // 0x81: an array of one item; 0xA1: a map of one entry (its key nests).
        let bytes = [UInt8](repeating: opener, count: 10_000) + [0x00, 0x00]
        #expect(throws: CBORError.nestedTooDeeply(offset: CBORReader.maximumDepth)) {
            try CBORValue(decoding: bytes)
        }
        var reader = CBORReader(bytes)
        #expect(throws: CBORError.nestedTooDeeply(offset: CBORReader.maximumDepth)) { try reader.skipItem() }
    }

    /// What a rebuild's partition reads of every record, over every prefix
    /// of a real record: an error for each cut, the stream's last byte and
    /// whether the type is shared once keys 0 to 5 are whole.
    @Test func aRecordCutAnywhereIsAnErrorToThePeek() throws {
        let stream = UUID()
        let event = PendingEvent(
            stream: stream, type: "inspection.field_set", schemaVersion: 2,
            actor: Actor(id: "u-1", name: "Dana", verified: true), device: UUID(),
            recordedAt: Timestamp(microsecondsSinceEpoch: 1), payload: CBORValue.textMap([("a", .null)]).encoded())
        let bytes = EventRecord(position: 300, streamVersion: 2, event: event).encoded()
        let shared = [Array("template.pinned".utf8), Array("inspection.field_set".utf8)]
        var whole = 0
        for cut in 0...bytes.count {
            let prefix = Array(bytes[0..<cut])
            do {
                let route = try EventRecord.route(ofEncoded: prefix.span.bytes, sharedTypes: shared)
                #expect(route == EventRecord.Route(streamLastByte: stream.uuid.15, isShared: true))
                let other = try EventRecord.route(ofEncoded: prefix.span.bytes, sharedTypes: [shared[0], []])
                #expect(!other.isShared)
                whole += 1
            } catch {
                #expect(!"\(error)".isEmpty)
            }
        }
        // Every prefix that holds keys 0 to 5 reads; the shorter ones fail.
        #expect(whole > 0 && whole < bytes.count)
    }

    /// The peek reads the same stream and type as the whole decode, for
    /// records of every position width (the stream's offset moves with it).
    @Test(arguments: [1, 23, 24, 255, 256, 65_535, 65_536, 1 << 32] as [UInt64])
    func thePeekAgreesWithTheDecode(position: UInt64) throws {
        let event = PendingEvent(
            stream: UUID(), type: "template.pinned", schemaVersion: 1,
            actor: Actor(id: "u-1", name: "Dana", verified: false), device: UUID(),
            recordedAt: Timestamp(microsecondsSinceEpoch: 1), payload: CBORValue.textMap([("a", .null)]).encoded())
        let bytes =
            [UInt8](repeating: 0xAA, count: 32)
            + EventRecord(position: position, streamVersion: 1, event: event).encoded()
        let decoded = try EventRecord(decoding: bytes, at: 32)
        let route = try EventRecord.route(
            ofEncoded: bytes.span.bytes, at: 32, sharedTypes: [Array(decoded.type.utf8)])
        #expect(route == EventRecord.Route(streamLastByte: decoded.stream.uuid.15, isShared: true))
    }

    @Test func nestingUpToTheLimitIsRead() throws {
        let depth = CBORReader.maximumDepth
        let bytes = [UInt8](repeating: 0x81, count: depth) + [0x07]
        var value = CBORValue.unsigned(7)
        for _ in 0..<depth { value = .array([value]) }
        #expect(try CBORValue(decoding: bytes) == value)
    }

    @Test func anOffsetOutsideTheBytesReadsAsTheirEnd() {
        for offset in [-5, 3, 100, Int.max] {
            let bytes: [UInt8] = [0x01, 0x02]
            var reader = CBORReader(bytes, offset: offset)
            let atEnd = reader.isAtEnd
            #expect(atEnd)
            #expect(throws: CBORError.truncated(offset: 2)) { try reader.readValue() }
        }
        #expect(throws: RecordError.self) { try EventRecord(decoding: [0xA0], at: 40) }
    }

    @Test func anIntegerBeyondIntIsOutOfRange() throws {
        let bytes = try #require(Hex.decode("3bffffffffffffffff"))
        var reader = CBORReader(bytes)
        #expect(throws: CBORError.outOfRange(offset: 0)) { try reader.readInt() }
    }

    /// A record's time is any Int64: formatting the extremes must not overflow.
    @Test(arguments: [Int64.min, Int64.min + 1, -1, Int64.max])
    func extremeTimestampsFormat(micros: Int64) {
        let text = Timestamp(microsecondsSinceEpoch: micros).iso8601
        #expect(text.hasSuffix("Z"))
    }

    @Test func negativeTimesKeepTheirFraction() {
        #expect(Timestamp(microsecondsSinceEpoch: -1).iso8601 == "1969-12-31T23:59:59.999999Z")
    }
}
