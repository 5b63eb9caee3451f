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
            // As EventLog.write does before every commit.
            try writer.settleHeads()
        }
        let outcomes = try (0..<4).map { i in try log.append([event(stream, "b\(i)")]) }
        #expect(outcomes.map { $0[0].streamVersion } == [7, 8, 9, 10])
        #expect(outcomes.map { $0[0].position } == [7, 8, 9, 10])
        try checkLog(log)
    }

    /// Every key and value of the map of stream heads, and its root.
    func headsTable(_ log: EventLog) throws -> (rows: [[UInt8]: [UInt8]], root: Digest256?) {
        try log.read { reader in
            let table = try #require(reader.tables.heads)
            var rows: [[UInt8]: [UInt8]] = [:]
            try reader.transaction.forEach(table) { key, value in
                rows[Array(key)] = Array(value)
                return true
            }
            return (rows, try reader.headMapRoot())
        }
    }

    /// A batch sets each stream's head in the map once, before its commit
    /// (`LedgerWriter.settleHeads`): the map is the one the same records
    /// appended one per transaction leave, node for node, with the size of
    /// the whole log, for batches of one stream, of many, and interleaved.
    @Test(arguments: [(1, 1), (1, 12), (4, 3), (9, 5), (40, 2)])
    func aBatchLeavesTheMapRecordsOneByOneLeave(streams: Int, perStream: Int) throws {
        let ids = (0..<streams).map { _ in UUID() }
        var events: [PendingEvent] = []
        for round in 0..<perStream {
            for stream in ids { events.append(event(stream, "\(round)")) }
        }
        let batched = try EventLog(directory: directory.appending("batched"))
        defer { batched.close() }
        let single = try EventLog(directory: directory.appending("single"))
        defer { single.close() }
        // Two batches, so that the second sets heads over a map that holds some.
        let half = events.count / 2
        try batched.append(Array(events[..<half]))
        try batched.append(Array(events[half...]))
        for event in events { try single.append([event]) }
        let (batchedRows, batchedRoot) = try headsTable(batched)
        let (singleRows, singleRoot) = try headsTable(single)
        #expect(batchedRoot != nil, "the map holds every record (its size is the log's)")
        #expect(batchedRoot == singleRoot)
        #expect(batchedRows == singleRows)
        try checkLog(batched)
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
