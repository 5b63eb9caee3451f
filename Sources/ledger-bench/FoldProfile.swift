import Foundation
import InspectionDomain
import InspectionStore
import LMDB
import LedgerCore
import LedgerStore

/// Where a rebuild's and a point read's time goes, stage by stage, over the
/// ledger a `domain` run generated (`ledger-bench profile --dir D`).
///
/// Each stage adds one step to the one before and runs on one thread, timed
/// by that thread's CPU clock (so another process on the machine does not
/// inflate it); the last rows are the real rebuild and read, wall-clock.
struct FoldProfile {
    var ledgerPath: String

    func run() throws {
        let directory = LedgerDirectory(path: ledgerPath)
        let storePath = directory.storePath
        guard FileManager.default.fileExists(atPath: directory.storeDataPath) else {
            throw BenchError(
                "no generated ledger at \(ledgerPath): run 'ledger-bench domain --dir D' first, then 'profile --dir D'")
        }
        let log = try EventLog(directory: storePath, options: .existingStore)
        defer { log.close() }
        let count = try log.read { try $0.count() }
        print("  \(count) events; per event, CPU time of one thread (each stage includes the ones above it):")

        // S0: the limit, LMDB's cursor walking the same values in place.
        let walk = try CPUTime.seconds { _ = try DomainBenchmark.plainWalk(log) }
        // S1: each value decoded as a record where it lies (payload copied
        // out). Each stage streams, as the rebuild does: nothing is kept.
        var seen = 0
        let decodeRecords = try CPUTime.seconds { seen &+= try Scan.payloadBytes(log) }
        // S2: and every payload decoded into its domain event.
        let decodePayloads = try CPUTime.seconds {
            try log.read { reader in
                try reader.forEachRecord { record in
                    if case .fieldSet = try InspectionEvent.decode(record) { seen &+= 1 }
                    return true
                }
            }
        }
        // S3: and every event applied to its inspection's state.
        var states: [UUID: InspectionState] = [:]
        var templates: [String: Template] = [:]
        let apply = try CPUTime.seconds {
            try log.read { reader in
                try reader.forEachRecord { record in
                    let event = try InspectionEvent.decode(record)
                    if case .templatePinned(let pin) = event { templates[pin.templateHash] = pin.template }
                    states[record.stream, default: InspectionState(id: record.stream)].apply(
                        event, recordedAt: record.recordedAt, actor: record.actor, pinnedTemplates: templates)
                    return true
                }
            }
        }
        let ids = Array(states.keys.prefix(1000))
        func perEvent(_ seconds: Double) -> String { String(format: "%7.0f ns", seconds / Double(count) * 1e9) }
        print("    walk the events table in place (LMDB)     \(perEvent(walk))")
        print("    + decode each record (zero-copy)          \(perEvent(decodeRecords))")
        print("    + decode each payload                     \(perEvent(decodePayloads))")
        print("    + apply to the inspection's state         \(perEvent(apply))")
        log.close()
        try sqliteStages()

        // The real rebuild: two threads, wall clock and the process's CPU.
        let ledger = try InspectionLedger(storePath: storePath, photosPath: directory.photosPath)
        defer { ledger.close() }
        let cpuBefore = CPUTime.process()
        let wall = try Measure.seconds { _ = try ledger.views.rebuild() }
        let cpu = CPUTime.process() - cpuBefore
        print(
            String(
                format: "    jqc's rebuild of every view: %.0f ns wall per event (%.0fk/s), %.0f ns CPU on %.2f cores",
                wall / Double(count) * 1e9, Double(count) / wall / 1000, cpu / Double(count) * 1e9, cpu / wall))

        // A point read, stage by stage, over the same 1,000 inspections.
        let events100 = try ledger.log.read { reader in try reader.records(inStream: ids[0]).count }
        print("  reading one inspection (\(events100) events), per read, CPU time of one thread:")
        let index = try CPUTime.seconds {
            try ledger.log.read { reader in for id in ids { _ = try reader.version(ofStream: id) } }
        }
        let positions = try ledger.log.read { reader in
            try ids.map { id in try reader.records(inStream: id).map(\.position) }
        }
        let events = try ledger.log.read { try $0.transaction.count(try ledger.log.table("events")) }
        let lookups = try CPUTime.seconds {
            try ledger.log.read { reader in
                for stream in positions {
                    for position in stream { _ = try reader.storedHash(at: position) }
                }
            }
        }
        let unchecked = try CPUTime.seconds {
            try ledger.log.read { reader in
                for stream in positions {
                    for position in stream { _ = try reader.unverifiedRecord(at: position) }
                }
            }
        }
        let verified = try CPUTime.seconds {
            try ledger.log.read { reader in for id in ids { _ = try reader.records(inStream: id) } }
        }
        var hashes: [String] = []
        for id in ids { if let hash = try ledger.state(of: id)?.templateHash, !hash.isEmpty { hashes.append(hash) } }
        let template = try CPUTime.seconds { for hash in hashes { _ = try ledger.pinnedTemplate(hash: hash) } }
        let whole = try CPUTime.seconds { for id in ids { _ = try ledger.state(of: id) } }
        func perRead(_ seconds: Double) -> String { String(format: "%7.1f µs", seconds / Double(ids.count) * 1e6) }
        print("    find the stream in its index              \(perRead(index))")
        print("    its records' values, looked up (\(events) in the table)  \(perRead(lookups))")
        print("    its records, looked up and decoded        \(perRead(unchecked))")
        print("    its records, each chain-checked, decoded  \(perRead(verified))")
        print("    its pinned template, read and decoded     \(perRead(template))")
        print("    the whole read and fold (state(of:))      \(perRead(whole))")
        _ = seen
    }
}

