import ArgumentParsing
import CurlTransport
import Dispatch
import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import SyncWorker

/// `jqc sync [--watch [--interval S]] [--concurrency N] [--progress MODE]`.
struct SyncCommand: RunnableCommand {
    static let path = ["sync"]
    static let interval = OptionSpec(
        "interval", valueName: "SECONDS", help: "With --watch, the longest wait between runs.", defaultDescription: "30"
    )
    static let progress = OptionSpec(
        "progress", valueName: "MODE",
        help: "auto: a line of counts and the current item on a terminal, nothing when piped; none; "
            + "json: one event per line on standard error, for scripts.",
        defaultDescription: "auto")
    static let concurrency = OptionSpec(
        "concurrency", valueName: "N", help: "Requests in flight at once, over as many kept-alive connections (1-16).",
        defaultDescription: "\(SyncCommand.defaultConcurrency)")
    static let watch = FlagSpec(
        "watch", help: "Keep syncing whenever the server is reachable, until Ctrl-C or SIGTERM.")
    static let daemon = FlagSpec(
        "daemon",
        help: "Run as the background service: sync after each change of the ledger, when the network returns and "
            + "every --interval (default 60 s); back off offline; wait through a refused session until 'jqc login'; "
            + "one line per outcome on stderr.")
    static let spec = CommandSpec(
        "sync", abstract: "Send the outbox to the server (photos, inspections, issues), then refresh reference data.",
        discussion: """
            An inspection is sent once its photos are uploaded; an issue once its inspection is on the server. \
            Network failures, timeouts, 5xx, 408 and 429 are retried with backoff (2 s doubling to 5 min, ±20%) \
            for as long as they last: after 5 failures in a row an item shows as stalled, with its last error \
            and next try, and is still retried. Only a refusal (another 4xx, with the server's message) or a \
            local fault (a photo file gone or altered) fails an item for good; a photo that failed for good is \
            left out and its inspection says "synced without photo X". Failed items stay in 'jqc outbox' until \
            'jqc sync retry ID'. Every write carries an idempotency key from the event that caused it, and an \
            inspection whose earlier answer was lost is looked up on the server before it is sent again. Up to \
            --concurrency requests are in flight at once. Inspectors can keep recording while a sync runs; \
            only one sync runs at a time. While a background sync runs ('jqc sync --daemon', 'jqc service \
            install'), 'jqc sync' asks it to sync now (cutting its back-off), waits for that pass and prints \
            its outcome, with the exit status it would have had itself; 'jqc status' shows what it is doing.

            Exit status 1 when something failed for good or the session needs a new login.
            """,
        group: "Syncing",
        options: [interval, progress, concurrency], flags: [watch, daemon])

    var watch: Bool
    var daemon: Bool
    var interval: Int
    var concurrency: Int
    var progress: SyncProgressMode
    /// Enough to hide a cellular link's latency, few enough not to load a server.
    static let defaultConcurrency = 8

    init(_ parsed: ParsedCommand) throws(UsageError) {
        watch = try parsed.isSet(Self.watch)
        daemon = try parsed.isSet(Self.daemon)
        interval = try parsed.integer(of: Self.interval, default: daemon ? 60 : 30)
        if watch, daemon {
            throw UsageError.unexpectedArgument(
                "\(Self.daemon.spelling) with \(Self.watch.spelling)", context: parsed.context)
        }
        concurrency = try parsed.integer(of: Self.concurrency, default: Self.defaultConcurrency)
        let mode = try parsed.value(of: Self.progress) ?? "auto"
        guard let progress = SyncProgressMode(rawValue: mode) else {
            throw parsed.invalid(
                Self.progress, value: mode,
                reason: "expected " + SyncProgressMode.allCases.map(\.rawValue).joined(separator: ", "))
        }
        self.progress = progress
        guard (1...16).contains(concurrency) else {
            throw parsed.invalid(Self.concurrency, value: "\(concurrency)", reason: "expected 1 to 16")
        }
        if !(1...86_400).contains(interval) {
            throw parsed.invalid(Self.interval, value: "\(interval)", reason: "expected 1 to 86400 seconds (a day)")
        }
        if try parsed.value(of: Self.interval) != nil, !watch, !daemon {
            throw parsed.unexpected(Self.interval, "without \(Self.watch.spelling)")
        }
    }

    func run(_ invocation: Invocation) throws {
        if daemon {
            try runInBackground(invocation)
            return
        }
        let ledger = try invocation.ledger()
        let transport = try invocation.httpClient(connections: concurrency)
        // Checked before taking the lock, so a missing login is said plainly.
        _ = try invocation.serverSession(transport: transport)
        let lock: SyncLock
        do { lock = try SyncLock(path: invocation.home.syncLockPath) } catch .held(let path) {
            // A background sync holds it: it is asked for this pass instead.
            if !watch, try Self.askDaemon(invocation) { return }
            throw SyncLock.Failure.held(path)
        }
        defer { lock.release() }
        let signals = StopSignals.watching()
        let service = SyncService(
            ledger: ledger,
            Self.surroundings(
                invocation, signals: signals, concurrency: concurrency,
                serverSession: { try invocation.serverSession(transport: transport) }))
        // In --watch, an offline stretch is reported once, not every interval.
        var offline = SyncSummary.OfflineStretch()
        // The service's refusals (SyncService.Refusal) end the command as they are: exit status 1, their words.
        let anythingFailed = try service.runInForeground(
            watching: watch, interval: interval,
            progress: {
                let output = SyncProgressOutput(mode: progress, invocation: invocation)
                return { step in output.show(step) }
            },
            show: { pass in
                invocation.endProgress()
                if let warning = pass.restoreWarning { invocation.stderr.line("jqc: warning: " + warning) }
                let quiet = offline.repeats(pass.report, watching: watch)
                if !quiet { Self.summarize(pass, watching: watch, invocation) }
                try Self.sayWitness(of: pass, quiet: quiet, invocation)
            })
        if watch, signals.stopRequested { invocation.stderr.line("jqc: sync stopped.") }
        if anythingFailed { throw JQCError.itemsFailedForGood }
    }

