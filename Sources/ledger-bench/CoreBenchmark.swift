import Foundation
import LMDB
import LedgerCore
// The store's own write transaction, measured under every layer above it.
@_spi(RawAppend) import LedgerStore

/// The ledger core measured against the physical limit (plain LMDB through
/// the same binding, same bytes, no encoding, no hashing, no indexes) and the
/// SQLite baseline, doing the same work in the same run.
struct CoreBenchmark {
    var events: Int
    var singleCommits: Int
    var directory: String

    func run() throws -> (rows: [Row], notes: [String]) {
        let clock = SystemClock()
        let actor = Actor(id: "u-1", name: "Bench Inspector", verified: true)
        let device = UUID()
        // Inspectors record one inspection at a time, so events of a stream come
        // in runs: eight open inspections interleaved, each 100 events long.
        let streams = (0..<max(8, events / 100 + 8)).map { _ in UUID() }
        func streamOf(_ i: Int) -> UUID { streams[((i / 800) * 8 + i % 8) % streams.count] }
        // A realistic small payload: a field set with a value and a label.
        func event(_ i: Int) -> PendingEvent {
            PendingEvent(
                stream: streamOf(i), type: "inspection.field_set", schemaVersion: 1, actor: actor,
                device: device, recordedAt: clock.now(),
                payload: CBORValue.textMap([
                    ("field", .text("\(i % 40)")), ("value", .text("Acceptable, with notes \(i)")),
                    ("kind", .text("radio")),
                ]).encoded())
        }
        let pending = (0..<events).map(event)
        // What the ledger will store, precomputed for the plain-LMDB and SQLite sides.
        // The records carry their stream's back-link as the ledger's do, so
        // both sides store values of the same size.
        var versions: [UUID: UInt64] = [:]
        var streamLeaves: [UUID: Digest256] = [:]
        var previous = Digest256.zero
        let chain = HashChain()
        let stored: [(key: [UInt8], id: [UInt8], stream: [UInt8], version: UInt64, hash: [UInt8], record: [UInt8])] =
            pending.enumerated().map { i, e in
                let version = (versions[e.stream] ?? 0) + 1
                versions[e.stream] = version
                let record = EventRecord(
                    position: UInt64(i + 1), streamVersion: version, event: e, previousInStream: streamLeaves[e.stream]
                ).encoded()
                streamLeaves[e.stream] = chain.leaf(ofRecord: record)
                previous = chain.next(previous: previous, record: record)
                return (BigEndian.bytes(UInt64(i + 1)), e.id.bytes, e.stream.bytes, version, previous.bytes, record)
            }

        var rows: [Row] = []
        var notes: [String] = []
        let ledgerDir = directory + "/ledger"
        let limitDir = directory + "/lmdb"
        let sqlitePath = directory + "/baseline.sqlite"

        // MARK: Batched appends, 1,000 per durable commit.
        let log = try EventLog(directory: ledgerDir)
        let tLedger = try Measure.seconds {
            for start in stride(from: 0, to: events, by: 1000) {
                try log.append(Array(pending[start..<min(start + 1000, events)]))
            }
        }
        let env = try Environment(directory: limitDir)
        let table = try env.table("events")!
        let tLimit = try Measure.seconds {
            for start in stride(from: 0, to: events, by: 1000) {
                try env.write { txn in
                    for s in stored[start..<min(start + 1000, events)] {
                        try txn.put(table, s.key, s.hash + s.record, flags: .append)
                    }
                }
            }
        }
        let sqlite = try SQLiteEventTable(path: sqlitePath)
        let tSQLite = try Measure.seconds {
            for start in stride(from: 0, to: events, by: 1000) {
                try sqlite.exec("BEGIN")
                for (i, s) in stored[start..<min(start + 1000, events)].enumerated() {
                    try sqlite.insert(
                        seq: Int64(start + i + 1), id: s.id, stream: s.stream, version: Int64(s.version), hash: s.hash,
                        record: s.record)
                }
                try sqlite.exec("COMMIT")
            }
        }
        let n = Double(events)
        rows.append(
            Row(
                name: "append, batches of 1,000", unit: "events/s", ledger: n / tLedger, limit: n / tLimit,
                baseline: n / tSQLite, target: ">= 300k/s"))

        // MARK: One durable commit per event.
        // fsync times drift on a shared machine, so the three sides take turns
        // in ten rounds instead of running one after the other.
        let single = (0..<singleCommits).map(event)
        var sLedger = 0.0
        var sLimit = 0.0
        var sSQLite = 0.0
        var nextKey = UInt64(events)
        var nextSeq = Int64(events)
        let rounds = 10
        for round in 0..<rounds {
            let slice = (round * singleCommits / rounds)..<((round + 1) * singleCommits / rounds)
            sLedger += try Measure.seconds {
                for e in single[slice] { try log.append([e]) }
            }
            sLimit += try Measure.seconds {
                for s in stored[slice] {
                    nextKey += 1
                    let key = BigEndian.bytes(nextKey)
                    try env.write { txn in try txn.put(table, key, s.hash + s.record, flags: .append) }
                }
            }
            sSQLite += try Measure.seconds {
                for s in stored[slice] {
                    nextSeq += 1
                    try sqlite.insert(
                        seq: nextSeq, id: UUID().bytes, stream: s.stream, version: Int64(nextSeq), hash: s.hash,
                        record: s.record)
                }
            }
        }
        let m = Double(singleCommits)
        rows.append(
            Row(
                name: "append, one durable commit each", unit: "events/s", ledger: m / sLedger, limit: m / sLimit,
                baseline: m / sSQLite, target: ">= 90% of plain LMDB"))

        // MARK: Where a single commit's time goes, and what it writes.
        // Extra commits after the timed ones (reading the I/O counters costs a
        // few µs, kept out of the rates), taking turns like the rounds above.
        let breakdown = min(500, max(singleCommits / 4, 10))
        let extra = (0..<breakdown).map { event(singleCommits + $0) }
        // Plain LMDB again, putting what the ledger's format stores: the same
        // four tables, keys and values, and as many entries as the log has by
        // now, but no checks, lookups or encoding. Its commit is what LMDB
        // itself costs for the format.
        let format = try FormatTables(directory: directory + "/lmdb-format")
        try format.fill(stored, count: events + singleCommits, streamOf: streamOf)
        var ledgerCost = CommitCost()
        var limitCost = CommitCost()
        var formatCost = CommitCost()
        for i in 0..<breakdown {
            try ledgerCost.add { marks in
                try log.write { writer in
                    marks.bodyStart = Measure.now()
                    try writer.append(extra[i])
                    marks.bodyEnd = Measure.now()
                }
            }
            let s = stored[i % stored.count]
            nextKey += 1
            let key = BigEndian.bytes(nextKey)
            try limitCost.add { marks in
                try env.write { txn in
                    marks.bodyStart = Measure.now()
                    try txn.put(table, key, s.hash + s.record, flags: .append)
                    marks.bodyEnd = Measure.now()
                }
            }
            let entry = format.next(stored, streamOf: streamOf)
            try formatCost.add { marks in
                try format.environment.write { txn in
                    marks.bodyStart = Measure.now()
                    try format.put(entry, in: txn)
                    marks.bodyEnd = Measure.now()
                }
            }
        }
        notes.append("one durable commit, ledger:                      " + ledgerCost.line())
        notes.append("one durable commit, plain LMDB:                  " + limitCost.line())
        notes.append("one durable commit, plain LMDB, ledger's tables: " + formatCost.line())
        notes.append(
            String(
                format: "  ledger ÷ plain LMDB with the ledger's tables %.2f (the ledger's own work); "
                    + "those tables ÷ plain LMDB %.2f (LMDB's cost of the format's three more trees)",
                formatCost.perCommit / ledgerCost.perCommit, limitCost.perCommit / formatCost.perCommit))
        format.environment.close()

        // MARK: Full scan, decoding every record.
        var decoded = 0
        let scanLedger = try Measure.seconds { decoded &+= try Scan.payloadBytes(log) }
        var bytes = 0
        let scanLimit = try Measure.seconds { bytes &+= try Scan.valueBytes(env, table) }
        let scanSQLite = try Measure.seconds { try sqlite.scan { _, record in bytes &+= record.count } }
        let total = Double(events + singleCommits + breakdown)
        rows.append(
            Row(
                name: "full scan (ledger decodes)", unit: "events/s", ledger: total / scanLedger,
                limit: total / scanLimit, baseline: total / scanSQLite, target: ">= 0.5 of plain LMDB"))

        // MARK: Full scan again, cold: every file evicted from the page cache.
        // The environments are closed first (mapped pages are not evicted),
        // and the residency is measured, not assumed.
        log.close()
        env.close()
        PageCache.evict([ledgerDir, limitDir, sqlitePath, sqlitePath + "-wal"])
        let resident = PageCache.residentFraction([ledgerDir, limitDir, sqlitePath])
        var readOnly = Environment.Options()
        readOnly.readOnly = true
        let coldLog = try EventLog(directory: ledgerDir, options: readOnly)
        let coldEnv = try Environment(directory: limitDir, options: readOnly)
        let coldTable = try coldEnv.table("events")!
        let coldLedger = try Measure.seconds { decoded &+= try Scan.payloadBytes(coldLog) }
        let coldLimit = try Measure.seconds { bytes &+= try Scan.valueBytes(coldEnv, coldTable) }
        let coldSQLite = try Measure.seconds { try sqlite.scan { _, record in bytes &+= record.count } }
        rows.append(
            Row(
                name: "full scan (ledger decodes)", unit: "events/s", ledger: total / coldLedger,
                limit: total / coldLimit, baseline: total / coldSQLite,
                target: String(format: "%.0f%% of the files cached at start", resident * 100), cache: "cold"))

        // MARK: Verify: every hash of the chain recomputed (warm: the cold scan read it all).
        var report: VerificationReport?
        let vLedger = try Measure.seconds { report = try coldLog.verify() }
        guard report?.isIntact == true else {
            throw BenchError("the ledger did not verify: \(String(describing: report))")
        }
        let vLimit = try Measure.seconds {
            var prev = Digest256.zero
            try coldEnv.read { txn in
                try txn.forEach(coldTable) { _, value in
                    prev = chain.link(previous: prev, leaf: chain.leaf(ofRecordIn: value, range: 32..<value.count))
                    return true
                }
            }
        }
        let vSQLite = try Measure.seconds {
            var prev = Digest256.zero
            try sqlite.scan { _, record in prev = chain.next(previous: prev, record: record) }
        }
        // The ledger's verify runs on two threads (the walk and `TreeCheck`),
        // the chain walks it is compared with on one: the row gives per-core
        // ratios too.
        rows.append(
            Row(
                name: "verify (SHA-256 chain)", unit: "events/s", ledger: total / vLedger, limit: total / vLimit,
                baseline: total / vSQLite, target: ">= 1M/s on two cores (one snapshot, indexes and tree checked too)",
                ledgerThreads: 2))
        coldLog.close()
        coldEnv.close()
        _ = decoded
        return (rows, notes)
    }
}

