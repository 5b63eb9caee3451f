import Foundation
import LMDB
import LedgerCore
import Synchronization

/// A view derived from the log, kept in its own LMDB tables beside it.
///
/// A projection is updated in the same write transaction as each append, so
/// it can never disagree with the log; and it can be rebuilt from the log at
/// any time, because nothing else is ever written to its tables.
public protocol Projection: AnyObject, Sendable {
    /// A stable name (`inspections`, `outbox`, …), also the prefix of its tables.
    var name: String { get }
    /// Bumped whenever the code changes what the view holds: a stored view of
    /// another version is rebuilt when the ledger opens.
    var version: Int { get }
    /// The tables the projection owns; a rebuild empties them first.
    var tableNames: [String] { get }

    /// Applies one newly appended record inside the append's transaction.
    func apply(_ record: EventRecord, in context: ProjectionContext) throws

    /// Starts a rebuild: returns a consumer that sees every record in order
    /// and then writes the whole view (it may fold in memory first, which is
    /// much faster than reading and writing a row per event).
    ///
    /// Projections that fold the log the same way can share the fold through
    /// `scratch`, which lives for one rebuild.
    func makeRebuilder(scratch: ProjectionScratch) -> any ProjectionRebuilder

    /// Whether its rebuilder uses what the set's `preparation` makes of each
    /// record: when no projection being rebuilt does, the reading thread
    /// skips it (a view that looks at one event type decodes nothing else).
    var usesPreparedRecords: Bool { get }
}

extension Projection {
    public var usesPreparedRecords: Bool { true }
}

/// Working memory shared by the projections of one transaction or one
/// rebuild, so that views derived from the same fold compute it once.
public final class ProjectionScratch {
    private var values: [String: AnyObject] = [:]

    public init() {}

    /// The object stored under `key`, made by `make` the first time.
    public func shared<T: AnyObject>(_ key: String, make: () -> T) -> T {
        if let existing = values[key] as? T { return existing }
        let made = make()
        values[key] = made
        return made
    }
}

/// Folds the whole log into a projection during a rebuild.
public protocol ProjectionRebuilder {
    /// `prepared` is what the set's `preparation` made of the record on the
    /// reading thread (nil without one).
    mutating func consume(_ record: EventRecord, prepared: (any Sendable)?) throws
    /// Writes the folded view into the (already emptied) tables.
    func write(in context: ProjectionContext) throws
}

/// What a projection may touch while applying or rebuilding: its tables in
/// the current write transaction, and a read view of the log in it.
public struct ProjectionContext {
    public let transaction: Transaction
    public let log: LedgerReader
    /// Lives for one append call or one rebuild.
    public let scratch: ProjectionScratch
    let tables: [String: Table]
    /// Set in a dry run: rows go here and nothing is written.
    let collector: RowCollector?

    /// One of the projection's own tables, by name.
    public func table(_ name: String) -> Table {
        guard let table = tables[name] else {
            preconditionFailure("projection table \(name) was not declared in tableNames")
        }
        return table
    }

    /// Writes a row into one of the projection's tables, sealed with its
    /// checksum (`ViewRowChecksum`); read it back with `ViewRowChecksum.open`.
    public func put(_ table: String, _ key: [UInt8], _ value: [UInt8]) throws {
        let sealed = ViewRowChecksum.seal(table: table, key: key, value: value)
        if let collector {
            collector.rows[table, default: [:]][key] = sealed
        } else {
            try transaction.put(self.table(table), key, sealed)
        }
    }

    /// Deletes a row of one of the projection's tables, if it is there.
    public func delete(_ table: String, _ key: [UInt8]) throws {
        if let collector {
            collector.rows[table]?[key] = nil
        } else {
            _ = try transaction.delete(self.table(table), key)
        }
    }
}

/// The rows a dry-run rebuild would write, by table and key (values sealed).
final class RowCollector {
    var rows: [String: [[UInt8]: [UInt8]]] = [:]
}

/// The projections of a ledger, their stored versions, and rebuilds.
public final class ProjectionSet: Sendable {
    public let log: EventLog
    public let projections: [any Projection]
    let tables: [String: Table]
    let meta: Table
    /// Work a rebuild may do on its reading thread, in parallel with the
    /// folding: typically decoding each record's payload. Its result reaches
    /// every rebuilder's `consume`.
    public let preparation: (@Sendable (EventRecord) -> (any Sendable)?)?
    /// Held by every rebuild, so that a recording command queued behind one
    /// can say so (`waiting`); nil on a read-only store.
    public let rebuildLock: RebuildLock?
    /// Told, for a person on stderr, when a command waits for another
    /// process's rebuild.
    public let notice: (@Sendable (String) -> Void)?
    static let waitingNotice = "waiting for a rebuild of the views to finish…"

