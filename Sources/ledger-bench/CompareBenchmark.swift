import Foundation

/// Two builds of `jqc` on the same ledger in the same run: each command run
/// by the old build and the new one in turn (ABBA: old, new, new, old, …, so
/// a machine getting busier or quieter meets both alike), every run timed
/// from the first (none dropped as a warm-up), wall time and the CPU time of
/// the child and every thread it ran (user + system, from `wait4`).
///
/// The ratio is new ÷ old of the medians: above 1 the new build is slower.
/// Noise is shown as each side's spread (fastest and slowest run) and the
/// ratio of the fastest runs; on a shared machine the CPU-time medians are
/// the steadier figure. When the two builds run a command on a different
/// number of threads, the wall ratio is not a per-core one: the CPU ratio is.
struct CompareBenchmark {
    var old: String
    var new: String
    var ledger: String
    var rounds: Int
    var only: Set<String>
    var cold: Bool
    /// The previous release's build (`--release DIR`), run in the same
    /// rounds (old, new, release, then release, new, old): its own table,
    /// new ÷ release, follows the old/new one.
    var release: String? = nil

    struct Run {
        var wall: Double
        var cpu: Double
    }

    /// `jqc …` under `build`, with stdout to `stdout`; its wall and CPU time.
    func run(_ build: String, _ arguments: [String], stdout: String = "/dev/null") throws -> Run {
        let argv = [build + "/jqc", "--ledger", ledger, "--as", "bench"] + arguments
        if cold { PageCache.evict([ledger + "/store", ledger + "/photos"]) }
        var usage = rusage()
        var status: Int32 = 0
        let wall = try Measure.seconds {
            status = try CommandBenchmark.spawnAndWait(argv, stdout: stdout, usage: &usage)
        }
        guard status == 0 else {
            throw BenchError("\(build)/jqc \(arguments.joined(separator: " ")) exited with status \(status)")
        }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return Run(wall: wall, cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime))
    }

    /// The commands compared, by name (`--only NAME,…` picks some). Reads;
    /// `rebuild`, which rewrites every view from the same log each time; and
    /// `set`, one answer to a draft (`draft`, nil: none listed, so not run),
    /// which appends one event per run: a value of its own each run
    /// (`{run}`), since the value the field already holds records nothing.
    /// The draft is started for this comparison (`freshDraft`), so its
    /// stream, folded by every set, is as long in every session; both builds
    /// meet the same ledger to within those few events in every round.
    func commands(inspection: String, draft: String? = nil) -> [(name: String, arguments: [String], stdout: String)] {
        let log = NSTemporaryDirectory() + "jqc-compare-log-\(getpid()).txt"
        let all: [(String, [String], String)] = [
            ("version", ["--version"], "/dev/null"),
            ("show", ["show", inspection], "/dev/null"),
            ("audit", ["audit", inspection], "/dev/null"),
            ("inspections", ["inspections"], "/dev/null"),
            ("log", ["log"], log),
            // The exported JSON lines: issue #32 item 5 holds both forms to 500 k lines/s.
            ("log-json", ["--json", "log"], log),
            ("verify-full", ["verify", "--full"], "/dev/null"),
            ("rebuild", ["rebuild"], "/dev/null"),
        ]
        // The domain ledger's drafts have a free-text Notes field.
        let writes: [(String, [String], String)] =
            draft.map { [("set", ["set", $0, "Notes=compare \(Self.runMark)"], "/dev/null")] } ?? []
        // What a checkpoint and a proof cost (the map of stream heads: its
        // root read for the `jqc-heads` line, a head proof per bundle).
        let proofs: [(String, [String], String)] = [
            ("checkpoint", ["checkpoint"], "/dev/null"), ("prove", ["prove", inspection], "/dev/null"),
        ]
        return (all + proofs + writes).filter { only.isEmpty || only.contains($0.0) }.map {
            (name: $0.0, arguments: $0.1, stdout: $0.2)
        }
    }

    /// The first inspection the new build lists (for show and audit).
    func someInspection() throws -> String {
        guard let first = try firstListed("inspections") else {
            throw BenchError("the ledger \(ledger) lists no inspection")
        }
        return first
    }

    /// The id of the first inspection `jqc --json LISTING` (inspections,
    /// drafts) of the new build names, nil when it lists none.
    func firstListed(_ listing: String) throws -> String? {
        try firstListedRow(listing)?["id"] as? String
    }

    /// The first row `jqc --json LISTING` of the new build gives.
    func firstListedRow(_ listing: String) throws -> [String: Any]? {
        (try json(new, ["--json", listing]) as? [[String: Any]])?.first
    }

    /// What `jqc ARGUMENTS` of `build` writes on stdout, read as JSON.
    func json(_ build: String, _ arguments: [String]) throws -> Any {
        let output = NSTemporaryDirectory() + "jqc-compare-json-\(getpid()).json"
        defer { unlink(output) }
        _ = try run(build, arguments, stdout: output)
        return try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// A draft started now by the new build, from the template and at the
    /// facility of a draft the ledger lists (so both are in its reference
    /// data); nil when it lists none.
    func freshDraft() throws -> String? {
        guard let listed = try firstListedRow("drafts"), let template = listed["template_id"] as? String,
            let facility = listed["facility_id"] as? String
        else { return nil }
        let started = try json(new, ["--json", "start", "--template", template, "--facility", facility])
        guard let id = (started as? [String: Any])?["id"] as? String else {
            throw BenchError("jqc start gave no inspection id")
        }
        return id
    }

    /// Replaced in a command's arguments by a mark of its own for each run.
    static let runMark = "{run}"

    /// The load averages (1, 5, 15 min): how busy the machine was.
    static func load() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "unknown"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    func run(inspection: String) throws {
        print("== compare: \(rounds) rounds, old then new, then new then old (ABBA), every run timed")
        print("  old \(old)")
        print("  new \(new)")
        print("  load at start \(Self.load()) (1, 5, 15 min)")
        print(
            "  ledger \(ledger), \(cold ? "cold (store and photos evicted before each run)" : "warm (page cache as left by the previous run)")"
        )
        print(
            "  command        wall: old med  new med  new÷old  (fastest: old  new  ÷)   cpu: old med  new med  new÷old  (fastest ÷)   spread new wall"
        )
        let wantsSet = only.isEmpty || only.contains("set")
        let draft = wantsSet ? try freshDraft() : nil
        if wantsSet {
            print(
                draft.map { "  set: on a draft started for this comparison, \($0)" }
                    ?? "  set: not run (the ledger lists no draft)")
        }
        var againstRelease: [String] = []
        for command in commands(inspection: inspection, draft: draft) {
            let (olds, news, releases) = try measure(command.arguments, stdout: command.stdout)
            if let releases { againstRelease.append(line(command.name, releases, news)) }
            print(line(command.name, olds, news) + "   load \(Self.load())")
        }
        print("  (medians of \(rounds) runs each; the first runs are counted; cpu = user + system of all threads)")
        if let release {
            print("== against the last release (\(release)), the same rounds: old = that release, new = \(new)")
            againstRelease.forEach { print($0) }
        }
    }

    /// Every round's runs of one command: old, new (and the release) in
    /// turn, the order reversed every other round.
    func measure(_ arguments: [String], stdout: String) throws -> (old: [Run], new: [Run], release: [Run]?) {
        var olds: [Run] = []
        var news: [Run] = []
        var releases: [Run] = []
        let builds = [old, new] + (release.map { [$0] } ?? [])
        for round in 0..<rounds {
            // By index, not path: the same directory may be given twice.
            let order = round % 2 == 0 ? Array(builds.indices) : builds.indices.reversed()
            for index in order {
                let marked = arguments.map { $0.replacingOccurrences(of: Self.runMark, with: "\(round).\(index)") }
                let run = try run(builds[index], marked, stdout: stdout)
                switch index {
                case 0: olds.append(run)
                case 1: news.append(run)
                default: releases.append(run)
                }
            }
        }
        if stdout != "/dev/null" { unlink(stdout) }
        return (olds, news, release == nil ? nil : releases)
    }

    func line(_ name: String, _ olds: [Run], _ news: [Run]) -> String {
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            let n = sorted.count
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
        }
        let oldWall = median(olds.map(\.wall))
        let newWall = median(news.map(\.wall))
        let oldFast = olds.map(\.wall).min()!
        let newFast = news.map(\.wall).min()!
        let oldCPU = median(olds.map(\.cpu))
        let newCPU = median(news.map(\.cpu))
        let cpuFast = news.map(\.cpu).min()! / olds.map(\.cpu).min()!
        return "  "
            + name.padding(toLength: 14, withPad: " ", startingAt: 0)
            + String(
                format:
                    " %9.1f ms %7.1f ms  %5.2fx   (%7.1f %7.1f %5.2fx)  %9.1f ms %7.1f ms  %5.2fx   (%5.2fx)      %.1f–%.1f ms",
                oldWall * 1000, newWall * 1000, newWall / oldWall, oldFast * 1000, newFast * 1000, newFast / oldFast,
                oldCPU * 1000, newCPU * 1000, newCPU / oldCPU, cpuFast, newFast * 1000,
                news.map(\.wall).max()! * 1000)
    }
}
