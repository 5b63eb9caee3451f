import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

/// `jqc verify` and `jqc digest` through the built binary, on stores changed
/// with raw LMDB writes as an attacker with the file would.
@Suite struct VerifyCommandTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    var store: String { directory.appending("ledger") + "/store" }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"), environment: ["JQC_AS_TEST": "1"]).reportingKinds
        #expect(try jqc("init").status == 0)
        #expect(try jqc("pull", "--from", SampleReference.path).status == 0)
        let start = try jqc(
            "--as", "Dana", "--json", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center",
            "--area", "1001")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(start.stdout.utf8)) as? [String: Any])
        let id = try #require(object["id"] as? String)
        #expect(try jqc("--as", "Dana", "set", id, "Floors", "4").status == 0)
    }

    @Test func digestRefusesAHeadWhoseLinkDoesNotHold() throws {
        #expect(try jqc("digest").status == 0)
        let env = try Environment(directory: store)
        let table = try #require(try env.table("events"))
        try env.write { txn in
            let head = try #require(try txn.withCursor(table) { cursor in try cursor.last() })
            var value = head.1
            value[value.count - 3] ^= 0x01
            try txn.put(table, head.0, value)
        }
        env.close()
        let result = try jqc("digest")
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.errorKind == "JQCError.verificationFailed", "\(result.stderr)")
    }

    @Test func aPlantedStreamEntryIsNamedByItsKeyInJSON() throws {
        let env = try Environment(directory: store)
        let streams = try #require(try env.table("stream_index"))
        // Point the first entry of the inspection's stream at record 1 of another stream.
        var planted: [UInt8] = []
        try env.write { txn in
            try txn.withCursor(streams) { cursor in
                var entry = try cursor.first()
                while let (_, value) = entry, BigEndian.uint64(value) == 1 { entry = try cursor.next() }
                planted = try #require(entry).0
            }
            try txn.put(streams, planted, BigEndian.bytes(1))
        }
        env.close()
        let result = try jqc("--json", "verify")
        #expect(result.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["intact"] as? Bool == false)
        let finding = try #require(object["finding"] as? [String: Any])
        #expect((finding["key"] as? String)?.hasPrefix("stream_index[") == true)
        #expect((finding["position"] as? Int ?? 0) > 0)
    }
}