    /// Opens the projections' tables. Call `rebuildStale` to bring views of an
    /// older version (or new ones) up to date.
    public init(
        log: EventLog, projections: [any Projection],
        preparation: (@Sendable (EventRecord) -> (any Sendable)?)? = nil, rebuildLock: RebuildLock? = nil,
        notice: (@Sendable (String) -> Void)? = nil
    ) throws {
        self.log = log
        self.projections = projections
        self.preparation = preparation
        self.rebuildLock = rebuildLock
        self.notice = notice
        var tables: [String: Table] = [:]
        for projection in projections {
            for name in projection.tableNames { tables[name] = try log.table(name) }
        }
        self.tables = tables
        self.meta = try log.table("views:meta")
    }

    /// A view's stored state: its version and the last position it has seen.
    public struct State: Equatable, Sendable {
        public var version: Int
        public var position: UInt64
    }

    public func storedState(of projection: any Projection, in transaction: Transaction) throws -> State? {
        guard let value = try transaction.get(meta, Array(projection.name.utf8)), value.count == 16,
            let version = BigEndian.uint64(value), let position = BigEndian.uint64(value, at: 8)
        else { return nil }
        // Any stored number: one beyond Int only differs from the code's version (a rebuild), never traps.
        return State(version: Int(truncatingIfNeeded: version), position: position)
    }

    func setState(_ state: State, of projection: any Projection, in transaction: Transaction) throws {
        try transaction.put(
            meta, Array(projection.name.utf8),
            BigEndian.bytes(UInt64(state.version)) + BigEndian.bytes(state.position))
    }

    func context(_ writer: LedgerWriter, scratch: ProjectionScratch = ProjectionScratch()) -> ProjectionContext {
        ProjectionContext(
            transaction: writer.transaction, log: writer.reader, scratch: scratch, tables: tables, collector: nil)
    }

    /// The projections whose stored version differs from the code's, or that
    /// have not seen the whole log.
    public func staleProjections() throws -> [any Projection] {
        try log.read { reader in
            let head = try reader.head().position
            return try projections.filter { projection in
                let state = try storedState(of: projection, in: reader.transaction)
                return state != State(version: projection.version, position: head)
            }
        }
    }

    /// Appends `events` and applies each new record to every projection, all
    /// in one durable transaction. Events whose id is already stored change
    /// nothing (a retried command is safe).
    public func append(_ events: [PendingEvent], expectedVersions: [UUID: UInt64] = [:]) throws -> [AppendOutcome] {
        rebuildLock?.waitForRebuilds { notice?(Self.waitingNotice) }
        return try log.write { writer in try append(events, expectedVersions: expectedVersions, with: writer) }
    }

    /// The same, inside a write the caller has already begun.
    public func append(
        _ events: [PendingEvent], expectedVersions: [UUID: UInt64] = [:], with writer: LedgerWriter
    ) throws -> [AppendOutcome] {
        for (stream, version) in expectedVersions { try writer.expect(stream: stream, version: version) }
        let context = context(writer)
        var outcomes: [AppendOutcome] = []
        for event in events {
            let outcome = try writer.append(event)
            outcomes.append(outcome)
            guard !outcome.wasAlreadyStored else { continue }
            let record = EventRecord(position: outcome.position, streamVersion: outcome.streamVersion, event: event)
            for projection in projections { try projection.apply(record, in: context) }
        }
        if outcomes.contains(where: { !$0.wasAlreadyStored }) {
            for projection in projections {
                try setState(
                    State(version: projection.version, position: writer.head.position), of: projection,
                    in: writer.transaction)
            }
        }
        return outcomes
    }

    /// Rebuilds the views that are stale, if any, after telling `announce`
    /// which and why ("rebuilding the drafts view after an upgrade: 1,000,322
    /// events…"). Another process may be rebuilding them right now: the
    /// check is made again under the rebuild lock, so they are rebuilt once.
    @discardableResult
    public func rebuildStale(
        announce: ((String) -> Void)? = nil, progress: ((UInt64, UInt64) -> Void)? = nil
    ) throws -> [any Projection] {
        guard !(try staleProjections()).isEmpty else { return [] }
        rebuildLock?.exclusive { notice?(Self.waitingNotice) }
        defer { rebuildLock?.unlock() }
        let stale = try staleProjections()
        guard !stale.isEmpty else { return [] }
        let events = try log.read { reader in try reader.count() }
        let names = stale.map(\.name)
        let list =
            names.count == 1
            ? "the \(names[0]) view" : "the \(names.dropLast().joined(separator: ", ")) and \(names.last!) views"
        // An empty log (a ledger just made) has nothing to wait for.
        if events > 0 { announce?("rebuilding \(list) \(try staleness(stale)): \(Self.grouped(events)) events…") }
        try rebuild(stale, progress: progress)
        return stale
    }

