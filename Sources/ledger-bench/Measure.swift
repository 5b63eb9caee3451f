import Foundation

/// Wall-clock timing for benchmarks (never for tests).
enum Measure {
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        try body()
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
    }

    /// The monotonic clock in seconds, for marks inside a measured step.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// One measured row: the same work done by the ledger and its comparisons.
///
/// When the ledger uses more threads than its comparisons, the ratios are
/// also given per core (each side's rate divided by its threads), so two
/// threads against one never pass for a faster design.
struct Row {
    var name: String
    var unit: String
    var ledger: Double
    var limit: Double?
    var baseline: Double?
    var target: String
    /// "warm" (the files were just written or read) or "cold" (evicted first).
    var cache = "warm"
    /// Threads the ledger's side ran on, and the comparisons'.
    var ledgerThreads = 1
    var comparisonThreads = 1

    static func header() -> String {
        pad("work", 34) + pad("cache", 6) + pad("thr", 5) + pad("ledger", 11) + pad("plain LMDB", 12)
            + pad("SQLite", 10) + pad("÷LMDB", 7) + pad("÷SQLite", 9) + pad("per core ÷LMDB ÷SQLite", 24) + "target"
    }

    func line() -> String {
        func fmt(_ v: Double?) -> String { v.map { Self.format($0) } ?? "-" }
        func ratio(_ b: Double?) -> String { b.map { String(format: "%.2f", ledger / $0) } ?? "-" }
        func perCore(_ b: Double?) -> String {
            b.map {
                String(format: "%.2f", (ledger / Double(ledgerThreads)) / ($0 / Double(comparisonThreads)))
            } ?? "-"
        }
        let threads = "\(ledgerThreads)/\(comparisonThreads)"
        let cores =
            ledgerThreads == comparisonThreads ? "(same threads)" : perCore(limit) + "  " + perCore(baseline)
        return Self.pad(name, 34) + Self.pad(cache, 6) + Self.pad(threads, 5) + Self.pad(fmt(ledger), 11)
            + Self.pad(fmt(limit), 12) + Self.pad(fmt(baseline), 10) + Self.pad(ratio(limit), 7)
            + Self.pad(ratio(baseline), 9) + Self.pad(cores, 24) + target
    }

    static func format(_ rate: Double) -> String {
        rate >= 10_000 ? String(format: "%.0fk/s", rate / 1000) : String(format: "%.0f/s", rate)
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }
}

/// Where the time of single durable commits goes, summed over many: the
/// transaction's begin (the ledger's writer checks the head there), the work
/// inside it, and `mdb_txn_commit` (writing the dirty pages, the data file's
/// fdatasync, the meta page's synchronous write); and how much was written,
/// from the process's own I/O counters (`/proc/self/io` `wchar`, `syscw`).
struct CommitCost {
    var commits = 0
    var begin = 0.0
    var body = 0.0
    var commit = 0.0
    var bytesWritten = 0
    var writeCalls = 0

    /// Marks the end of the begin and of the body, from inside the transaction.
    struct Marks {
        var start = Measure.now()
        var bodyStart = 0.0
        var bodyEnd = 0.0
    }

    /// Runs `transaction` (one durable write transaction) with marks its
    /// body sets, and adds its cost.
    mutating func add(_ transaction: (inout Marks) throws -> Void) throws {
        let io = IOCounters.read()
        var marks = Marks()
        try transaction(&marks)
        let end = Measure.now()
        let after = IOCounters.read()
        commits += 1
        begin += marks.bodyStart - marks.start
        body += marks.bodyEnd - marks.bodyStart
        commit += end - marks.bodyEnd
        bytesWritten += after.bytes - io.bytes
        writeCalls += after.calls - io.calls
    }

    /// The mean time of one commit, begin to durable, in seconds.
    var perCommit: Double { (begin + body + commit) / Double(max(commits, 1)) }

    /// "begin 12 µs, body 30 µs, commit 250 µs; 36.0 KiB (9.0 pages) in 3.0 write calls".
    func line() -> String {
        let n = Double(max(commits, 1))
        return String(
            format: "begin %.0f µs, body %.0f µs, commit %.0f µs; %.1f KiB (%.1f pages of 4 KiB) in %.1f write calls",
            begin / n * 1e6, body / n * 1e6, commit / n * 1e6, Double(bytesWritten) / n / 1024,
            Double(bytesWritten) / n / 4096, Double(writeCalls) / n)
    }
}

/// The bytes this process has passed to write calls and their number, so a
/// benchmark can say how much one commit writes (the 120-byte meta page
/// write included).
enum IOCounters {
    static func read() -> (bytes: Int, calls: Int) {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return (0, 0) }
        var bytes = 0
        var calls = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
            if parts[0] == "wchar" { bytes = value }
            if parts[0] == "syscw" { calls = value }
        }
        return (bytes, calls)
    }
}
