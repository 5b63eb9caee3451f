import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport

/// Issue #30's figure: `jqc audit` and `jqc show` of an inspection three
/// devices shared among them over 30 exchanges (`handover --share` and
/// `receive`, every pair in both directions, two answers before each share,
/// a field photo every fifth, the first device's field and issue photos),
/// on the ledger of the device that received last. The ledgers are made by
/// this build's `jqc`; with `--old DIR`, `DIR/jqc` runs the same two
/// commands on the same ledger in the same rounds (ABBA, `CompareBenchmark`).
/// The goal is an audit under 100 ms.
struct TeamBenchmark {
    var directory: String
    var exchanges = 30
    var old: String?
    var rounds: Int

    var builds: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }

    /// Runs `jqc arguments` of this build on `ledger`; its stdout, or a
    /// failure naming the command.
    @discardableResult
    func jqc(_ ledger: String, _ arguments: [String], as actor: String = "bench") throws -> String {
        let output = directory + "/out.txt"
        let argv = [builds + "/jqc", "--ledger", ledger, "--as", actor] + arguments
        let status = try CommandBenchmark.spawnAndWait(argv, stdout: output)
        guard status == 0 else {
            throw BenchError("jqc \(arguments.joined(separator: " ")) on \(ledger) exited with status \(status)")
        }
        return try String(contentsOfFile: output, encoding: .utf8)
    }

    /// A ledger made by `jqc init` with the fixture reference data in its cache.
    func device(_ name: String) throws -> String {
        let ledger = directory + "/" + name
        try jqc(ledger, ["init"])
        let store = try InspectionLedger(storePath: ledger + "/store", photosPath: ledger + "/photos")
        defer { store.close() }
        let json = try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
        try store.reference.replace(with: try ReferenceCache.Snapshot(json: json), at: SystemClock().now())
        return ledger
    }

    /// A PNG no other photo of the run has.
    func photo(_ serial: Int) throws -> String {
        let path = directory + "/p\(serial).png"
        try SampleReference.png(width: 2 + serial, red: UInt8(serial % 250)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The three ledgers after the exchanges, and the inspection.
    func build() throws -> (ledgers: [String], inspection: String) {
        let names = ["Ana", "Ben", "Cleo"]
        let ledgers = try names.map { try device($0) }
        let started = try JSONValue(
            parsing: Array(try jqc(ledgers[0], ["--json", "start", "-t", "11", "-f", "101"]).utf8))
        guard let id = started["id"]?.stringValue else { throw BenchError("jqc start printed no id") }
        try jqc(ledgers[0], ["photo", id, "10", try photo(0)], as: names[0])
        try jqc(ledgers[0], ["flag", id, "--severity", "high", "--description", "Leak", "--photo", try photo(1)])
        let answers = ["2=3", "3=4", "5=pass", "4=2", "6=fail", "2=5", "3=1"]
        for exchange in 1...exchanges {
            let (from, to) = pairs(exchange)
            // The second device holds no copy until its first file arrives.
            if exchange > 1 {
                try jqc(ledgers[from], ["set", id, answers[exchange % answers.count]], as: names[from])
                try jqc(ledgers[from], ["set", id, "9=note \(exchange)"], as: names[from])
                if exchange % 5 == 0 { try jqc(ledgers[from], ["photo", id, "10", try photo(exchange + 1)]) }
            }
            let file = directory + "/share\(exchange).json"
            try jqc(ledgers[from], ["handover", id, "--share", "-o", file], as: names[from])
            try jqc(ledgers[to], ["receive", file], as: names[to])
        }
        return (ledgers, id)
    }

    func run() throws {
        print("== team: \(exchanges) share exchanges among three devices, then audit and show on the last receiver")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (ledgers, id) = try build()
        let last = ledgers[pairs(exchanges).to]
        let audited = try jqc(last, ["audit", id])
        print("  " + (audited.split(separator: "\n").first { $0.hasPrefix("RESULT") }.map(String.init) ?? "no RESULT"))
        let size = try FileManager.default.attributesOfItem(atPath: directory + "/share\(exchanges).json")[.size]
        print("  the last share file: \((size as? Int).map { "\($0 / 1024) KB" } ?? "?")")
        let compare = CompareBenchmark(
            old: old ?? builds, new: builds, ledger: last, rounds: rounds, only: ["show", "audit"], cold: false)
        try compare.run(inspection: id)
        if old == nil { print("  (no --old DIR: both sides are this build)") }
    }

    /// Who sends to whom in the exchange numbered `exchange` (from 1):
    /// every pair in both directions, in turn, so each device pins the
    /// others' keys.
    func pairs(_ exchange: Int) -> (from: Int, to: Int) {
        let pairs = [(0, 1), (1, 2), (2, 0), (0, 2), (2, 1), (1, 0)]
        return pairs[(exchange - 1) % pairs.count]
    }
}
