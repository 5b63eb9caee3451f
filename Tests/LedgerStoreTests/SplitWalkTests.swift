import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Synchronization
import Testing

@testable import LedgerStore

/// A rebuild in partitions cuts the log into segments, one per thread, and
/// each thread deals its segment's records to the partitions that fold
/// them: every record must reach its partition exactly once, in log order,
/// and the records every partition needs must reach every one.
@Suite struct SplitWalkTests {
    let directory = TemporaryDirectory(prefix: "split-walk")
    let clock = ManualClock()

    @Test(arguments: [
        (UInt64(0), 2), (1, 2), (2, 4), (3, 2), (7, 3), (20_000, 2), (20_001, 8), (1_000_324, 2), (1_000_324, 8),
    ])
    func segmentsCoverEveryPositionOnceInOrder(total: UInt64, partitions: Int) {
        let split = SplitWalk(partitions: partitions, total: total)
        let segments = (0..<partitions).map(split.segment)
        // From the table's first key to its last.
        #expect(segments.first?.first == nil)
        #expect(segments.last?.end == nil)
        for k in 1..<partitions {
            // Each segment starts where the one before it ends.
            #expect(segments[k - 1].end == segments[k].first)
            #expect((segments[k - 1].first ?? 1) <= segments[k].first!)
        }
        // No segment is more than one position larger than another.
        let sizes = (0..<partitions - 1).map { segments[$0].end! - (segments[$0].first ?? 1) }
        if let largest = sizes.max(), let smallest = sizes.min() { #expect(largest - smallest <= 1) }
        // What each segment expects (the room its lists reserve, the last
        // one's too) is what it holds of a log with no gaps.
        for k in 0..<partitions - 1 { #expect(UInt64(split.expectedRecords(k)) == sizes[k]) }
        let last = total + 1 - (segments[partitions - 1].first ?? 1)
        #expect(UInt64(split.expectedRecords(partitions - 1)) == last)
        #expect((0..<partitions).map(split.expectedRecords).reduce(0, +) == Int(total))
    }

    /// A log of `count` events in `streams` streams, every `sharedEvery`-th
    /// of type "test.shared".
    func log(count: Int, streams: Int, sharedEvery: Int) throws -> (EventLog, [PendingEvent]) {
        let log = try EventLog(directory: directory.appending("store"))
        let ids = (0..<streams).map { _ in UUID() }
        var events: [PendingEvent] = []
        for i in 0..<count {
            clock.advance(microseconds: 1)
            events.append(
                SampleEvents.event(
                    stream: ids[i % streams], type: i % sharedEvery == 0 ? "test.shared" : "test.noted", at: clock.now()
                ))
        }
        _ = try log.append(events)
        return (log, events)
    }

    @Test(arguments: [(2, false), (3, false), (4, true)])
    func everyRecordIsDealtToItsPartitionOnceInLogOrder(partitions: Int, everyRecordToFirst: Bool) throws {
        let (log, events) = try log(count: 1_000, streams: 37, sharedEvery: 50)
        defer { log.close() }
        let split = SplitWalk(partitions: partitions, total: UInt64(events.count))
        var owned = [[UInt64]](repeating: [], count: partitions)
        var seen = [[UInt64]](repeating: [], count: partitions)
        var walked = 0
        try log.read { reader in
            var names = TextCache()
            for segment in 0..<partitions {
                let bounds = split.segment(segment)
                let dealt = try reader.routeRecords(
                    from: bounds.first, before: bounds.end, expecting: split.expectedRecords(segment),
                    among: partitions, sharedTypes: ["test.shared"], everyRecordToFirst: everyRecordToFirst)
                #expect(dealt.walked == split.expectedRecords(segment))
                walked += dealt.walked
                for (partition, records) in dealt.lists.enumerated() {
                    for routed in records {
                        // Read where it lies, as the partition's thread reads it.
                        let record = try LedgerReader.decode(routed, names: &names)
                        #expect(record.position == routed.position)
                        let home = LedgerReader.partition(
                            ofStreamLastByte: record.stream.uuid.15, among: partitions)
                        #expect(routed.owned == (home == partition))
                        if !routed.owned {
                            #expect(record.type == "test.shared" || (everyRecordToFirst && partition == 0))
                        }
                        if routed.owned {
                            owned[partition].append(routed.position)
                        } else {
                            seen[partition].append(routed.position)
                        }
                    }
                }
            }
        }
        #expect(walked == events.count)
        // Each position owned by exactly one partition, each list in log order.
        #expect(owned.flatMap { $0 }.sorted() == Array(1...UInt64(events.count)))
        for list in owned + seen { #expect(list == list.sorted()) }
        // Every shared record reaches every partition.
        let shared = events.indices.filter { $0 % 50 == 0 }.map { UInt64($0 + 1) }
        for partition in 0..<partitions {
            let reached = Set(owned[partition] + seen[partition])
            #expect(shared.allSatisfy(reached.contains))
            if everyRecordToFirst && partition == 0 { #expect(reached.count == events.count) }
        }
    }

    /// A record too short to hold its chain hash is named by its position,
    /// whichever segment deals it.
    @Test func aDamagedValueIsNamedWhereItIsDealt() throws {
        let (log, _) = try log(count: 10, streams: 3, sharedEvery: 100)
        try log.environment.write { txn in
            try txn.put(log.tables.events, BigEndian.bytes(UInt64(7)), Array(repeating: 0, count: 20))
        }
        defer { log.close() }
        #expect {
            try log.read { reader in
                _ = try reader.routeRecords(
                    from: 5, before: nil, among: 2, sharedTypes: [], everyRecordToFirst: false)
            }
        } throws: { error in
            guard case LedgerError.corruptRecord(let position, _) = error else { return false }
            return position == 7
        }
    }

    /// A damaged record in the last segment (dealt by another thread than
    /// the rebuild's) fails the rebuild with its position, and stops every
    /// partition without leaving a read transaction open.
    @Test(arguments: [UInt64(2), 4_500])
    func aDamagedRecordInAnySegmentFailsTheRebuild(position: UInt64) throws {
        let (log, _) = try log(count: 5_000, streams: 11, sharedEvery: 1_000)
        defer { log.close() }
        try log.environment.write { txn in
            try txn.put(log.tables.events, BigEndian.bytes(position), Array(repeating: 0, count: 20))
        }
        let views = try ProjectionSet(
            log: log, projections: [RebuildThreadTests.FailingView(failAt: 0, foldsByStream: true)],
            rebuildPartitions: 3)
        #expect {
            try views.rebuild()
        } throws: { error in
            guard case LedgerError.corruptRecord(let at, _) = error else { return false }
            return at == position
        }
        #expect(try log.environment.activeReaders() == 0)
    }

    /// Every key of the table is dealt by exactly one segment, in LMDB's own
    /// order: a damaged store's key of another length, before the first
    /// position or between two segments, is walked (and so reported), never
    /// skipped and never walked twice.
    @Test(arguments: [[UInt8(0)], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 1, 0xF5, 0]])
    func anyKeyIsWalkedByOneSegment(key: [UInt8]) throws {
        let (log, events) = try log(count: 1_000, streams: 5, sharedEvery: 1_000)
        defer { log.close() }
        try log.environment.write { txn in
            try txn.put(log.tables.events, key, Array(repeating: 0, count: 20))
        }
        let split = SplitWalk(partitions: 2, total: UInt64(events.count))
        var walked = 0
        var failures = 0
        try log.read { reader in
            for segment in 0..<2 {
                let bounds = split.segment(segment)
                do {
                    walked += try reader.routeRecords(
                        from: bounds.first, before: bounds.end, among: 2, sharedTypes: [],
                        everyRecordToFirst: false
                    ).walked
                } catch LedgerError.corruptRecord {
                    failures += 1
                }
            }
        }
        // The damaged entry stops the one segment that meets it.
        #expect(failures == 1)
        #expect(walked < events.count + 1)
    }

    /// When the system gives no thread for a partition (the first, or a
    /// later one after others started), the rebuild says so and folds the
    /// log on its own thread: the same count, every thread it started
    /// ended, no reader left open, and the next append goes through.
    @Test(arguments: [1, 2, 3])
    func aPartitionWithoutAThreadFallsBackToOneThread(failingAt: Int) throws {
        let (log, events) = try log(count: 3_000, streams: 17, sharedEvery: 500)
        defer { log.close() }
        let notices = NoticeLog()
        let views = try ProjectionSet(
            log: log, projections: [RebuildThreadTests.FailingView(failAt: 0, foldsByStream: true)],
            notice: { notices.add($0) }, rebuildPartitions: 4)
        let started = Locked(0)
        let threads: DetachedThread.Starter = { name, body throws(ThreadStartFailure) in
            guard started.next() + 1 < failingAt else { throw ThreadStartFailure(name: name, code: EAGAIN) }
            try DetachedThread.start(named: name, body)
        }
        let rebuilt = try views.rebuild(
            [any Projection]?.none, progress: ((UInt64, UInt64) -> Void)?.none,
            afterEachRecord: ((UInt64) -> Void)?.none, threads: threads)
        #expect(rebuilt == UInt64(events.count))
        #expect(notices.all.contains { $0.contains("could not start the thread jqc rebuild \(failingAt)") })
        #expect(notices.all.contains { $0.contains("rebuilding on one thread") })
        #expect(try log.environment.activeReaders() == 0)
        _ = try log.append([SampleEvents.event(stream: UUID(), at: clock.now())])
    }

    final class NoticeLog: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }
}
