import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@_spi(RawAppend) @testable import LedgerStore

/// The memo one committed write leaves for the next (the tree's edge, the
/// streams' tips): used only on the head it was made at, so a head moved by
/// another writer or a transaction that did not commit never leaves a wrong
/// back-link, version or tree node behind.
@Suite struct WriterMemoTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }
    let clock = ManualClock()

    func event(_ stream: UUID, _ note: String) -> PendingEvent {
        clock.advance(microseconds: 1)
        return SampleEvents.event(stream: stream, note: note, at: clock.now())
    }

    /// The whole log checked as `jqc verify` does (chain, back-links, indexes,
    /// versions) and the tree's root against one recomputed from the records.
    func checkLog(_ log: EventLog) throws {
        let report = try log.verify()
        #expect(report.isIntact, "\(report)")
        let hasher = SHA256Hasher()
        try log.read { reader in
            var leaves: [Digest256] = []
            try reader.forEachStoredRecord { _, value in
                leaves.append(hasher.digest(prefix: 0, value, range: 32..<value.byteCount))
                return true
            }
            var frontier = MerkleFrontier(size: 0, subtrees: [])
            for leaf in leaves { frontier.append(leaf: leaf, hasher: hasher) { _, _, _ in } }
            #expect(try reader.treeRoot(size: UInt64(leaves.count)) == frontier.root(hasher))
        }
    }

    @Test func anAppendTheLogDidNotMakeIsSeenByTheNextWrite() throws {
        let log = try EventLog(directory: store)
        defer { log.close() }
        let stream = UUID()
        for i in 0..<5 { try log.append([event(stream, "a\(i)")]) }
        // Another writer's append (as another process's would be): the
        // log's memo is left at the old head.
        let tables = log.tables
        try log.environment.write { txn in
            let writer = try LedgerWriter(transaction: txn, tables: tables)
            try writer.append(event(stream, "behind"))
        }
        let outcomes = try (0..<4).map { i in try log.append([event(stream, "b\(i)")]) }
        #expect(outcomes.map { $0[0].streamVersion } == [7, 8, 9, 10])
        #expect(outcomes.map { $0[0].position } == [7, 8, 9, 10])
        try checkLog(log)
    }

    @Test func aTransactionThatFailedLeavesNothingForTheNextWrite() throws {
        struct Refused: Error {}
        let log = try EventLog(directory: store)
        defer { log.close() }
        let stream = UUID()
        for i in 0..<3 { try log.append([event(stream, "a\(i)")]) }
        #expect(throws: Refused.self) {
            try log.write { writer in
                try writer.append(event(stream, "rolled back"))
                try writer.append(event(UUID(), "rolled back too"))
                throw Refused()
            }
        }
        let outcome = try log.append([event(stream, "after")])
        #expect(outcome[0].position == 4)
        #expect(outcome[0].streamVersion == 4)
        try checkLog(log)
    }

    @Test func manyStreamsInOneTransactionKeepTheMemoBounded() throws {
        let log = try EventLog(directory: store)
        defer { log.close() }
        let streams = (0..<(WriterMemo.maxStreams + 10)).map { _ in UUID() }
        try log.append(streams.map { event($0, "first") })
        // The next writes load what the memo no longer holds from the store.
        for stream in streams.prefix(3) { try log.append([event(stream, "second")]) }
        #expect(try log.read { try $0.version(ofStream: streams[1]) } == 2)
        try checkLog(log)
    }
}
