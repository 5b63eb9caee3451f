// Tools/bench runs this in a release build: each benchmark does the same work
// with the ledger and with its comparisons in one run, and prints the ratios.
import Foundation

let usage = """
    usage: ledger-bench [core] [domain] [sync] [daemon] [profile] [team [--old OLD_BIN_DIR]] [--events N] [--single N] [--inspections N] [--dir PATH]
           ledger-bench compare OLD_BIN_DIR NEW_BIN_DIR [--ledger D] [--rounds N] [--only NAME,…] [--cold] [--inspection ID]
               [--release RELEASE_BIN_DIR]

      core       the event log: batched and single appends, scan, verify,
                 against plain LMDB (the limit) and SQLite (the baseline)
      domain     a generated ledger of inspections × 100 events: full rebuild,
                 reading one inspection, recording one action, and the jqc
                 commands end to end (process start included)
      profile    where a rebuild's and a point read's time goes, stage by
                 stage, over the ledger an earlier 'domain --dir D' run kept
                 (give the same --dir D)
      sync       jqc sync of N completed inspections (default 1000) against
                 the development server, and a plain keep-alive client
      daemon     jqc sync --daemon idle (CPU over --idle-seconds, default 60)
                 and from submit to server, woken by inotify and netlink
                 against looking once a second (JQC_SYNC_WATCH=poll); then
                 'jqc sync' asking a daemon backing off after an outage
                 against 'jqc sync' with no daemon (--rounds N, default 5)
      team       audit and show of an inspection three devices shared over 30
                 exchanges, made by this build's jqc; --old OLD_BIN_DIR runs
                 OLD_BIN_DIR/jqc beside it (ABBA, --rounds N, default 6)
      --events   events in the batched run (default 200000)
      --single   single durable commits (default 2000)
      --inspections  inspections in the domain run (default 10000)
      --latency-ms   sync: the server's latency per request; then jqc sync one
                 at a time, concurrent, and a baseline with the same concurrency
                 (default 0: the local comparison; 200 is a cellular link)
      --concurrency  sync with latency: requests in flight (default 8)
      --dir      where to put the data (default: a fresh temporary directory)
      compare    two builds' jqc (OLD_BIN_DIR/jqc, NEW_BIN_DIR/jqc) on the same
                 ledger D (e.g. D/domain/ledger kept by 'domain --dir D'),
                 alternating old/new (ABBA) for --rounds N rounds (default 6):
                 medians of wall and CPU time, new÷old, fastest runs, spread;
                 --only picks commands (version, show, audit, inspections,
                 log, log-json (--json log), verify-full, rebuild, checkpoint, prove (the inspection of
                 show), set: one answer to the first draft,
                 an event appended per run; receive, without
                 --ledger: two handover files, about 6.5 MB and 89 MB, each
                 received into a fresh copy of one receiver ledger; show-long,
                 likewise: jqc show of a 5,000- and a 20,000-record stream);
                 --cold evicts the store before each run;
                 --release adds the previous release's jqc to every round and
                 prints a table of new÷release after the old/new one
    """

var suites: [String] = []
var events = 200_000
var single = 2_000
var dir: String?
var inspections = 10_000
var latency = 0
var concurrency = 8
var idleSeconds = 60.0
var compareBuilds: [String] = []
var compareLedger: String?
var rounds = 6
var only: Set<String> = []
var cold = false
var compareInspection: String?
var compareRelease: String?
var teamOld: String?
var args = CommandLine.arguments.dropFirst().makeIterator()
while let arg = args.next() {
    switch arg {
    case "--events": events = args.next().flatMap(Int.init) ?? events
    case "--single": single = args.next().flatMap(Int.init) ?? single
    case "--dir": dir = args.next()
    case "-h", "--help":
        print(usage)
        exit(0)
    case "--inspections": inspections = args.next().flatMap(Int.init) ?? inspections
    case "--latency-ms": latency = args.next().flatMap(Int.init) ?? latency
    case "--concurrency": concurrency = args.next().flatMap(Int.init) ?? concurrency
    case "--idle-seconds": idleSeconds = args.next().flatMap(Double.init) ?? idleSeconds
    case "core", "domain", "sync", "daemon", "profile", "team": suites.append(arg)
    case "--old": teamOld = args.next()
    case "compare":
        suites.append(arg)
        compareBuilds = [args.next(), args.next()].compactMap { $0 }
    case "--ledger": compareLedger = args.next()
    case "--rounds": rounds = args.next().flatMap(Int.init) ?? rounds
    case "--only": only = Set((args.next() ?? "").split(separator: ",").map(String.init))
    case "--cold": cold = true
    case "--inspection": compareInspection = args.next()
    case "--release": compareRelease = args.next()
    default:
        FileHandle.standardError.write(Data("ledger-bench: unknown argument '\(arg)'\n\(usage)\n".utf8))
        exit(2)
    }
}
if suites.isEmpty { suites = ["core", "domain"] }

