import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// A rebuild folds partitions of the log on threads of their own: whatever
/// ends the rebuild, those threads (and their read transactions) must have
/// ended with it.
@Suite struct RebuildThreadTests {
    let directory = TemporaryDirectory(prefix: "rebuild-thread")
    let clock = ManualClock()

    /// A view whose fold fails at one record.
    final class FailingView: Projection, Sendable {
        struct FoldFailed: Error {}
        let name = "failing"
        let version = 1
        /// Folded in partitions, each on a thread of its own.
        let foldsByStream: Bool
        var tableNames: [ViewTable] { [ViewTable("failing")] }
        let failAt: UInt64

        init(failAt: UInt64, foldsByStream: Bool = false) {
            self.failAt = failAt
            self.foldsByStream = foldsByStream
        }

        func apply(_ record: EventRecord, in context: ProjectionContext) throws {}

        func makeRebuilder(scratch: ProjectionScratch) -> any ProjectionRebuilder { Rebuilder(failAt: failAt) }

        struct Rebuilder: ProjectionRebuilder {
            let failAt: UInt64
            mutating func consume(_ record: EventRecord) throws {
                if record.position == failAt { throw FoldFailed() }
            }
            mutating func absorb(_ other: any ProjectionRebuilder) throws {}
            func write(in context: ProjectionContext) throws {}
        }
    }

    func logWith(events count: Int) throws -> EventLog {
        let log = try EventLog(directory: directory.appending("store"))
        try Self.append(count, to: log, clock: clock)
        return log
    }

    static func append(_ count: Int, to log: EventLog, clock: ManualClock) throws {
        var events: [PendingEvent] = []
        for _ in 0..<count {
            clock.advance(microseconds: 1)
            events.append(SampleEvents.event(stream: UUID(), at: clock.now()))
        }
        _ = try log.append(events)
    }

    /// The 20,000-event log, appended once for the suite (each of the four
    /// cases appending its own cost 7 s of CPU in a debug build) and copied
    /// into each case's directory, which appends to it.
    static let twentyThousand = Result {
        // Lives as long as the test process; removed on the way out.
        let fixture = TemporaryDirectory(prefix: "rebuild-thread-20000")
        ExitCleanup.remove(atExit: fixture.path)
        let log = try EventLog(directory: fixture.appending("store"))
        defer { log.close() }
        try append(20_000, to: log, clock: ManualClock())
        return fixture
    }

    func copyOfTwentyThousand() throws -> EventLog {
        let fixture = try Self.twentyThousand.get()
        try FileManager.default.copyItem(atPath: fixture.appending("store"), toPath: directory.appending("store"))
        // This case's appends come after the copied records' times.
        clock.advance(microseconds: 20_001)
        return try EventLog(directory: directory.appending("store"))
    }

    // Early: the other partitions are still reading. Late: they have read
    // everything. In one partition or four (the failing record falls to
    // one of them, the others are stopped), no reader is left behind.
    @Test(arguments: [UInt64(3), 20_000], [1, 4])
    func aFoldThatThrowsLeavesNoReadTransactionOpen(failAt: UInt64, partitions: Int) throws {
        let log = try copyOfTwentyThousand()
        defer { log.close() }
        let views = try ProjectionSet(
            log: log, projections: [FailingView(failAt: failAt, foldsByStream: partitions > 1)],
            rebuildPartitions: partitions)
        #expect(throws: FailingView.FoldFailed.self) { try views.rebuild() }
        #expect(try log.environment.activeReaders() == 0)
        // The write lock was let go too: the next append goes through.
        _ = try log.append([SampleEvents.event(stream: UUID(), at: clock.now())])
    }

    @Test func aRebuildThatSucceedsLeavesNoReadTransactionOpen() throws {
        let log = try logWith(events: 5_000)
        defer { log.close() }
        let views = try ProjectionSet(
            log: log, projections: [FailingView(failAt: 0, foldsByStream: true)], rebuildPartitions: 3)
        #expect(try views.rebuild() == 5_000)
        #expect(try log.environment.activeReaders() == 0)
    }

    @Test func activeReadersCountsAnOpenReadTransaction() throws {
        let log = try logWith(events: 1)
        defer { log.close() }
        let inside = try log.environment.read { _ in try log.environment.activeReaders() }
        #expect(inside == 1)
        #expect(try log.environment.activeReaders() == 0)
    }
}