extension FoldProfile {
    /// The baseline's side of the rebuild row, over the SQLite table the
    /// same `domain` run kept beside the ledger (skipped when there is none):
    /// what its scan costs alone, and with the same decode and fold.
    func sqliteStages() throws {
        let domain = URL(fileURLWithPath: ledgerPath).deletingLastPathComponent().path
        let path = domain + "/baseline.sqlite"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let sqlite = try SQLiteEventTable(path: path)
        let last = try sqlite.lastRecordRow()
        guard last > 0 else { throw BenchError("the SQLite table at \(path) holds no records") }
        var bytes = 0
        let scan = try CPUTime.seconds { try sqlite.scan(through: last) { _, record in bytes &+= record.count } }
        let baseline = DomainBenchmark(inspections: 0, eventsPerInspection: 0, directory: domain)
        let rebuild = try CPUTime.seconds { try baseline.sqliteRebuild(sqlite, through: last) }
        let everyView = try CPUTime.seconds {
            try baseline.sqliteRebuild(sqlite, through: last, writing: .everyView)
        }
        func perRow(_ seconds: Double) -> String { String(format: "%7.0f ns", seconds / Double(last) * 1e9) }
        print("  the SQLite baseline's \(last) rows, per row, CPU time of one thread:")
        print("    scan the events table (rows copied out)   \(perRow(scan))")
        print("    its rebuild (+ decode, apply, summaries)  \(perRow(rebuild))")
        print("    the same, writing every view's rows       \(perRow(everyView))")
    }
}

/// CPU time, which another process on the machine does not inflate.
enum CPUTime {
    /// The calling thread's CPU time spent in `body`.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = thread()
        try body()
        return thread() - start
    }

    static func thread() -> Double { clock(CLOCK_THREAD_CPUTIME_ID) }
    static func process() -> Double { clock(CLOCK_PROCESS_CPUTIME_ID) }

    private static func clock(_ id: clockid_t) -> Double {
        var now = timespec()
        clock_gettime(id, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