if suites == ["compare"], !only.isDisjoint(with: ["receive", "show-long"]) {
    // These make ledgers of their own (receptions write; a long stream is
    // generated), so they run without D.
    guard compareBuilds.count == 2, rounds >= 1, only.isSubset(of: ["receive", "show-long"]) else {
        FileHandle.standardError.write(
            Data(
                "ledger-bench: compare --only receive,show-long needs OLD_BIN_DIR NEW_BIN_DIR, and no other command\n"
                    .utf8))
        exit(2)
    }
    print("ledger-bench on \(MachineFacts.summary())")
    do {
        let compare = CompareBenchmark(
            old: compareBuilds[0], new: compareBuilds[1], ledger: "", rounds: rounds, only: only, cold: false)
        let directory = dir ?? (NSTemporaryDirectory() + "ledger-bench-own-\(getpid())")
        if only.contains("receive") { try ReceiveCompare(compare: compare, directory: directory + "/receive").run() }
        if only.contains("show-long") {
            try LongStreamShow(compare: compare, directory: directory + "/show-long").run()
        }
    } catch {
        FileHandle.standardError.write(Data("ledger-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
if suites == ["compare"] {
    // Two builds on a ledger an earlier run kept; writes nothing to it.
    guard compareBuilds.count == 2, let ledger = compareLedger, rounds >= 1 else {
        FileHandle.standardError.write(
            Data("ledger-bench: compare needs OLD_BIN_DIR NEW_BIN_DIR --ledger D\n\(usage)\n".utf8))
        exit(2)
    }
    print("ledger-bench on \(MachineFacts.summary())")
    do {
        let compare = CompareBenchmark(
            old: compareBuilds[0], new: compareBuilds[1], ledger: ledger, rounds: rounds, only: only, cold: cold,
            release: compareRelease)
        try compare.run(inspection: try compareInspection ?? compare.someInspection())
    } catch {
        FileHandle.standardError.write(Data("ledger-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
let base = dir ?? (NSTemporaryDirectory() + "ledger-bench-\(UUID().uuidString.prefix(8))")
if suites == ["profile"] {
    // Reads what an earlier run kept; removes nothing.
    guard let dir else {
        FileHandle.standardError.write(Data("ledger-bench: profile needs --dir D (of a 'domain --dir D' run)\n".utf8))
        exit(2)
    }
    print("ledger-bench on \(MachineFacts.summary())")
    do {
        try FoldProfile(ledgerPath: dir + "/domain/ledger").run()
    } catch {
        FileHandle.standardError.write(Data("ledger-bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
try? FileManager.default.removeItem(atPath: base)
try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
defer { if dir == nil { try? FileManager.default.removeItem(atPath: base) } }

print("ledger-bench on \(MachineFacts.summary())")
print("  release build; warm = the files were just written or read; cold = evicted from the page cache first")
do {
    if suites.contains("core") {
        print("== core: \(events) events batched, \(single) single commits (rates in events/s)")
        try FileManager.default.createDirectory(atPath: base + "/core", withIntermediateDirectories: true)
        let (rows, notes) = try CoreBenchmark(events: events, singleCommits: single, directory: base + "/core").run()
        print(Row.header())
        for row in rows { print(row.line()) }
        for note in notes { print("  " + note) }
    }
    if suites.contains("domain") {
        print("== domain: \(inspections) inspections × 100 events, against SQLite (same decode and fold)")
        let domain = DomainBenchmark(inspections: inspections, eventsPerInspection: 100, directory: base + "/domain")
        let rows = try domain.run()
        print(Row.header())
        for row in rows { print(row.line()) }
        if suites.contains("profile") { try FoldProfile(ledgerPath: domain.ledgerPath).run() }
        try CommandBenchmark(ledger: domain.ledgerPath, inspection: DomainBenchmark.sample!).run()
    }
    if suites.contains("sync") {
        let count = CommandLine.arguments.contains("--inspections") ? inspections : latency > 0 ? 60 : 1_000
        print("== sync: \(count) inspections (40 fields, two 200 KB photos, one issue each), worker vs plain client")
        try SyncBenchmark(
            inspections: count, directory: base + "/sync", latencyMilliseconds: latency, concurrency: concurrency
        ).run()
    }
    if suites.contains("team") {
        try TeamBenchmark(directory: base + "/team", old: teamOld, rounds: rounds).run()
    }
    if suites.contains("daemon") {
        print(
            "== daemon: jqc sync --daemon idle and from submit to server, woken by events against polling; "
                + "sync now during a back-off")
        try DaemonBenchmark(
            directory: base + "/daemon", idleSeconds: idleSeconds,
            rounds: CommandLine.arguments.contains("--rounds") ? rounds : 5
        ).run()
    }
} catch {
    FileHandle.standardError.write(Data("ledger-bench: \(error)\n".utf8))
    exit(1)
}
