import Foundation
import InspectionDomain
import LedgerTestSupport

/// The background sync at rest and at work (issue #33 item 5): `jqc sync
/// --daemon` against the development server, once woken by inotify and
/// netlink (the default) and once looking once a second
/// (`JQC_SYNC_WATCH=poll`, the way it waited before: the baseline), in
/// the same run, one after the other on fresh ledgers.
///
/// Rows: the daemon's CPU over `idleSeconds` with nothing to do (from
/// `/proc/PID/stat`, user + system, after its first pass), as a share of
/// one core (target below 1 %), and the time from `jqc submit` returning to
/// the ledger holding the server's id for it (target within a second),
/// the median of `submits` submissions.
struct DaemonBenchmark {
    var directory: String
    var idleSeconds: Double = 60
    var submits = 5

    /// What one daemon did.
    struct Figures {
        var idleCPUShare: Double
        var latencies: [Double]
    }

    func run() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let watched = try measure(mode: "events", environment: [:])
        let polled = try measure(mode: "poll", environment: ["JQC_SYNC_WATCH": "poll"])
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print(String(format: "  idle for %.0f s after the first pass; %d submits each (medians)", idleSeconds, submits))
        print("                                      idle CPU      submit → server")
        for (name, figures) in [
            ("woken by inotify and netlink", watched), ("looking once a second (baseline)", polled),
        ] {
            print(
                "  " + name.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + String(
                        format: " %8.3f %%   %8.0f ms", 100 * figures.idleCPUShare, 1000 * median(figures.latencies)))
        }
        let ratio = polled.idleCPUShare > 0 ? watched.idleCPUShare / polled.idleCPUShare : 0
        print(String(format: "  idle CPU, woken ÷ polling %8.2f        target: idle below 1 %% of a core", ratio))
    }

    /// One daemon on a fresh ledger: idle, then `submits` submissions one after the other.
    func measure(mode: String, environment: [String: String]) throws -> Figures {
        let server = try BenchServer(fixtures: nil, database: directory + "/server-\(mode).sqlite")
        defer { server.stop() }
        let ledger = directory + "/ledger-\(mode)"
        try? FileManager.default.removeItem(atPath: ledger)
        let jqc = Self.jqcPath
        func run(_ arguments: [String], input: String? = nil) throws -> String {
            try SyncBenchmark.run(jqc, ["--ledger", ledger] + arguments, input: input)
        }
        _ = try run(["init", "--server", server.baseURL])
        _ = try run(["login", "--username", "inspector", "--password-stdin"], input: "inspector-pass\n")
        _ = try run(["pull"])
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: jqc)
        daemon.arguments = ["--ledger", ledger, "sync", "--daemon"]
        daemon.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        try Self.waitFor("the daemon's first pass", seconds: 30) {
            FileManager.default.contents(atPath: ledger + "/sync-daemon.json").map {
                String(decoding: $0, as: UTF8.self).contains("\"last_pass\":{")
            } ?? false
        }
        let before = try Self.cpuSeconds(of: daemon.processIdentifier)
        let started = Date()
        Thread.sleep(forTimeInterval: idleSeconds)
        let share = (try Self.cpuSeconds(of: daemon.processIdentifier) - before) / Date().timeIntervalSince(started)
        var latencies: [Double] = []
        for _ in 0..<submits {
            let id = try Self.inspectionID(try run(Self.start))
            _ = try run(["set", id] + Self.answers)
            _ = try run(["submit", id])
            let submitted = Date()
            try Self.waitFor("inspection \(id) on the server", seconds: 60) {
                (try? run(["--json", "show", id]))?.contains("\"server_id\":null") == false
            }
            latencies.append(Date().timeIntervalSince(submitted))
        }
        return Figures(idleCPUShare: share, latencies: latencies)
    }

    static let start = [
        "--json", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center", "--area",
        "Lobby restrooms",
    ]
    static let answers = [
        "Floors=4", "Toilets and urinals=3", "Soap dispensers stocked=pass", "Odor=Acceptable", "Trash emptied=yes",
    ]

    static var jqcPath: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jqc").path
    }

    static func inspectionID(_ json: String) throws -> String {
        guard let id = try JSONValue(parsing: json)["id"]?.stringValue else {
            throw BenchError("jqc start printed no id: \(json)")
        }
        return id
    }

    /// CPU seconds of a running process, all its threads, in nanoseconds'
    /// resolution: the first field of each `/proc/PID/task/TID/schedstat`
    /// (time on a CPU), summed. (`/proc/PID/stat` counts 10 ms ticks, too
    /// coarse for an idle minute.)
    static func cpuSeconds(of pid: Int32) throws -> Double {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        var nanoseconds = 0.0
        for task in tasks {
            let path = "/proc/\(pid)/task/\(task)/schedstat"
            // A thread that ended between the listing and the read has no more time to add.
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            guard let onCPU = text.split(separator: " ").first.flatMap({ Double($0) }) else {
                throw BenchError("\(path) is unreadable: \(text)")
            }
            nanoseconds += onCPU
        }
        return nanoseconds / 1e9
    }

    static func waitFor(_ what: String, seconds: Double, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return }
            usleep(10_000)
        }
        throw BenchError("gave up waiting for \(what) after \(Int(seconds)) s")
    }
}
