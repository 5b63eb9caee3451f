import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// Runs `Tools/verify-ledger` (Python, sharing no code with this package)
/// against logs written here, and checks that both agree.
@Suite struct IndependentVerifierTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }

    func pythonVerify(_ extra: [String] = []) throws -> (status: Int32, report: [String: Any]) {
        let result = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + [Products.repositoryFile("Tools/verify-ledger"), store] + extra)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (result.status, try #require(json, "verifier printed: \(result.stdout) \(result.stderr)"))
    }

    func writeLog() throws -> LedgerDigest {
        let log = try EventLog(directory: store)
        let clock = ManualClock()
        let streams = (0..<4).map { _ in UUID() }
        for i in 0..<60 {
            clock.advance(microseconds: 1)
            let payload = CBORValue.textMap([
                ("note", .text("ünïcode \(i)")), ("score", .double(i % 2 == 0 ? 87.5 : 0.1)),
                ("count", .integer(Int64(i) - 30)), ("flags", .array([.bool(true), .null])),
                ("big", .unsigned(UInt64(i) << 40)),
            ])
            try log.append([
                PendingEvent(
                    stream: streams[i % 4], type: "test.mixed", schemaVersion: 1, actor: SampleEvents.actor,
                    device: SampleEvents.device, recordedAt: clock.now(), payload: payload.encoded())
            ])
        }
        let head = try log.head()
        log.close()
        return head
    }

    @Test func agreesOnAnIntactLog() throws {
        let head = try writeLog()
        let (status, report) = try pythonVerify(["--digest", head.description])
        #expect(status == 0)
        #expect(report["ok"] as? Bool == true)
        #expect(report["head"] as? String == head.description)
        #expect(report["checked"] as? Int == 60)
        // The tree kept incrementally by the Swift appends has the root the
        // Python verifier recomputes from the leaves alone.
        let log = try EventLog(directory: store)
        defer { log.close() }
        let root = try log.read { try $0.treeRoot(size: 60) }
        #expect(report["tree_root"] as? String == Data(root.bytes).base64EncodedString())
        #expect(report["tree_size"] as? Int == 60)
    }

    @Test func agreesOnAChangedRecord() throws {
        _ = try writeLog()
        let env = try Environment(directory: store)
        let events = try #require(try env.table("events"))
        try env.write { txn in
            var value = try #require(try txn.get(events, BigEndian.bytes(33)))
            value[value.count - 3] ^= 0x01
            try txn.put(events, BigEndian.bytes(33), value)
        }
        env.close()
        let (status, report) = try pythonVerify()
        #expect(status == 1)
        let finding = try #require(report["finding"] as? [String: Any])
        #expect(finding["position"] as? Int == 33)
        let log = try EventLog(directory: store)
        #expect(try log.verify().finding?.position == 33)
    }
}
