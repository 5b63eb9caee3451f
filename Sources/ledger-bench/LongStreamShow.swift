import Foundation
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc show` of one inspection whose stream is long (`compare --only
/// show-long`): a ledger of two inspections, of 5,000 and of 20,000 records,
/// generated as `domain` generates its inspections (answers, changes of
/// mind, clears, two photos, an issue, the sync outcomes), then each shown
/// by the old build and the new one in turn (ABBA). Showing folds the whole
/// stream, so the 20,000-record row should cost about four times the
/// 5,000-record one: the ratio of the two is printed for each build.
struct LongStreamShow {
    var compare: CompareBenchmark
    var directory: String

    static let lengths = [5_000, 20_000]

    func run() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = directory + "/ledger"
        let streams = try generate(ledger)
        let shown = CompareBenchmark(
            old: compare.old, new: compare.new, ledger: ledger, rounds: compare.rounds, only: [], cold: false)
        print("== compare show-long: \(compare.rounds) rounds ABBA, jqc show of one long stream")
        print("  old \(compare.old)")
        print("  new \(compare.new)")
        print("  load at start \(CompareBenchmark.load()) (1, 5, 15 min)")
        print(
            "  stream         wall: old med  new med  new÷old  (fastest: old  new  ÷)   cpu: old med  new med  new÷old  (fastest ÷)   spread new wall"
        )
        var cpu: [(old: Double, new: Double)] = []
        for (id, records) in streams {
            let (olds, news, _) = try shown.measure(["show", id.lowercased], stdout: "/dev/null")
            cpu.append((Self.median(olds.map(\.cpu)), Self.median(news.map(\.cpu))))
            print(shown.line("show \(records)", olds, news) + "   load \(CompareBenchmark.load())")
        }
        let factor = Double(streams[1].records) / Double(streams[0].records)
        print(
            String(
                format: "  cpu %d ÷ %d records: old %.2fx, new %.2fx (linear: %.2fx; process start counts in both)",
                streams[1].records, streams[0].records, cpu[1].old / cpu[0].old, cpu[1].new / cpu[0].new, factor))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }

    /// The ledger with one inspection of each length (appended in batches
    /// of 1,000, as a long day's work is), its config, photos and reference
    /// data; each inspection's id and records, in the order of `lengths`.
    func generate(_ ledger: String) throws -> [(id: UUID, records: Int)] {
        let reference = try ReferenceCache.Snapshot(
            json: try JSONValue(
                parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: "Tools/fixtures/reference.json")))))
        let actor = Actor(id: "u-1", name: "Dana Inspector", verified: true)
        let device = UUID()
        let clock = SystemClock()
        var random = SystemRandomNumberGenerator()
        try FileManager.default.createDirectory(atPath: ledger + "/photos", withIntermediateDirectories: true)
        let log = try EventLog(directory: ledger + "/store")
        var streams: [(id: UUID, records: Int)] = []
        for (index, length) in Self.lengths.enumerated() {
            let id = UUID()
            for photo in 0..<2 {
                let bytes = DomainBenchmark.photoBytes(inspection: id, index: photo)
                let name = ledger + "/photos/" + SHA256Hasher().digest(bytes).hex
                guard FileManager.default.createFile(atPath: name, contents: Data(bytes)) else {
                    throw BenchError("could not write the photo file \(name)")
                }
            }
            let events = DomainBenchmark.inspectionEvents(
                id: id, template: reference.templates[0], pinned: index > 0, count: length, random: &random)
            streams.append((id, events.count))
            for start in stride(from: 0, to: events.count, by: 1_000) {
                _ = try log.append(
                    events[start..<min(start + 1_000, events.count)].map {
                        $0.pending(stream: id, actor: actor, device: device, recordedAt: clock.now())
                    })
            }
        }
        log.close()
        let config =
            "{\"device_id\": \"\(device.lowercased)\", \"server_url\": null, \"created_at\": \"\(clock.now().iso8601)\"}"
        try Data(config.utf8).write(to: URL(fileURLWithPath: ledger + "/config.json"))
        let opened = try InspectionLedger(storePath: ledger + "/store", photosPath: ledger + "/photos")
        try opened.reference.replace(with: reference, at: clock.now())
        opened.close()
        return streams
    }
}
