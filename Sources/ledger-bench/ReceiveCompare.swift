import Foundation
import LedgerTestSupport

/// `jqc receive` of the same handover files by two builds (`compare --only
/// receive`): a case of its own because a reception writes to its ledger, so
/// every run receives into a fresh copy of one receiver ledger (copied before
/// the clock starts, removed after) and both builds meet the same ledger and
/// the same bytes in every round.
///
/// Two files, both written once by the new build's `jqc handover` (the
/// handover file's bytes are the same for both builds): a shared inspection
/// as one is in the field (five answers, three photos of 1.6 MiB: about 6.5 MB
/// of JSON) and one at the reader's other end (four photos of 16 MiB: about
/// 89 MB), where reading the photos' base64 is nearly all of the work.
struct ReceiveCompare {
    var compare: CompareBenchmark
    var directory: String

    /// The files received, by name: photos per file and each photo's size.
    static let cases: [(name: String, photos: Int, bytes: Int)] = [
        ("receive-field", 3, 1_677_722),
        ("receive-16MiB", 4, 16 << 20),
    ]

    func run() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = directory + "/receiver"
        try jqc(receiver, ["init"])
        try jqc(receiver, ["pull", "--from", SampleReference.path])
        print("== compare receive: \(compare.rounds) rounds ABBA, each run into a fresh copy of one receiver ledger")
        print("  old \(compare.old)")
        print("  new \(compare.new)")
        print("  load at start \(CompareBenchmark.load()) (1, 5, 15 min)")
        print(
            "  file           wall: old med  new med  new÷old  (fastest: old  new  ÷)   cpu: old med  new med  new÷old  (fastest ÷)   spread new wall"
        )
        for item in Self.cases {
            let file = try handoverFile(item.name, photos: item.photos, bytes: item.bytes)
            let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            let (olds, news) = try measure(file: file, receiver: receiver)
            print(
                compare.line(item.name, olds, news)
                    + String(format: "   %.1f MB, load %@", Double(size) / 1e6, CompareBenchmark.load()))
        }
        print("  (medians of \(compare.rounds) runs each; the copy of the receiver is not timed)")
    }

    /// Every round's two receptions, old and new in turn, the order reversed
    /// every other round.
    func measure(file: String, receiver: String) throws -> (old: [CompareBenchmark.Run], new: [CompareBenchmark.Run]) {
        var olds: [CompareBenchmark.Run] = []
        var news: [CompareBenchmark.Run] = []
        for round in 0..<compare.rounds {
            let order = round % 2 == 0 ? [0, 1] : [1, 0]
            for index in order {
                let fresh = directory + "/fresh"
                try? FileManager.default.removeItem(atPath: fresh)
                try FileManager.default.copyItem(atPath: receiver, toPath: fresh)
                let build = index == 0 ? compare.old : compare.new
                let run = try timed(build, ["--ledger", fresh, "--as", "Ben", "receive", file])
                try FileManager.default.removeItem(atPath: fresh)
                if index == 0 { olds.append(run) } else { news.append(run) }
            }
        }
        return (olds, news)
    }

    /// A handover file of an inspection with five answers and `photos`
    /// photos of `bytes` bytes each (a JPEG's first bytes, then bytes that
    /// differ per photo and do not repeat), shared by Dana (`handover --share`).
    func handoverFile(_ name: String, photos: Int, bytes: Int) throws -> String {
        let sender = directory + "/sender-" + name
        try jqc(sender, ["init"])
        try jqc(sender, ["pull", "--from", SampleReference.path])
        let started = directory + "/started.json"
        try jqc(
            sender, ["--as", "Dana", "--json", "start", "-t", "Restroom QC", "-f", "101"], stdout: started)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: started)))
        guard let inspection = (object as? [String: Any])?["id"] as? String else {
            throw BenchError("jqc start printed no inspection id in \(started)")
        }
        for value in 1...5 { try jqc(sender, ["--as", "Dana", "set", inspection, "Floors", "\(value)"]) }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for number in 1...photos {
            var photo: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
            photo.reserveCapacity(bytes)
            while photo.count < bytes {
                // xorshift: incompressible, like a JPEG's entropy-coded data.
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                photo.append(UInt8(truncatingIfNeeded: state))
            }
            let path = directory + "/photo\(number).jpg"
            try Data(photo).write(to: URL(fileURLWithPath: path))
            try jqc(sender, ["--as", "Dana", "photo", inspection, "Photo of problem area", path])
            unlink(path)
        }
        let file = directory + "/" + name + ".json"
        try jqc(sender, ["--as", "Dana", "handover", inspection, "--share", "-o", file])
        return file
    }

    /// The new build's `jqc --ledger LEDGER …`, which must succeed.
    func jqc(_ ledger: String, _ arguments: [String], stdout: String = "/dev/null") throws {
        let status = try CommandBenchmark.spawnAndWait(
            [compare.new + "/jqc", "--ledger", ledger] + arguments, stdout: stdout)
        guard status == 0 else {
            throw BenchError("jqc \(arguments.joined(separator: " ")) on \(ledger) exited with status \(status)")
        }
    }

    /// One timed run of `build`'s jqc: wall and CPU time (user + system).
    func timed(_ build: String, _ arguments: [String]) throws -> CompareBenchmark.Run {
        var usage = rusage()
        var status: Int32 = 0
        let wall = try Measure.seconds {
            status = try CommandBenchmark.spawnAndWait([build + "/jqc"] + arguments, stdout: "/dev/null", usage: &usage)
        }
        guard status == 0 else {
            throw BenchError("\(build)/jqc \(arguments.joined(separator: " ")) exited with status \(status)")
        }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return CompareBenchmark.Run(wall: wall, cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }
}
