import Foundation

/// `jqc` commands end to end, process start included, on the generated
/// ledger: the wall time an inspector or auditor waits.
///
/// Children are spawned with posix_spawn and reaped with waitpid, not with
/// `LedgerTestSupport`'s `ProcessRun` that the sync suite uses: Foundation's
/// `Process` behind it, once used, reaps children in the background, which
/// added ~40 ms to every measured run. No suite before this one (core,
/// domain, then sync) starts a `Process`.
struct CommandBenchmark {
    var ledger: String
    var inspection: UUID

    var jqc: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jqc").path
    }

    /// Average wall seconds of `runs` runs of `jqc arguments`; a run that
    /// exits non-zero fails the benchmark (a failing command skips work).
    /// `beforeEach` runs untimed before every run (a cold-cache eviction).
    /// `stdout` is where its output goes (a file for `jqc log`).
    func time(
        _ arguments: [String], runs: Int, stdout: String = "/dev/null", beforeEach: () -> Void = {}
    ) throws -> Double {
        let argv = [jqc, "--ledger", ledger, "--as", "bench"] + arguments
        var total = 0.0
        for _ in 0..<runs {
            var status: Int32 = 0
            beforeEach()
            total += try Measure.seconds { status = try Self.spawnAndWait(argv, stdout: stdout) }
            guard status == 0 else {
                throw BenchError("jqc \(arguments.joined(separator: " ")) exited with status \(status)")
            }
        }
        return total / Double(runs)
    }

    /// Runs `argv` with stdout to `stdout` and stderr to /dev/null; answers its exit status.
    static func spawnAndWait(_ argv: [String], stdout: String = "/dev/null") throws -> Int32 {
        var usage = rusage()
        return try spawnAndWait(argv, stdout: stdout, usage: &usage)
    }

    /// posix_spawn and wait4 (the child's resource use beside its status).
    static func spawnAndWait(_ argv: [String], stdout: String, usage: inout rusage) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard rc == 0 else { throw BenchError("posix_spawn \(argv[0]) failed: \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        guard wait4(pid, &status, 0, &usage) == pid else { throw BenchError("wait4 failed: \(errno)") }
        return (status >> 8) & 0xFF
    }

    func run() throws {
        // A draft to edit: the generated inspections are all submitted.
        let output = NSTemporaryDirectory() + "jqc-bench-start-\(getpid()).json"
        defer { unlink(output) }
        let status = try Self.spawnAndWait(
            [jqc, "--ledger", ledger, "--as", "bench", "--json", "start", "-t", "11", "-f", "101"], stdout: output)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output)))
        guard status == 0, let draft = (object as? [String: Any])?["id"] as? String else {
            throw BenchError("could not start a draft (jqc start exited with \(status))")
        }

        let baseline = try time(["--version"], runs: 20)
        let set = try time(["set", draft, "Notes", "benchmark note"], runs: 30)
        let show = try time(["show", String(draft.prefix(8))], runs: 20)
        print("== jqc end to end (wall, process start included; warm unless marked cold)")
        print(String(format: "  jqc --version (process start only)  %7.2f ms", baseline * 1000))
        print(String(format: "  jqc set ID FIELD VALUE              %7.2f ms   target < 15 ms", set * 1000))
        print(String(format: "  jqc show ID                         %7.2f ms", show * 1000))
        let audit = try time(["audit", inspection.lowercased], runs: 5)
        print(String(format: "  jqc audit ID (verified, photos)     %7.2f ms   target < 50 ms   warm", audit * 1000))
        let files = [ledger + "/store", ledger + "/photos"]
        let coldAudit = try time(["audit", inspection.lowercased], runs: 3) { PageCache.evict(files) }
        print(
            String(format: "  jqc audit ID (verified, photos)     %7.2f ms                    cold", coldAudit * 1000))
        if try Self.spawnAndWait([jqc, "help", "checkpoint"]) == 0 {
            // A checkpoint handed out now (publishing the key on first use),
            // then the proof-based checks beside the full walk.
            let checkpoint = NSTemporaryDirectory() + "jqc-bench-checkpoint-\(getpid())"
            defer { unlink(checkpoint) }
            guard try Self.spawnAndWait([jqc, "--ledger", ledger, "checkpoint"], stdout: checkpoint) == 0 else {
                throw BenchError("jqc checkpoint failed")
            }
            _ = try time(["set", draft, "Notes", "after the checkpoint"], runs: 1)
            let make = try time(["checkpoint"], runs: 10)
            let extends = try time(["verify", "--checkpoint", checkpoint], runs: 20)
            let prove = try time(["prove", inspection.lowercased], runs: 5)
            let full = try time(["verify", "--full"], runs: 1)
            let anchored = try time(["audit", inspection.lowercased, "--checkpoint", checkpoint], runs: 5)
            let walked = try time(["audit", inspection.lowercased, "--full"], runs: 1)
            print(String(format: "  jqc checkpoint                      %7.2f ms", make * 1000))
            print(String(format: "  jqc verify --checkpoint FILE        %7.2f ms   target < 20 ms", extends * 1000))
            print(String(format: "  jqc prove ID                        %7.2f ms", prove * 1000))
            print(String(format: "  jqc verify --full (the whole walk)  %7.2f ms", full * 1000))
            print(String(format: "  jqc audit ID --checkpoint FILE      %7.2f ms   target < 50 ms", anchored * 1000))
            print(String(format: "  jqc audit ID --full (the walk)      %7.2f ms", walked * 1000))
        }
        try logRows()
    }

    /// `jqc log` over the whole generated ledger into a file, in lines/s,
    /// beside `cat` of that same output (the same byte volume through a
    /// process into a file: the floor of any listing), warm and cold.
    func logRows() throws {
        let output = NSTemporaryDirectory() + "jqc-bench-log-\(getpid()).txt"
        defer { unlink(output) }
        let store = [ledger + "/store"]
        let rows: [(label: String, arguments: [String])] = [
            ("jqc log", ["log"]), ("jqc --json log", ["--json", "log"]),
            ("jqc log --type sync", ["log", "--type", "sync"]),
            ("jqc --json log --type sync", ["--json", "log", "--type", "sync"]),
        ]
        print("  jqc log, whole ledger into a file   lines/s  events/s      s   MiB   cat of the output   target")
        var events = 0
        for row in rows {
            for cold in [false, true] {
                let seconds = try time(row.arguments, runs: 1, stdout: output) {
                    if cold { PageCache.evict(store) }
                }
                let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
                let lines = bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                // The unfiltered listing (first) has a line per event: every row reads them all.
                if events == 0 { events = lines }
                let cat = try Measure.seconds {
                    guard try Self.spawnAndWait(["/bin/cat", output]) == 0 else {
                        throw BenchError("cat \(output) failed")
                    }
                }
                let label = row.label.padding(toLength: 34, withPad: " ", startingAt: 0)
                let target = row.arguments.contains("--type") ? "(filtered)      " : ">= 500k lines/s "
                print(
                    "  " + label
                        + String(
                            format: " %7.0fk %8.0fk %6.2f %5.0f   %6.3f s %5.0f MiB/s   ",
                            Double(lines) / seconds / 1000, Double(events) / seconds / 1000, seconds,
                            Double(bytes.count) / 1_048_576, cat, Double(bytes.count) / 1_048_576 / cat)
                        + target + (cold ? "  cold" : "  warm"))
            }
        }
    }
}