    /// 1000322 as "1,000,322".
    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }

    /// Rebuilds `selected` (default: all) from the whole log in one write
    /// transaction: readers see the old views until it commits, and a crash
    /// part way leaves the old views intact.
    ///
    /// `progress` is called with (records done, total) now and then.
    @discardableResult
    public func rebuild(
        _ selected: [any Projection]? = nil, progress: ((UInt64, UInt64) -> Void)? = nil,
        afterEachRecord hook: ((UInt64) -> Void)? = nil
    ) throws -> UInt64 {
        let chosen = selected ?? projections
        rebuildLock?.exclusive { notice?(Self.waitingNotice) }
        defer { rebuildLock?.unlock() }
        return try log.write { writer in
            let context = context(writer)
            for projection in chosen {
                for name in projection.tableNames { try writer.transaction.empty(context.table(name)) }
            }
            var rebuilders = chosen.map { $0.makeRebuilder(scratch: context.scratch) }
            let total = UInt64(try writer.reader.count())
            var done: UInt64 = 0
            // Records are read and decoded on a second thread, in a read
            // transaction of their own (it sees the same snapshot: this write
            // transaction holds the writer lock and appends nothing), while
            // this thread folds them: on two cores, about twice as fast.
            let reading = RecordPipeline(
                log: log, preparation: chosen.contains { $0.usesPreparedRecords } ? preparation : nil)
            reading.start()
            defer { reading.cancel() }
            while let batch = try reading.next() {
                for (record, prepared) in batch {
                    for i in rebuilders.indices { try rebuilders[i].consume(record, prepared: prepared) }
                    done += 1
                    hook?(done)
                    if let progress, done % 100_000 == 0 { progress(done, total) }
                }
            }
            for rebuilder in rebuilders { try rebuilder.write(in: context) }
            let head = writer.head.position
            for projection in chosen {
                try setState(State(version: projection.version, position: head), of: projection, in: writer.transaction)
            }
            progress?(done, total)
            return done
        }
    }
}

/// Reads and decodes the log on a thread of its own for a rebuild, handing
/// batches over through a small bounded queue.
///
/// The queue and the flags live in a `Mutex`; two semaphores count what can
/// be waited for: `slots` the free places in the queue (the reader waits on
/// it), `ready` the batches and the end (the folding thread waits on it).
/// `ended` is signalled once, as the reading thread's last act, after its
/// read transaction has closed: `cancel()` waits for it, so no path leaves
/// the thread (or its transaction) behind.
final class RecordPipeline: Sendable {
    typealias Batch = [(EventRecord, (any Sendable)?)]

    private struct State: Sendable {
        var queue: [Batch] = []
        var finished = false
        var cancelled = false
        var failure: (any Error)?
    }

    private let log: EventLog
    private let preparation: (@Sendable (EventRecord) -> (any Sendable)?)?
    private let state = Mutex(State())
    /// Made at 0 and signalled `depth` times: libdispatch traps when a
    /// semaphore is freed below the value it was made with, which a
    /// cancelled pipeline (batches left in the queue) would be.
    private let slots = DispatchSemaphore(value: 0)
    private let ready = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let started = Mutex(false)
    private static let batchSize = 2048
    private static let depth = 8

    init(log: EventLog, preparation: (@Sendable (EventRecord) -> (any Sendable)?)?) {
        self.log = log
        self.preparation = preparation
        for _ in 0..<Self.depth { slots.signal() }
    }

    func start() {
        started.withLock { $0 = true }
        let thread = Thread { [self] in
            produce()
            ended.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func produce() {
        var failure: (any Error)?
        do {
            var batch: Batch = []
            batch.reserveCapacity(Self.batchSize)
            try log.read { reader in
                try reader.forEachRecord { record in
                    batch.append((record, preparation?(record)))
                    if batch.count == Self.batchSize {
                        guard push(batch) else { return false }
                        batch = []
                        batch.reserveCapacity(Self.batchSize)
                    }
                    return true
                }
            }
            if !batch.isEmpty { _ = push(batch) }
        } catch {
            failure = error
        }
        state.withLock {
            $0.failure = failure
            $0.finished = true
        }
        ready.signal()
    }

    /// Queues a batch, waiting while the queue is full; false once cancelled.
    private func push(_ batch: Batch) -> Bool {
        slots.wait()
        let queued = state.withLock { state in
            guard !state.cancelled else { return false }
            state.queue.append(batch)
            return true
        }
        if queued { ready.signal() }
        return queued
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

    /// Stops the reader (on an error in the folding) and waits for its
    /// thread to end, so its read transaction is closed before the write
    /// commits or aborts.
    func cancel() {
        guard started.withLock({ $0 }) else { return }
        state.withLock { $0.cancelled = true }
        // Wakes a reader waiting for a free place; it then sees `cancelled`.
        slots.signal()
        ended.wait()
    }
}
