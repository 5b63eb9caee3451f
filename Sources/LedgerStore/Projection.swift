import Dispatch
import FoundationEssentials
import Glibc
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
    var tableNames: [ViewTable] { get }

    /// Applies one newly appended record inside the append's transaction.
    func apply(_ record: EventRecord, in context: ProjectionContext) throws

    /// Starts a rebuild: returns a consumer that sees every record in order
    /// and then writes the whole view (it may fold in memory first, which is
    /// much faster than reading and writing a row per event).
    ///
    /// Projections that fold the log the same way can share the fold through
    /// `scratch`, which lives for one rebuild (one partition of it).
    func makeRebuilder(scratch: ProjectionScratch) -> any ProjectionRebuilder

    /// Whether the view is a function of each stream on its own (plus the
    /// records of `ProjectionSet.sharedTypes`): then a rebuild folds it in
    /// partitions of the streams, one per core, each folding its own records,
    /// and merges them (`ProjectionRebuilder.absorb`) before writing. A view
    /// that is not (the default) sees every record in one partition.
    var foldsByStream: Bool { get }
}

extension Projection {
    public var foldsByStream: Bool { false }
}

/// Working memory shared by the projections of one transaction or one
/// rebuild, so that views derived from the same fold compute it once.
public final class ProjectionScratch {
    /// One object of each type, or of each type and position: a key made
    /// without building a string, since the views ask for one per record
    /// on the append path.
    private struct Key: Hashable {
        var type: ObjectIdentifier
        var position: UInt64?
    }

    private var values: [Key: AnyObject] = [:]
    /// The log as the transaction of this append or this rebuild partition
    /// sees it (for what a fold reads beside the records: the `carried`
    /// table); set by whoever makes the scratch for a transaction.
    public internal(set) var log: LedgerReader?

    public init() {}

    init(log: LedgerReader) { self.log = log }

    /// The object of type `T` stored (for `position`, when given), if one was.
    public func existing<T: AnyObject>(_ type: T.Type = T.self, at position: UInt64? = nil) -> T? {
        values[Key(type: ObjectIdentifier(type), position: position)] as? T
    }

    /// The object of type `T` (for `position`, when given), made by `make`
    /// the first time.
    public func shared<T: AnyObject>(_ type: T.Type = T.self, at position: UInt64? = nil, make: () -> T) -> T {
        let key = Key(type: ObjectIdentifier(type), position: position)
        if let existing = values[key] as? T { return existing }
        let made = make()
        values[key] = made
        return made
    }
}

/// Folds the whole log (or one partition of its streams) into a projection
/// during a rebuild.
public protocol ProjectionRebuilder {
    /// Whether the rebuild hands this rebuilder the records (`consume`,
    /// `consumeShared`): false for one that shares another rebuilder's fold
    /// of the same partition, which folds them for both. A rebuild skips
    /// such rebuilders for every record. True by default.
    var consumesRecords: Bool { get }
    /// A record of a stream this rebuilder folds, in log order.
    mutating func consume(_ record: EventRecord) throws
    /// A record of another partition's stream whose type is one of the
    /// set's `sharedTypes` (a pinned template, say), in log order among the
    /// others. Nothing by default.
    mutating func consumeShared(_ record: EventRecord) throws
    /// Takes in what the same projection's rebuilder folded over the other
    /// partitions' streams (a `foldsByStream` projection must implement it).
    mutating func absorb(_ other: any ProjectionRebuilder) throws
    /// Writes the folded view into the (already emptied) tables.
    func write(in context: ProjectionContext) throws
}

extension ProjectionRebuilder {
    public var consumesRecords: Bool { true }

    public mutating func consumeShared(_ record: EventRecord) throws {}

    public mutating func absorb(_ other: any ProjectionRebuilder) throws {
        throw LedgerError.invalidEvent("a view that folds by stream must say how to merge its partitions (absorb)")
    }
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
    /// Set in a rebuild: the tables it emptied, and the greatest key put
    /// into each since.
    var emptied: EmptiedTables? = nil
    /// What a rebuild's folds do with what they hold once their rows are
    /// worked out.
    public internal(set) var foldMemory: FoldMemory = .freed

    /// One of the projection's own tables, by name.
    public func table(_ view: ViewTable) -> Table {
        guard let table = tables[view.name] else {
            preconditionFailure("projection table \(view) was not declared in tableNames")
        }
        return table
    }

