import Foundation
import Testing

@testable import LedgerCore

@Suite struct EventRecordTests {
    let event = PendingEvent(
        id: UUID(uuidString: "11111111-2222-4333-8444-555555555555")!,
        stream: UUID(uuidString: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee")!, type: "inspection.field_set",
        schemaVersion: 2, actor: Actor(id: "7", name: "Dana Inspector", verified: false),
        device: UUID(uuidString: "00000000-0000-4000-8000-00000000d001")!,
        recordedAt: Timestamp(microsecondsSinceEpoch: 1_795_000_000_123_457),
        payload: CBORValue.textMap([("field", .text("5")), ("value", .text("pass"))]).encoded())

    @Test func roundTripsEveryField() throws {
        let record = EventRecord(position: 42, streamVersion: 3, event: event)
        let decoded = try EventRecord(decoding: record.encoded())
        #expect(decoded == record)
        #expect(decoded.recordedAt.microsecondsSinceEpoch == 1_795_000_000_123_457)
        #expect(decoded.actor.verified == false)
    }

    @Test func positionIsReadableFromTheFirstBytes() throws {
        let bytes = EventRecord(position: 1_000_000, streamVersion: 1, event: event).encoded()
        #expect(try EventRecord.position(ofEncoded: bytes) == 1_000_000)
        #expect(try EventRecord.position(ofEncoded: [0xFF] + bytes, at: 1) == 1_000_000)
    }

    @Test func encodingIsAValidDeterministicCBORMap() throws {
        let record = EventRecord(position: 9, streamVersion: 1, event: event)
        let value = try CBORValue(decoding: record.encoded())
        // Re-encoding the generic value gives the same bytes: the writer's key
        // order is the deterministic one.
        #expect(value.encoded() == record.encoded())
        guard case .map(let entries) = value else {
            Issue.record("not a map")
            return
        }
        #expect(entries.map(\.key) == (0...12).map { CBORValue.unsigned(UInt64($0)) })
    }

    @Test func refusesANewerFormat() {
        var bytes = EventRecord(position: 1, streamVersion: 1, event: event).encoded()
        bytes[2] = 0x03  // key 0's value: the format version
        #expect(throws: RecordError.unknownFormat(3)) { try EventRecord(decoding: bytes) }
    }

    @Test func theBackLinkIsKey13AndFormatOneRecordsReadAsTheyAre() throws {
        let link = SHA256Hasher().digest(Array("previous".utf8))
        let linked = EventRecord(position: 5, streamVersion: 2, event: event, previousInStream: link)
        let bytes = linked.encoded()
        #expect(try EventRecord(decoding: bytes) == linked)
        let header = try EventRecord.header(ofEncoded: bytes)
        #expect(header.previousInStream == link.bytes && header.format == 2)
        let old = EventRecord(position: 5, streamVersion: 2, event: event, format: 1)
        let oldBytes = old.encoded()
        #expect(oldBytes[2] == 0x01)
        let decoded = try EventRecord(decoding: oldBytes)
        #expect(decoded == old && decoded.encoded() == oldBytes)
    }

    @Test func refusesTruncatedRecords() {
        let bytes = EventRecord(position: 1, streamVersion: 1, event: event).encoded()
        #expect(throws: RecordError.self) { try EventRecord(decoding: Array(bytes.dropLast(3))) }
    }
}

@Suite struct HashChainTests {
    @Test func sha256MatchesTheStandardVectors() {
        let hasher = SHA256Hasher()
        #expect(
            hasher.digest(Array("abc".utf8)).hex
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hasher.digest([]).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // Parts are concatenated.
        #expect(hasher.digest(Array("a".utf8), Array("bc".utf8)) == hasher.digest(Array("abc".utf8)))
    }

    /// Both ways to SHA-256 (the library's own functions, used when it has
    /// them, and the envelope interface a hasher falls back to) give the
    /// standard vectors and the same digest for every kind of call, each
    /// hasher reused from one digest to the next.
    @Test(arguments: [false, true])
    func bothWaysToSHA256GiveTheSameDigests(envelope: Bool) {
        let hasher = SHA256Hasher(envelope: envelope)
        #expect(hasher.isDirect == !envelope, "Debian's libcrypto.so.3 has SHA256_Init")
        let other = SHA256Hasher(envelope: !envelope)
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                String(repeating: "a", count: 1_000_000),
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
            ),
        ]
        for (text, hex) in vectors {
            #expect(hasher.digest(Array(text.utf8)).hex == hex)
        }
        let a = hasher.digest([1]), b = hasher.digest([2])
        #expect(hasher.digest(a, b) == other.digest(a, b))
        #expect(hasher.digest(a, b) == other.digest(a.bytes, b.bytes))
        #expect(hasher.node(a, b) == other.digest([0x01] + a.bytes + b.bytes))
        let record = (0..<300).map { UInt8($0 & 0xFF) }
        #expect(
            hasher.digest(prefix: 0x00, record, range: 7..<250) == other.digest([0x00] + Array(record[7..<250])))
        hasher.begin()
        for chunk in stride(from: 0, to: record.count, by: 64) {
            hasher.add(record[chunk..<min(chunk + 64, record.count)])
        }
        #expect(hasher.end() == other.digest(record))
    }

    @Test func leafIsAnRFC6962LeafHash() {
        let chain = HashChain()
        let record: [UInt8] = Array("record".utf8)
        #expect(chain.leaf(ofRecord: record) == SHA256Hasher().digest([0x00] + record))
        #expect(chain.leaf(ofRecordIn: [9, 9] + record, range: 2..<8) == chain.leaf(ofRecord: record))
    }

    @Test func chainLinksPreviousAndLeaf() {
        let chain = HashChain()
        let first = chain.next(previous: .zero, record: [1])
        let second = chain.next(previous: first, record: [2])
        #expect(first == SHA256Hasher().digest(Digest256.zero.bytes, chain.leaf(ofRecord: [1]).bytes))
        #expect(second == SHA256Hasher().digest(first.bytes, chain.leaf(ofRecord: [2]).bytes))
        #expect(chain.next(previous: .zero, record: [2]) != second)
    }

    @Test func digestTextRoundTrips() {
        let digest = LedgerDigest(position: 1234, head: SHA256Hasher().digest([7]))
        #expect(LedgerDigest(digest.description) == digest)
        #expect(LedgerDigest("  \(digest)\n") == digest)
        #expect(LedgerDigest("jqc-digest-v1:12:abcd") == nil)
        #expect(LedgerDigest("something else") == nil)
    }
}
