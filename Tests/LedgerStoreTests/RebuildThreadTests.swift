import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// A rebuild reads the log on a second thread: whatever ends the rebuild,
/// that thread (and its read transaction) must have ended with it.
@Suite struct RebuildThreadTests {
    let directory = TemporaryDirectory(prefix: "rebuild-thread")
    let clock = ManualClock()

    /// A view whose fold fails at one record.
    final class FailingView: Projection, Sendable {
        struct FoldFailed: Error {}
        let name = "failing"
        let version = 1
        var tableNames: [String] { ["view:failing"] }
        let failAt: UInt64

        init(failAt: UInt64) { self.failAt = failAt }

        func apply(_ record: EventRecord, in context: ProjectionContext) throws {}

        func makeRebuilder(scratch: ProjectionScratch) -> any ProjectionRebuilder { Rebuilder(failAt: failAt) }

        struct Rebuilder: ProjectionRebuilder {
            let failAt: UInt64
            mutating func consume(_ record: EventRecord, prepared: (any Sendable)?) throws {
                if record.position == failAt { throw FoldFailed() }
            }
            func write(in context: ProjectionContext) throws {}
        }
    }

    func logWith(events count: Int) throws -> EventLog {
        let log = try EventLog(directory: directory.appending("store"))
        var events: [PendingEvent] = []
        for _ in 0..<count {
            clock.advance(microseconds: 1)
            events.append(SampleEvents.event(stream: UUID(), at: clock.now()))
        }
        _ = try log.append(events)
        return log
    }

    // Early: the reading thread is still reading, blocked on a full queue.
    // Late: it has read everything. Both must leave no reader behind.
    @Test(arguments: [UInt64(3), 20_000])
    func aFoldThatThrowsLeavesNoReadTransactionOpen(failAt: UInt64) throws {
        let log = try logWith(events: 20_000)
        defer { log.close() }
        let views = try ProjectionSet(log: log, projections: [FailingView(failAt: failAt)])
        #expect(throws: FailingView.FoldFailed.self) { try views.rebuild() }
        #expect(try log.environment.activeReaders() == 0)
        // The write lock was let go too: the next append goes through.
        _ = try log.append([SampleEvents.event(stream: UUID(), at: clock.now())])
    }

    @Test func aRebuildThatSucceedsLeavesNoReadTransactionOpen() throws {
        let log = try logWith(events: 5_000)
        defer { log.close() }
        let views = try ProjectionSet(log: log, projections: [FailingView(failAt: 0)])
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
