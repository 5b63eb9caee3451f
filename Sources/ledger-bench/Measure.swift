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
struct Row {
    var name: String
    var unit: String
    var ledger: Double
    var limit: Double?
    var baseline: Double?
    var target: String

    static func header() -> String {
        pad("work", 34) + pad("ledger", 14) + pad("plain LMDB", 14) + pad("SQLite", 14)
            + pad("ledger/LMDB", 13) + pad("ledger/SQLite", 15) + "target"
    }

    func line() -> String {
        func fmt(_ v: Double?) -> String { v.map { Self.format($0) } ?? "-" }
        func ratio(_ b: Double?) -> String { b.map { String(format: "%.2f", ledger / $0) } ?? "-" }
        return Self.pad(name, 34) + Self.pad(fmt(ledger), 14) + Self.pad(fmt(limit), 14)
            + Self.pad(fmt(baseline), 14) + Self.pad(ratio(limit), 13) + Self.pad(ratio(baseline), 15) + target
    }

    static func format(_ rate: Double) -> String {
        rate >= 10_000 ? String(format: "%.0fk/s", rate / 1000) : String(format: "%.0f/s", rate)
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }
}