/// A plain LMDB environment with the ledger format's four tables (`events`,
/// `event_ids`, `stream_index`, `merkle`), written with the same keys and
/// values as the ledger writes them but none of its code: the floor of a
/// durable commit in this format.
final class FormatTables {
    let environment: Environment
    let events: Table
    let eventIDs: Table
    let streamIndex: Table
    let merkle: Table
    private var frontier = MerkleFrontier(size: 0, subtrees: [])
    private var versions: [UUID: UInt64] = [:]
    private let hasher = SHA256Hasher()
    /// Ids as the ledger's events get them: time-ordered, so `event_ids` grows at its end.
    private let clock = SystemClock()

    /// One append's puts, computed before its transaction.
    struct Entry {
        var key: [UInt8]
        var value: [UInt8]
        var id: [UInt8]
        var streamKey: [UInt8]
        var nodes: [(key: [UInt8], hash: [UInt8])]
    }

    init(directory: String) throws {
        let environment = try Environment(directory: directory)
        func open(_ name: String) throws -> Table {
            guard let table = try environment.table(name) else { throw BenchError("no table \(name)") }
            return table
        }
        self.environment = environment
        events = try open("events")
        eventIDs = try open("event_ids")
        streamIndex = try open("stream_index")
        merkle = try open("merkle")
    }

