import Foundation
import InspectionDomain
import InspectionStore
import LMDB
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Synchronization
import Testing

/// `EventLog.scanAhead` reads on a thread of its own: it must hand over
/// every entry in order, skip only what `prepare` skips, and leave no
/// thread or read transaction behind however the caller stops.
@Suite struct ReadAheadTests {
    let directory = TemporaryDirectory(prefix: "read-ahead")
    let clock = ManualClock()

    struct Stop: Error {}

    /// A log longer than a few of the reader's batches.
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

    @Test func everyEntryArrivesInOrder() throws {
        let log = try logWith(events: 5_000)
        defer { log.close() }
        var positions: [UInt64] = []
        try log.scanAhead(prepare: { _, _ in .pass(nil) }) { entry, decoded in
            guard case .record(let record) = entry else { return false }
            #expect(decoded == nil)
            positions.append(record.position)
            return true
        }
        #expect(positions == Array(1...5_000))
        #expect(try log.environment.activeReaders() == 0)
    }

    @Test func whatPrepareSkipsNeverArrives() throws {
        let log = try logWith(events: 3_000)
        defer { log.close() }
        var positions: [UInt64] = []
        try log.scanAhead(prepare: { record, _ in record.position % 7 == 0 ? .pass(nil) : .skip }) { entry, _ in
            if case .record(let record) = entry { positions.append(record.position) }
            return true
        }
        #expect(positions == Array(stride(from: 7, through: 3_000, by: 7)))
    }

    /// `prepare` is told the reading thread is ahead once batches wait
    /// beyond the one just handed over, and not before the first is: a
    /// `body` that holds the first entry until five batches are prepared
    /// leaves at least three waiting when the fifth begins.
    @Test func prepareIsToldWhenTheReaderIsAhead() throws {
        let log = try logWith(events: 6_000)
        defer { log.close() }
        let told = Mutex<[UInt64: Bool]>([:])
        var first = true
        try log.scanAhead(prepare: { record, ahead in
            told.withLock { $0[record.position] = ahead }
            return .pass(nil)
        }) { _, _ in
            // Bounded: a reader that never gets that far fails the expectation below.
            for _ in 0..<30_000 where first && told.withLock({ $0.count }) < 5 * 1_024 { usleep(1_000) }
            first = false
            return true
        }
        let seen = told.withLock { $0 }
        #expect((1...1_024).allSatisfy { seen[UInt64($0)] == false }, "told ahead before any batch waited")
        #expect((4_097...5_120).allSatisfy { seen[UInt64($0)] == true }, "not told ahead with batches waiting")
    }

    // Early: the reader is still reading, waiting on a full queue. Late: it
    // has read everything. Stopping and throwing both leave no reader.
    @Test(arguments: [2, 4_999])
    func stoppingOrThrowingLeavesNoReadTransactionOpen(after count: Int) throws {
        let log = try logWith(events: 5_000)
        defer { log.close() }
        var seen = 0
        try log.scanAhead(prepare: { _, _ in .pass(nil) }) { _, _ in
            seen += 1
            return seen < count
        }
        #expect(seen == count)
        #expect(try log.environment.activeReaders() == 0)
        seen = 0
        #expect(throws: Stop.self) {
            try log.scanAhead(prepare: { _, _ in .pass(nil) }) { _, _ in
                seen += 1
                if seen == count { throw Stop() }
                return true
            }
        }
        #expect(try log.environment.activeReaders() == 0)
        // The write lock is free too: the next append goes through.
        _ = try log.append([SampleEvents.event(stream: UUID(), at: clock.now())])
    }

    /// Stopped while the reader waits for a place in its full queue: the
    /// batch it then holds is refused, and must not be offered again once
    /// its scan ends, when no place will ever come. It was, and both
    /// threads waited for good (`jqc log --limit 400000` of a large log
    /// hung so, the reader being ahead).
    @Test func stoppingWhileTheQueueIsFullReturns() throws {
        // The reader's batches are 1,024 records and it queues 8: once it
        // has prepared 10 batches' worth while `body` holds the first, it
        // waits on a full queue (or is about to).
        let log = try logWith(events: 12_000)
        defer { log.close() }
        let prepared = Mutex(0)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let ended = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let result = Result {
                try log.scanAhead(prepare: { _, _ in
                    prepared.withLock { $0 += 1 }
                    return .pass(nil)
                }) { _, _ in
                    // Bounded: a reader that never gets that far fails the expectation below.
                    for _ in 0..<30_000 where prepared.withLock({ $0 }) < 10 * 1_024 { usleep(1_000) }
                    return false
                }
            }
            outcome.withLock { $0 = result }
            ended.signal()
        }
        #expect(ended.wait(timeout: .now() + 60) == .success, "scanAhead did not return once stopped")
        #expect(prepared.withLock { $0 } >= 10 * 1_024)
        #expect(throws: Never.self) { try outcome.withLock { $0 }?.get() }
        #expect(try log.environment.activeReaders() == 0)
    }
}
