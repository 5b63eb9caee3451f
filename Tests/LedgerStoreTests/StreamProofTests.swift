import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// One stream proven through the Merkle tree, without a walk of the log.
@Suite struct StreamProofTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }

    /// Streams A (odd positions) and B (even), five events each; a checkpoint of the first 10.
    func makeLog() throws -> (a: UUID, b: UUID, checkpoint: Checkpoint) {
        let log = try EventLog(directory: store)
        defer { log.close() }
        let clock = ManualClock()
        let (a, b) = (UUID(), UUID())
        for i in 0..<10 {
            clock.advance(microseconds: 10)
            try log.append([SampleEvents.event(stream: i % 2 == 0 ? a : b, note: "event \(i)", at: clock.now())])
        }
        let root = try log.read { try $0.treeRoot(size: 10) }
        return (a, b, Checkpoint(origin: "test", size: 10, root: root))
    }

    func prove(_ stream: UUID, _ checkpoint: Checkpoint? = nil) throws -> StreamProofReport {
        let log = try EventLog(directory: store)
        defer { log.close() }
        return try log.proveStream(stream, checkpoint: checkpoint)
    }

    func tamper(_ body: (Transaction, _ events: Table, _ streams: Table) throws -> Void) throws {
        let env = try Environment(directory: store)
        let events = try #require(try env.table("events"))
        let streams = try #require(try env.table("stream_index"))
        try env.write { txn in try body(txn, events, streams) }
        env.close()
    }

    @Test func anIntactStreamIsProvenAgainstItsCheckpoint() throws {
        let (a, _, checkpoint) = try makeLog()
        let log = try EventLog(directory: store)
        try log.append([SampleEvents.event(stream: a, note: "later", at: ManualClock().now())])
        log.close()
        let report = try prove(a, checkpoint)
        #expect(report.isIntact, "\(String(describing: report.finding))")
        #expect(report.proven == 6)
        #expect(report.treeSize == 11)
    }

    @Test func aRecordChangedInPlaceIsNamed() throws {
        let (a, _, checkpoint) = try makeLog()
        try tamper { txn, events, _ in
            var value = try #require(try txn.get(events, BigEndian.bytes(5)))
            value[value.count - 40] ^= 0x01
            try txn.put(events, BigEndian.bytes(5), value)
        }
        #expect(try prove(a, checkpoint).finding == .notInTree(position: 5))
    }

    @Test func aStreamEntryPointingAtAnotherStreamsRecordIsNamed() throws {
        let (a, _, checkpoint) = try makeLog()
        try tamper { txn, _, streams in try txn.put(streams, a.bytes + BigEndian.bytes(3), BigEndian.bytes(6)) }
        #expect(try prove(a, checkpoint).finding?.position == 6)
    }

    @Test func aRemovedIndexEntryIsCaughtByTheVersions() throws {
        let (a, _, checkpoint) = try makeLog()
        try tamper { txn, _, streams in _ = try txn.delete(streams, a.bytes + BigEndian.bytes(2)) }
        #expect(try prove(a, checkpoint).finding?.position == 5)
    }

    @Test func aTruncatedLogDoesNotExtendTheCheckpoint() throws {
        let (a, _, checkpoint) = try makeLog()
        try tamper { txn, events, _ in _ = try txn.delete(events, BigEndian.bytes(10)) }
        guard case .notExtended = try prove(a, checkpoint).finding else {
            Issue.record("a truncated log was proven")
            return
        }
    }
}
