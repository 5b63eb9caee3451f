import Dispatch
import InspectionDomain
import LedgerCore
import LedgerStore
import Synchronization

extension EventLog {
    /// `LedgerReader.scan(from:_:)` with the reading, decoding and `prepare`
    /// of each record done on a thread of its own, ahead of `body`, which
    /// runs on the calling thread in log order: a listing of the whole log
    /// (`jqc log`) formats lines while the next records are decoded.
    ///
    /// `prepare` runs on the reading thread: it says whether `body` is to see
    /// the record at all (a listing filtered by type passes over most of
    /// them, and handing each to the other thread costs more than looking
    /// at it there), and may decode its payload, which reaches `body` beside
    /// the entry. It is told whether the reading thread is ahead (`ahead`:
    /// batches wait for `body` beyond the one just handed over): then it may
    /// take on work `body` would otherwise do, such as decoding; when it is
    /// not, `body` waits for it and can do that work itself, so the two
    /// threads share what there is to do. Holes in the log always reach `body`. Not generic on
    /// purpose: unspecialised across modules, the generic form spent more
    /// on runtime type lookups per record than the thread saved.
    /// When `body` returns false or throws, the reading thread is stopped
    /// and waited for, so no read transaction outlives the call.
    public func scanAhead(
        from position: UInt64 = 1, prepare: @escaping @Sendable (EventRecord, _ ahead: Bool) -> ReadAhead.Preparation,
        _ body: (LogEntry, InspectionEvent?) throws -> Bool
    ) throws {
        let ahead = ReadAhead(log: self, from: position, prepare: prepare)
        ahead.start()
        defer { ahead.cancel() }
        while let batch = try ahead.next() {
            while let (entry, prepared) = batch.take() {
                guard try body(entry, prepared) else { return }
            }
        }
    }
}

/// Scans the log on a thread of its own, handing batches over through a
/// small bounded queue.
///
/// The queue and the flags live in a `Mutex`; two semaphores count what can
/// be waited for: `slots` the free places in the queue (the reader waits on
/// it), `ready` the batches and the end (the consumer waits on it). `ended`
/// is signalled once, as the reading thread's last act, after its read
/// transaction has closed: `cancel()` waits for it, so no path leaves the
/// thread (or its transaction) behind.
public final class ReadAhead: Sendable {
    /// Entries in log order, each moved out once by the consumer: taken
    /// from an array, each entry was copied (its strings and payload
    /// retained) and the array's copies released later, or, reversed to be
    /// popped, moved twice. The reading thread fills a batch, then hands it
    /// over through the queue's lock and never touches it again; only the
    /// consuming thread takes from it (`@unchecked Sendable` rests on that
    /// hand-over).
    final class Batch: @unchecked Sendable {
        private let entries: UnsafeMutablePointer<(LogEntry, InspectionEvent?)>
        private let capacity: Int
        private(set) var count = 0
        private var taken = 0

        init(capacity: Int) {
            self.capacity = capacity
            entries = .allocate(capacity: capacity)
        }

        var isFull: Bool { count == capacity }

        /// Adds an entry; the batch must not be full.
        func append(_ entry: LogEntry, _ prepared: InspectionEvent?) {
            precondition(count < capacity, "a read-ahead batch holds \(capacity) entries")
            (entries + count).initialize(to: (entry, prepared))
            count += 1
        }

        /// The next entry, moved out; nil when every one was taken.
        func take() -> (LogEntry, InspectionEvent?)? {
            guard taken < count else { return nil }
            defer { taken += 1 }
            return (entries + taken).move()
        }

        deinit {
            // Only the entries not taken are still there to be destroyed.
            (entries + taken).deinitialize(count: count - taken)
            entries.deallocate()
        }
    }

    /// What the reading thread made of a record.
    public enum Preparation: Sendable {
        /// Not for `body`.
        case skip
        /// For `body`, with its payload decoded when given.
        case pass(InspectionEvent?)
    }

    private struct State: Sendable {
        var queue: [Batch] = []
        var finished = false
        var cancelled = false
        var failure: (any Error)?
    }

    private let log: EventLog
    private let position: UInt64
    private let prepare: @Sendable (EventRecord, Bool) -> Preparation
    private let state = Mutex(State())
    /// Made at 0 and signalled `depth` times: libdispatch traps when a
    /// semaphore is freed below the value it was made with, which a
    /// cancelled read-ahead (batches left in the queue) would be.
    private let slots = DispatchSemaphore(value: 0)
    private let ready = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let started = Mutex(false)
    private static let batchSize = 1024
    private static let depth = 8

    init(log: EventLog, from position: UInt64, prepare: @escaping @Sendable (EventRecord, Bool) -> Preparation) {
        self.log = log
        self.position = position
        self.prepare = prepare
        for _ in 0..<Self.depth { slots.signal() }
    }

    func start() {
        started.withLock { $0 = true }
        DispatchQueue.global().async { [self] in
            produce()
            ended.signal()
        }
    }

    private func produce() {
        var failure: (any Error)?
        do {
            var batch = Batch(capacity: Self.batchSize)
            // Decided once a batch, when the one before is handed over.
            var ahead = false
            try log.read { reader in
                try reader.scan(from: position) { entry in
                    var prepared: InspectionEvent?
                    if case .record(let record) = entry {
                        guard case .pass(let event) = prepare(record, ahead) else { return true }
                        prepared = event
                    }
                    batch.append(entry, prepared)
                    if batch.isFull {
                        let full = batch
                        batch = Batch(capacity: Self.batchSize)
                        // Not pushed again after the scan: a cancelled
                        // queue has no free place left to wait for.
                        guard let waiting = push(full) else { return false }
                        ahead = waiting > 1
                    }
                    return true
                }
            }
            if batch.count > 0 { _ = push(batch) }
        } catch {
            failure = error
        }
        state.withLock {
            $0.failure = failure
            $0.finished = true
        }
        ready.signal()
    }

    /// Queues a batch, waiting while the queue is full; how many batches
    /// then wait, or nil once cancelled.
    private func push(_ batch: Batch) -> Int? {
        slots.wait()
        let waiting: Int? = state.withLock { state in
            guard !state.cancelled else { return nil }
            state.queue.append(batch)
            return state.queue.count
        }
        if waiting != nil { ready.signal() }
        return waiting
    }

    /// The next batch, or nil at the end of the log.
    func next() throws -> Batch? {
        ready.wait()
        let (batch, failure): (Batch?, (any Error)?) = state.withLock { state in
            guard state.queue.isEmpty else { return (state.queue.removeFirst(), nil) }
            return (nil, state.failure)
        }
        guard let batch else {
            // The end stays visible to every later call.
            ready.signal()
            if let failure { throw failure }
            return nil
        }
        slots.signal()
        return batch
    }

    /// Stops the reader and waits for its thread to end, so its read
    /// transaction is closed before the caller goes on.
    func cancel() {
        guard started.withLock({ $0 }) else { return }
        state.withLock { $0.cancelled = true }
        // Wakes a reader waiting for a free place; it then sees `cancelled`.
        slots.signal()
        ended.wait()
    }
}