    /// The next append: a stored record's bytes at the next position, a new
    /// time-ordered id, the next version of its stream, the tree nodes it completes.
    func next(
        _ stored: [(key: [UInt8], id: [UInt8], stream: [UInt8], version: UInt64, hash: [UInt8], record: [UInt8])],
        streamOf: (Int) -> UUID
    ) -> Entry {
        let index = Int(frontier.size)
        let s = stored[index % stored.count]
        let stream = streamOf(index)
        let version = (versions[stream] ?? 0) + 1
        versions[stream] = version
        var nodes: [(key: [UInt8], hash: [UInt8])] = []
        frontier.append(leaf: hasher.digest(prefix: 0x00, s.record, range: 0..<s.record.count), hasher: hasher) {
            level, index, hash in
            // The subtree's last leaf (u64 BE) ‖ its level, as `merkle` keys are.
            var key = BigEndian.bytes(((index + 1) << UInt64(level)) - 1)
            key.append(UInt8(level))
            nodes.append((key, hash.bytes))
        }
        var streamKey = stream.bytes
        BigEndian.append(version, to: &streamKey)
        return Entry(
            key: BigEndian.bytes(frontier.size), value: s.hash + s.record, id: UUID.timeOrdered(at: clock.now()).bytes,
            streamKey: streamKey,
            nodes: nodes)
    }

    /// The ledger's puts of one append, with its flags.
    func put(_ entry: Entry, in txn: Transaction) throws {
        try txn.put(events, entry.key, entry.value, flags: .append)
        try txn.put(eventIDs, entry.id, entry.key, flags: .noOverwrite)
        try txn.put(streamIndex, entry.streamKey, entry.key, flags: .noOverwrite)
        for node in entry.nodes { try txn.put(merkle, node.key, node.hash, flags: .append) }
    }

    /// `count` appends in batches of 1,000, untimed: the tables' size (and
    /// so their depth) of the ledger's at the time of the comparison.
    func fill(
        _ stored: [(key: [UInt8], id: [UInt8], stream: [UInt8], version: UInt64, hash: [UInt8], record: [UInt8])],
        count: Int, streamOf: (Int) -> UUID
    ) throws {
        for start in stride(from: 0, to: count, by: 1000) {
            let entries = (start..<min(start + 1000, count)).map { _ in next(stored, streamOf: streamOf) }
            try environment.write { txn in
                for entry in entries { try put(entry, in: txn) }
            }
        }
    }
}