    /// One of the projection's own tables, or nil when the store has none: a
    /// dry run (`ProjectionSet.compare`) on a read-only store written before
    /// that table existed, whose rows go to the collector, never the table.
    public func existingTable(_ view: ViewTable) -> Table? { tables[view.name] }

    /// Writes a row into one of the projection's tables, sealed with its
    /// checksum (`ViewRowChecksum`); read it back with `ViewRowChecksum.open`.
    public func put(_ table: ViewTable, _ key: [UInt8], _ value: [UInt8]) throws {
        try put(table, key, sealed: ViewRowChecksum.seal(table: table.name, key: key, value: value))
    }

    /// Writes a row already sealed with its checksum (`ViewRowChecksum.seal`),
    /// as a rebuild's rows are, on the threads that work them out.
    public func put(_ table: ViewTable, _ key: [UInt8], sealed: [UInt8]) throws {
        assert(ViewRowChecksum.isIntact(table: table.name, key: key, stored: sealed), "a row sealed for another key")
        if let collector {
            collector.rows[table.name, default: [:]][key] = sealed
        } else if let emptied, emptied.extends(table.name, with: key) {
            try transaction.put(self.table(table), key, sealed, flags: .append)
        } else {
            try transaction.put(self.table(table), key, sealed)
        }
    }

    /// Deletes a row of one of the projection's tables, if it is there.
    public func delete(_ table: ViewTable, _ key: [UInt8]) throws {
        if let collector {
            collector.rows[table.name]?[key] = nil
        } else if let emptied, emptied.cannotHold(key, in: table.name) {
            return  // nothing there to delete: no need to look
        } else {
            _ = try transaction.delete(self.table(table), key)
        }
    }
}

/// The tables a rebuild emptied, each with the greatest key put into it
/// since. A key greater than that is put at the table's end (`MDB_APPEND`,
/// which fills each page before starting the next where a put in key order
/// leaves them half full), and is not there to delete: a rebuild writes
/// rows in key order and deletes as many rows as it puts (a finished
/// inspection's draft and follow-up rows), so neither looks through the
/// tree. A key out of order is put and deleted as anywhere else.
final class EmptiedTables {
    private var greatest: [String: [UInt8]]