    /// `--daemon`: the background sync (`SyncService.runInBackground`),
    /// holding the ledger's sync lock for its whole life (a second one is
    /// refused at once); each line it says goes to stderr (the journal)
    /// with its time.
    func runInBackground(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let lock = try SyncLock(path: invocation.home.syncLockPath)
        defer { lock.release() }
        let concurrency = concurrency
        let service = SyncService(
            ledger: ledger,
            Self.surroundings(
                invocation, signals: StopSignals.watching(), concurrency: concurrency,
                serverSession: {
                    try invocation.serverSession(transport: try invocation.httpClient(connections: concurrency))
                }))
        try service.runInBackground(
            interval: interval,
            say: { line in
                invocation.stderr.line("\(invocation.clock.now().iso8601.prefix(19))Z jqc sync: \(line)")
            },
            answer: { pass in Self.answer(pass, invocation) })
    }

    /// What the sync service runs against: this invocation's ledger, clock,
    /// environment, session and signals.
    static func surroundings(
        _ invocation: Invocation, signals: StopSignals, concurrency: Int,
        serverSession: @escaping () throws -> ServerSession
    ) -> SyncService.Surroundings {
        SyncService.Surroundings(
            home: invocation.home, clock: invocation.clock, environment: invocation.environment,
            concurrency: concurrency, config: { try invocation.config() }, storedSession: { try invocation.session() },
            serverSession: serverSession, deviceKey: { try DeviceKeyFile.ensure(invocation) },
            stopRequested: { signals.stopRequested }, wait: { signals.wait(seconds: $0) },
            wakeUp: { signals.wakeUp() })
    }

    /// With a background sync running (`SyncDaemonStatus`), asks it for a
    /// pass now (`SyncNowRequest`) and prints that pass's outcome as its own,
    /// failing as the pass failed. Answers false when no daemon runs (the
    /// lock is someone else's: a `jqc sync` or `--watch`).
    static func askDaemon(_ invocation: Invocation) throws -> Bool {
        guard case .running(let daemon)? = SyncDaemonStatus.read(invocation.home) else { return false }
        invocation.stderr.line(
            "jqc: the background sync (pid \(daemon.pid), \(daemon.unit.map { "unit " + $0 } ?? "started by hand")) "
                + "runs this sync; waiting for its pass")
        guard let pass = try SyncNowRequest.ask(invocation.home) else { return false }
        if invocation.json {
            if let document = pass.document { invocation.printJSON(document) }
        } else {
            for line in pass.lines { invocation.stdout.line(line) }
        }
        for warning in pass.warnings { invocation.stderr.line("jqc: \(warning)") }
        if let failure = pass.failure { throw JQCError.backgroundPass(failed: failure) }
        return true
    }

    /// What `jqc sync` would print of a pass and end with
    /// (`SyncService.Answer`), for the background sync to hand to a `jqc
    /// sync` that asked it for the pass.
    static func answer(_ pass: SyncService.Pass, _ invocation: Invocation) -> SyncService.Answer {
        SyncService.Answer(
            pass,
            summary: SyncSummary(
                pass.report, seconds: pass.seconds, watching: false, now: invocation.clock.now(),
                unreachable: { why in ConnectionErrorLine.syncStop(why) }),
            document: document(pass))
    }

    /// The witness step's outcome (`SyncService.Pass.witnessLines`): its
    /// lines, then an alarm loudly (on stderr, exit status 1).
    static func sayWitness(of pass: SyncService.Pass, quiet: Bool, _ invocation: Invocation) throws {
        if !quiet, !invocation.json { for line in pass.witnessLines { invocation.stdout.line(line) } }
        if let witness = pass.witness, witness.isAlarm {
            throw JQCError.verificationFailed(TerminalText.singleLine(witness.description))
        }
    }

    // MARK: Output

    /// `jqc --json sync`'s object for a pass: the report's members and the
    /// witness step's outcome (`witness`, null when no witness was asked).
    static func document(_ pass: SyncService.Pass) -> JSONValue {
        let report = pass.report.jsonValue(elapsedSeconds: pass.seconds)
        guard case .object(let members) = report else { return report }
        return .object(members + [.init("witness", pass.witness?.jsonValue ?? .null)])
    }

    static func summarize(_ pass: SyncService.Pass, watching: Bool, _ invocation: Invocation) {
        if invocation.json {
            invocation.printJSON(document(pass))
            return
        }
        let (report, seconds) = (pass.report, pass.seconds)
        let summary = SyncSummary(
            report, seconds: seconds, watching: watching, now: invocation.clock.now(),
            unreachable: { why in invocation.verbose ? TerminalText.safe(why) : ConnectionErrorLine.syncStop(why) })
        for line in summary.lines { invocation.stdout.line(line) }
        for warning in summary.warnings { invocation.stderr.line("jqc: \(warning)") }
    }
}
