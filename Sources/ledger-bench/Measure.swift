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
