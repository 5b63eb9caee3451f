import Foundation
import InspectionDomain
import LedgerCore
import LedgerStore
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
///
/// And "sync now" during a back-off (issue #33 item 2, `measureSyncNow`):
/// the time from `jqc sync` starting to its return, the inspection on the
/// server and its id in the ledger, when a daemon backing off after an
/// outage makes the pass for it, against `jqc sync` making the same pass
/// itself on a ledger with no daemon (the baseline), in turn, `rounds`
/// times each.
struct DaemonBenchmark {
    var directory: String
    var idleSeconds: Double = 60
    var submits = 5
    var rounds = 5

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
        let now = try measureSyncNow()
        print("  jqc sync → its return, the inspection on the server (median of \(rounds), fastest):")
        print(
            String(
                format: "    asking a daemon backing off after an outage %8.0f ms %8.0f ms", 1000 * median(now.asked),
                1000 * (now.asked.min() ?? 0)))
        print(
            String(
                format: "    syncing itself, no daemon (baseline)        %8.0f ms %8.0f ms", 1000 * median(now.alone),
                1000 * (now.alone.min() ?? 0)))
        print(
            String(
                format: "  asking ÷ itself %8.2f                        target: sent within 2 s",
                median(now.asked) / median(now.alone)))
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
        let daemon = try Self.startDaemon(ledger: ledger, environment: environment)
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

    /// `jqc sync --daemon` on `ledger`, started with `environment` added to
    /// this process's, its output dropped; the caller ends it.
    static func startDaemon(ledger: String, environment: [String: String]) throws -> Process {
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: jqcPath)
        daemon.arguments = ["--ledger", ledger, "sync", "--daemon"]
        daemon.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        return daemon
    }

    /// `rounds` of "sync now" during a back-off, each beside the baseline:
    /// the daemon's offline waits are stretched (500 s, `JQC_SYNC_BACKOFF_SCALE`),
    /// so no pass but the one asked for can send; the server is stopped, an
    /// inspection submitted, the daemon seen offline after it, the server
    /// started again on its port, and `jqc sync` timed. The baseline is one
    /// submitted inspection synced by `jqc sync` on a ledger of its own.
    func measureSyncNow() throws -> (asked: [Double], alone: [Double]) {
        let database = directory + "/server-now.sqlite"
        var server = try BenchServer(fixtures: nil, database: database)
        defer { server.stop() }
        let asking = try Self.ledger(directory + "/ledger-now", server: server)
        let alone = try Self.ledger(directory + "/ledger-alone", server: server)
        let daemon = try Self.startDaemon(ledger: asking.path, environment: ["JQC_SYNC_BACKOFF_SCALE": "100"])
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        try Self.waitFor("the daemon's first pass", seconds: 30) { asking.status()?["last_pass"]?.isNull == false }
        var asked: [Double] = []
        var itself: [Double] = []
        func syncItself() throws {
            let id = try alone.submitted()
            let started = Date()
            _ = try alone.run(["sync"])
            itself.append(Date().timeIntervalSince(started))
            try alone.requireSent(id)
        }
        func askDaemon() throws {
            server.stop()
            let id = try asking.submitted()
            let submitted = SystemClock().now()
            // Settled: each record of the submit wakes it within 0.3 s, so once it has been offline and
            // written nothing for 2 s after the last one, its pass saw them all (SyncDaemonTests does the same).
            try Self.waitFor("the daemon offline after the submit", seconds: 60) {
                guard let status = asking.status(), status["state"]?.stringValue == "offline",
                    let updated = status["updated_at"]?.stringValue.flatMap(Timestamp.init(iso8601:))
                else { return false }
                let now = SystemClock().now().microsecondsSinceEpoch
                return now - updated.microsecondsSinceEpoch >= 2_000_000
                    && now - submitted.microsecondsSinceEpoch >= 2_000_000
            }
            server = try BenchServer(fixtures: nil, database: database, port: server.port)
            let started = Date()
            let answer = try asking.run(["sync"], withStderr: true)
            asked.append(Date().timeIntervalSince(started))
            guard answer.contains("runs this sync") else {
                throw BenchError("jqc sync did not ask the daemon: \(answer)")
            }
            try asking.requireSent(id)
        }
        // In turn, each first in every other round (ABBA), so a slow spell of the machine weighs on both.
        for round in 0..<rounds {
            if round % 2 == 0 {
                try syncItself()
                try askDaemon()
            } else {
                try askDaemon()
                try syncItself()
            }
        }
        return (asked, itself)
    }

    /// A ledger of this benchmark: `jqc` on it, its status file, its inspections.
    struct BenchLedger {
        var path: String

        func run(_ arguments: [String], withStderr: Bool = false) throws -> String {
            let result = try ProcessRun.run(DaemonBenchmark.jqcPath, ["--ledger", path] + arguments, timeout: 600)
            guard result.status == 0 else {
                throw BenchError("jqc \(arguments.joined(separator: " ")) failed: \(result.stderr)")
            }
            return withStderr ? result.stdout + result.stderr : result.stdout
        }

        /// A completed inspection, submitted; its id.
        func submitted() throws -> String {
            let id = try DaemonBenchmark.inspectionID(try run(DaemonBenchmark.start))
            _ = try run(["set", id] + DaemonBenchmark.answers)
            _ = try run(["submit", id])
            return id
        }

        func requireSent(_ id: String) throws {
            guard try run(["--json", "show", id]).contains("\"server_id\":null") == false else {
                throw BenchError("inspection \(id) is not on the server after jqc sync")
            }
        }

        /// `sync-daemon.json`, nil while there is none.
        func status() -> JSONValue? {
            FileManager.default.contents(atPath: path + "/sync-daemon.json").flatMap {
                try? JSONValue(parsing: [UInt8]($0))
            }
        }
    }

    /// A new ledger on `server`, logged in, its reference data pulled.
    static func ledger(_ path: String, server: BenchServer) throws -> BenchLedger {
        try? FileManager.default.removeItem(atPath: path)
        let ledger = BenchLedger(path: path)
        _ = try ledger.run(["init", "--server", server.baseURL])
        _ = try SyncBenchmark.run(
            jqcPath, ["--ledger", path, "login", "--username", "inspector", "--password-stdin"],
            input: "inspector-pass\n")
        _ = try ledger.run(["pull"])
        return ledger
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