    init(_ names: [String]) {
        greatest = Dictionary(names.map { ($0, []) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether `key` sorts after every key put into `table` since it was
    /// emptied (then it is the greatest from now on); false for a table
    /// this rebuild did not empty.
    func extends(_ table: String, with key: [UInt8]) -> Bool {
        // LMDB's order: bytes, then the shorter first. No key is empty.
        guard let last = greatest[table], last.lexicographicallyPrecedes(key) else { return false }
        greatest[table] = key
        return true
    }

    /// Whether `table` was emptied and nothing put since sorts at or after
    /// `key`, so that it holds no row under `key`.
    func cannotHold(_ key: [UInt8], in table: String) -> Bool {
        guard let last = greatest[table] else { return false }
        return last.lexicographicallyPrecedes(key)
    }
}

/// What a rebuild does with the memory its folds hold (every inspection's
/// state) once the rows are worked out from it.
public enum FoldMemory: Sendable, Equatable {
    /// Freed before `rebuild` returns, beside the puts: for a process that
    /// lives on (the daemon, a command that rebuilds stale views first).
    case freed
    /// Kept until the process exits, which gives it back all at once
    /// (`KeptUntilExit`): for a command that ends when the rebuild commits
    /// (`jqc rebuild`), as compilers leave their trees to the exit. Freeing
    /// a million events' states one by one took a twentieth of such a
    /// rebuild, with the puts waiting on the allocator's lock. The process's
    /// heaps also grow in large steps from then on (`HeapGrowth`), since
    /// none needs to give memory back before the exit.
    case leftToExit
}

/// What is kept until the process exits (`FoldMemory.leftToExit`):
/// reachable, so it is neither freed nor reported as leaked.
package enum KeptUntilExit {
    private static let kept = Mutex<[any AnyObject & Sendable]>([])

    package static func keep(_ object: any AnyObject & Sendable) {
        kept.withLock { $0.append(object) }
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
    /// The record types every partition of a rebuild sees, whichever stream
    /// they belong to (`ProjectionRebuilder.consumeShared`): what one
    /// stream's fold may need from another's, such as a pinned template.
    public let sharedTypes: [String]
    /// How many partitions (threads) a rebuild folds `foldsByStream` views
    /// in; nil: one per core (at most eight), and one for a small log.
    public let rebuildPartitions: Int?
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
        sharedTypes: [String] = [], rebuildLock: RebuildLock? = nil, notice: (@Sendable (String) -> Void)? = nil,
        rebuildPartitions: Int? = nil
    ) throws {
        self.log = log
        self.projections = projections
        self.sharedTypes = sharedTypes
        self.rebuildPartitions = rebuildPartitions.map { max(1, $0) }
        self.rebuildLock = rebuildLock
        self.notice = notice
        var tables: [String: Table] = [:]
        for projection in projections {
            // A read-only open of a store written before a view existed finds
            // no table for it: that view is stale (no stored state), and
            // counted as empty, until a writable open builds it.
            for view in projection.tableNames {
                if let table = try log.existingTable(view.name) { tables[view.name] = table }
            }
        }
        self.tables = tables
        self.meta = try log.table(TableName.viewsMeta)
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

    func context(_ writer: LedgerWriter, scratch: ProjectionScratch? = nil) -> ProjectionContext {
        let scratch = scratch ?? ProjectionScratch(log: writer.reader)
        scratch.log = writer.reader
        return ProjectionContext(
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
    /// `carrying` are the bytes of the records the events' receptions carry
    /// by reference: kept in the `carried` table first, in the same
    /// transaction, so the views folding a reception find them.
    /// `scratch`: what the caller already knows for the projections (the
    /// states a decision produced), shared with them for this append.
    @_spi(RawAppend) public func append(
        _ events: [PendingEvent], expectedVersions: [UUID: UInt64] = [:], carrying: [[UInt8]] = [],
        scratch: ProjectionScratch? = nil
    ) throws -> [AppendOutcome] {
        rebuildLock?.waitForRebuilds { notice?(Self.waitingNotice) }
        return try log.write { writer in
            try append(events, expectedVersions: expectedVersions, carrying: carrying, scratch: scratch, with: writer)
        }
    }

    /// The same, inside a write the caller has already begun.
    @_spi(RawAppend) public func append(
        _ events: [PendingEvent], expectedVersions: [UUID: UInt64] = [:], carrying: [[UInt8]] = [],
        scratch: ProjectionScratch? = nil, with writer: LedgerWriter
    ) throws -> [AppendOutcome] {
        for (stream, version) in expectedVersions { try writer.expect(stream: stream, version: version) }
        for record in carrying { try writer.keepCarried(record) }
        let context = context(writer, scratch: scratch)
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
    /// Views that fold by stream are folded in `rebuildPartitions`
    /// partitions at once (`rebuildSplit`), each on its own thread in its
    /// own read transaction (the same snapshot: this write transaction
    /// holds the writer lock and appends nothing), and merged; the others
    /// see every record in the first partition, on this thread. Records are
    /// decoded where they lie in the map, so nothing is copied from one
    /// thread to another.
    ///
    /// `progress` is called with (records done, total) now and then;
    /// `afterEachRecord` with each position the first partition folds as
    /// its own (every position, in one partition).
    /// `foldMemory` says whether the folds' states are freed before this
    /// returns (the default) or left to the process's exit.
    @discardableResult
    public func rebuild(
        _ selected: [any Projection]? = nil, progress: ((UInt64, UInt64) -> Void)? = nil,
        afterEachRecord hook: ((UInt64) -> Void)? = nil, foldMemory: FoldMemory = .freed
    ) throws -> UInt64 {
        try rebuild(
            selected, progress: progress, afterEachRecord: hook, threads: DetachedThread.start, foldMemory: foldMemory)
    }

    /// `rebuild`, its partitions' threads started by `threads`.
    func rebuild(
        _ selected: [any Projection]?, progress: ((UInt64, UInt64) -> Void)?,
        afterEachRecord hook: ((UInt64) -> Void)?, threads: DetachedThread.Starter, foldMemory: FoldMemory = .freed
    ) throws -> UInt64 {
        let chosen = selected ?? projections
        if foldMemory == .leftToExit { HeapGrowth.inLargeSteps() }
        rebuildLock?.exclusive { notice?(Self.waitingNotice) }
        defer { rebuildLock?.unlock() }
        return try log.write { writer in
            var context = context(writer)
            for projection in chosen {
                for name in projection.tableNames { try writer.transaction.empty(context.table(name)) }
            }
            context.emptied = EmptiedTables(chosen.flatMap(\.tableNames).map(\.name))
            context.foldMemory = foldMemory
            let total = UInt64(try writer.reader.count())
            let byStream = chosen.indices.filter { chosen[$0].foldsByStream }
            let whole = chosen.indices.filter { !chosen[$0].foldsByStream }
            let partitions = byStream.isEmpty ? 1 : partitions(for: total)
            let fold = PartitionFold(
                projections: chosen, byStream: byStream, sharedTypes: sharedTypes, partitions: partitions)

            if partitions > 1 {
                return try rebuildSplit(
                    chosen, fold: fold, partitions: partitions, total: total, whole: whole, byStream: byStream,
                    writer: writer, context: context, progress: progress, hook: hook, threads: threads)
            }
            return try rebuildWhole(
                chosen, fold: fold, total: total, whole: whole, writer: writer, context: context,
                progress: progress, hook: hook)
        }
    }

    /// A rebuild in one partition, on this thread: the whole log folded as
    /// the walk meets it.
    private func rebuildWhole(
        _ chosen: [any Projection], fold: PartitionFold, total: UInt64, whole: [Int], writer: LedgerWriter,
        context: ProjectionContext, progress: ((UInt64, UInt64) -> Void)?, hook: ((UInt64) -> Void)?
    ) throws -> UInt64 {
        var done: UInt64 = 0
        let rebuilders = try fold.runWhole(
            reader: writer.reader, wholeLog: whole,
            walked: { position in
                done += 1
                hook?(position)
                if let progress, done % 100_000 == 0 { progress(done, total) }
            })
        try finish(rebuilders, of: chosen, writer: writer, context: context)
        progress?(done, total)
        return done
    }

    /// Writes the rows of a rebuild's folds and the rebuilt views' states.
    private func finish(
        _ rebuilders: [any ProjectionRebuilder], of chosen: [any Projection], writer: LedgerWriter,
        context: ProjectionContext
    ) throws {
        for rebuilder in rebuilders { try rebuilder.write(in: context) }
        let head = writer.head.position
        for projection in chosen {
            try setState(State(version: projection.version, position: head), of: projection, in: writer.transaction)
        }
    }

    /// A rebuild in `partitions` partitions (`rebuild`): the log is cut into
    /// as many segments of positions; each thread walks one segment in its
    /// own transaction (this one, the write transaction, walks the first)
    /// and deals every record to its partition's list (`routeRecords`),
    /// then, once all are dealt, folds its own partition's records from
    /// every segment in log order, read where they lie. No record is walked
    /// or routed twice. A thread keeps its transaction open until every
    /// thread is done reading (`SplitWalk`), since the others read the
    /// records it dealt in place.
    private func rebuildSplit(
        _ chosen: [any Projection], fold: PartitionFold, partitions: Int, total: UInt64, whole: [Int],
        byStream: [Int], writer: LedgerWriter, context: ProjectionContext,
        progress: ((UInt64, UInt64) -> Void)?, hook: ((UInt64) -> Void)?, threads: DetachedThread.Starter
    ) throws -> UInt64 {
        let split = SplitWalk(partitions: partitions, total: total)
        let others = PartitionResults(partitions: partitions)
        let group = DispatchGroup()
        var unstarted: (partition: Int, failure: ThreadStartFailure)?
        for partition in 1..<partitions {
            // A thread of its own, not Dispatch's pool: every partition waits
            // for all the others to deal their segments, so all must run at
            // once, however many there are for the cores.
            group.enter()
            do throws(ThreadStartFailure) {
                try threads("jqc rebuild \(partition)") { [log] in
                    defer { group.leave() }
                    var joined = false
                    let result = Result {
                        try log.read { reader in
                            joined = true
                            // Held open until no thread reads what this one dealt.
                            defer { split.waitUntilAllDoneReading() }
                            return try fold.runSplit(partition, reader: reader, split: split, walked: nil)
                        }
                    }
                    // No transaction (the readers' table full, say): the others
                    // must not wait for this segment.
                    if !joined {
                        split.stop()
                        split.doneReading()
                    }
                    others.finish(partition, result)
                }
            } catch {
                group.leave()
                unstarted = (partition, error)
                break
            }
        }
        if let unstarted {
            // No thread to fold a partition on: the started ones are stopped
            // (this thread and the unstarted partitions read nothing, so
            // none waits for them), and the log is folded here, whole.
            split.stop()
            // The partitions from the one that did not start, and this one.
            for _ in unstarted.partition...partitions { split.doneReading() }
            group.wait()
            notice?("\(unstarted.failure); rebuilding on one thread")
            return try rebuildWhole(
                chosen, fold: fold, total: total, whole: whole, writer: writer, context: context,
                progress: progress, hook: hook)
        }
        var done: UInt64 = 0
        let first = Result {
            try fold.runSplit(
                0, reader: writer.reader, split: split, wholeLog: whole,
                walked: { position in
                    hook?(position)
                    done += 1
                    if let progress, done % 65_536 == 0 { progress(min(split.folded, total), total) }
                })
        }
        // No thread (or its read transaction) outlives the rebuild.
        group.wait()
        if case .failure(let error) = first, !(error is PartitionResults.Stopped) { throw error }
        let partials = try others.take()
        var merged = try first.get()
        for partial in partials {
            for i in byStream { try merged[i].absorb(partial[i]) }
        }
        try finish(merged, of: chosen, writer: writer, context: context)
        let walked = split.walked
        progress?(walked, total)
        return walked
    }

    /// The partitions of a rebuild of `events` events: threads pay off only
    /// over a log of some size.
    public func partitions(for events: UInt64) -> Int {
        if let rebuildPartitions { return rebuildPartitions }
        return events < 20_000 ? 1 : min(8, ProcessInfo.processInfo.activeProcessorCount)
    }
}

/// One partition's fold of a rebuild: which records it decodes and which
/// rebuilders see them.
struct PartitionFold: Sendable {
    let projections: [any Projection]
    let byStream: [Int]
    let sharedTypes: [String]
    let partitions: Int

    /// The fold of a rebuild in one partition, on this thread: every record
    /// in log order, as the walk meets it. `walked` hears each position.
    func runWhole(
        reader: LedgerReader, wholeLog: [Int], walked: (UInt64) -> Void
    ) throws -> [any ProjectionRebuilder] {
        let scratch = ProjectionScratch(log: reader)
        var rebuilders = projections.map { $0.makeRebuilder(scratch: scratch) }
        let byStream = byStream.filter { rebuilders[$0].consumesRecords }
        let wholeLog = wholeLog.filter { rebuilders[$0].consumesRecords }
        try reader.forEachRecord { record in
            walked(record.position)
            for i in byStream { try rebuilders[i].consume(record) }
            for i in wholeLog { try rebuilders[i].consume(record) }
            return true
        }
        return rebuilders
    }
}

extension PartitionFold {
    /// How far ahead of the record being folded a partition asks for the
    /// bytes of the next ones: its records lie apart in the map, where no
    /// processor prefetcher follows them.
    static let prefetchDistance = 8
    /// Enough for a whole record of the usual size; only the value's own
    /// bytes are asked for.
    static let prefetchBytes = 1024

    /// Partition `partition`'s part of a split rebuild (`rebuildSplit`):
    /// walks segment `partition` and deals its records, waits until every
    /// segment is dealt, then folds this partition's records of each
    /// segment in turn. Says when it is done reading (whether it folded,
    /// failed or was stopped), so that the threads that dealt can close
    /// their transactions.
    func runSplit(
        _ partition: Int, reader: LedgerReader, split: SplitWalk, wholeLog: [Int] = [],
        walked: ((UInt64) -> Void)?
    ) throws -> [any ProjectionRebuilder] {
        defer { split.doneReading() }
        do {
            let bounds = split.segment(partition)
            let dealt = try reader.routeRecords(
                from: bounds.first, before: bounds.end, expecting: split.expectedRecords(partition),
                among: partitions, sharedTypes: sharedTypes, everyRecordToFirst: !wholeLog.isEmpty)
            split.dealt(dealt.lists, walked: dealt.walked, segment: partition)
            guard let segments = split.waitForEverySegment(partition: partition) else {
                throw PartitionResults.Stopped()
            }
            let scratch = ProjectionScratch(log: reader)
            var rebuilders = projections.map { $0.makeRebuilder(scratch: scratch) }
            // Asked once: the loop below runs for every record.
            let byStream = byStream.filter { rebuilders[$0].consumesRecords }
            let wholeLog = wholeLog.filter { rebuilders[$0].consumesRecords }
            var names = TextCache()
            var passed = 0
            for records in segments {
                for (i, routed) in records.enumerated() {
                    if i + Self.prefetchDistance < records.count {
                        records[i + Self.prefetchDistance].value.prefetch(bytes: Self.prefetchBytes)
                    }
                    let record = try LedgerReader.decode(routed, names: &names)
                    if routed.owned {
                        walked?(routed.position)
                        for view in byStream { try rebuilders[view].consume(record) }
                    } else {
                        for view in byStream { try rebuilders[view].consumeShared(record) }
                    }
                    for view in wholeLog { try rebuilders[view].consume(record) }
                    passed += 1
                    // Another partition failed: stop early, checked now and then.
                    if passed % 4096 == 0 {
                        split.folded(4096)
                        if split.stopped { throw PartitionResults.Stopped() }
                    }
                }
            }
            return rebuilders
        } catch {
            split.stop()
            throw error
        }
    }
}

/// What the threads of a split rebuild share (`rebuildSplit`): the bounds of
/// each segment, the records each segment dealt to each partition, the flag
/// that stops them all when one fails, and how many are still reading
/// records another thread's transaction lends.
final class SplitWalk: Sendable {
    private struct State {
        /// By segment, then by partition.
        var dealt: [[[RoutedRecord]]?]
        var walked: UInt64 = 0
        var stopped = false
        var reading: Int
    }
    private let state: ConditionLocked<State>
    private let progress = Atomic<UInt64>(0)
    let partitions: Int
    let total: UInt64

    init(partitions: Int, total: UInt64) {
        self.partitions = partitions
        self.total = total
        state = ConditionLocked(State(dealt: Array(repeating: nil, count: partitions), reading: partitions))
    }

    /// The positions of segment `k`: an equal share of the log's positions
    /// (which run from 1), the first from the table's first key and the
    /// last to its last (nil), so that every key falls in one segment.
    func segment(_ k: Int) -> (first: UInt64?, end: UInt64?) {
        return (k == 0 ? nil : share(k), k == partitions - 1 ? nil : share(k + 1))
    }

    /// The records segment `k` holds in a log of `total` records.
    func expectedRecords(_ k: Int) -> Int { Int(share(k + 1) - share(k)) }

    /// The first position of segment `k` (`total + 1` for `k == partitions`).
    private func share(_ k: Int) -> UInt64 { 1 + total * UInt64(k) / UInt64(partitions) }

    func dealt(_ lists: [[RoutedRecord]], walked: Int, segment: Int) {
        state.withLock { state in
            state.dealt[segment] = lists
            state.walked += UInt64(walked)
        }
    }

    /// Every segment's records of `partition`, in log order, once every
    /// segment is dealt; nil when a thread failed.
    func waitForEverySegment(partition: Int) -> [[RoutedRecord]]? {
        state.withLock(when: { $0.stopped || !$0.dealt.contains { $0 == nil } }) { state in
            state.stopped ? nil : state.dealt.map { $0![partition] }
        }
    }

    var stopped: Bool { state.withLock { $0.stopped } }

    func stop() { state.withLock { $0.stopped = true } }

    /// Records walked by every segment (the events rebuilt).
    var walked: UInt64 { state.withLock { $0.walked } }

    /// Records folded so far by every partition, roughly: for progress.
    var folded: UInt64 { progress.load(ordering: .relaxed) }

    func folded(_ count: Int) { progress.add(UInt64(count), ordering: .relaxed) }

    /// Says a thread reads no dealt record any more; the last to say so
    /// lets go of the lists (before the rows are worked out, not after).
    func doneReading() {
        state.withLock { state in
            state.reading -= 1
            if state.reading == 0 { state.dealt = [] }
        }
    }

    /// Returns once no thread reads a record any more.
    func waitUntilAllDoneReading() { state.withLock(when: { $0.reading == 0 }) { _ in } }
}

/// What the other partitions' threads hand back.
final class PartitionResults: Sendable {
    /// A partition stopped because another failed (`SplitWalk.stop`).
    struct Stopped: Error {}
    private struct State: @unchecked Sendable {
        // Each rebuilder was made and filled on the thread that hands it
        // over and is never touched there again: it moves, it is not shared.
        var results: [Int: Result<[any ProjectionRebuilder], any Error>] = [:]
    }
    private let state = Mutex(State())
    let partitions: Int

    init(partitions: Int) { self.partitions = partitions }

    func finish(_ partition: Int, _ result: Result<[any ProjectionRebuilder], any Error>) {
        state.withLock { $0.results[partition] = result }
    }

    /// The other partitions' rebuilders in partition order, or the error of
    /// the one that failed (not the `Stopped` of those it stopped).
    func take() throws -> [[any ProjectionRebuilder]] {
        let ordered = state.withLock { state in (1..<max(1, partitions)).compactMap { state.results[$0] } }
        for case .failure(let error) in ordered where !(error is Stopped) { throw error }
        return try ordered.map { try $0.get() }
    }
}
