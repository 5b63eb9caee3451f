import Dispatch
import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker
import Synchronization

/// `jqc sync --daemon`: the background sync the systemd user unit runs
/// (`jqc service install`). It holds the ledger's sync lock for its whole
/// life (a second one is refused at once), runs a `SyncRun` whenever
/// something may be sent, and between runs sleeps until inotify or netlink
/// wakes it (`LedgerWakeups`; once a second where neither can be had, or
/// with `JQC_SYNC_WATCH=poll`) and looks (`LedgerWatch`) for a commit (a submit is sent within seconds), a new
/// login, a changed config or a change of the network's routes and
/// addresses, besides the earliest retry and a slow poll. The watch is armed
/// before the first pass, and a record appended by anyone else while a pass
/// runs (`BackgroundSync.othersRecorded`) brings another pass at once, so
/// nothing waits for the periodic pass. Offline it backs off (5 s doubling
/// to 5 min, woken early by a network change). A refused session never ends
/// it: it says so once, `jqc status` and `whoami` say "log in again", and it
/// resumes by itself after `jqc login`. It says what it is doing in
/// `sync-daemon.json` (`SyncDaemonStatus`, what `jqc status` shows), and a
/// `jqc sync` asks it for a pass now with SIGUSR1 (`SyncNowRequest`): the
/// back-off is cut and the pass's outcome is written there for the asker.
/// Each outcome is one line on stderr (the journal) with its time; nothing
/// when idle.
struct SyncDaemon {
    let invocation: Invocation
    let concurrency: Int
    let interval: Int

    /// The daemon's state between passes.
    final class Life {
        var schedule: BackgroundSync
        var watch: LedgerWatch
        var status: SyncDaemonStatus
        var restoreCheckSaid = false
        /// The state before the pass under way, and since when: a state a pass leaves as it was keeps its time.
        var settled: (state: SyncDaemonStatus.State, since: Timestamp)
        init(_ home: LedgerDirectory, interval: Int, now: Timestamp) {
            schedule = BackgroundSync(interval: interval)
            watch = LedgerWatch(home)
            status = .thisProcess(at: now)
            settled = (status.state, now)
        }
    }

    func run() throws {
        let home = invocation.home
        let ledger = try invocation.ledger()
        let lock = try SyncLock(path: home.syncLockPath)
        defer { lock.release() }
        let signals = StopSignals.watching()
        let asking = SyncNowSignal(waking: signals)
        // Armed before the first pass: whatever is recorded from here on is seen.
        let life = Life(home, interval: interval, now: invocation.clock.now())
        let wakeups = LedgerWakeups(home, polling: invocation.environment["JQC_SYNC_WATCH"] == "poll") {
            signals.wakeUp()
        }
        try life.status.write(to: home)
        say(
            "started on \(home.path); syncs after each change, when the network returns, and every \(interval) s"
                + " (\(wakeups.means))")
        while !signals.stopRequested {
            let asked = asking.take()
            if asked { life.schedule.cutBackOff() }
            let next: BackgroundSync.Next
            switch prepare() {
            case .wait(let why, let until):
                next = life.schedule.cannotRun(why, until: until)
                waiting(why, life: life, asked: asked)
            case .ready(let config, let session):
                next = try pass(
                    ledger: ledger, config: config, session: session, asked: asked, life: life, signals: signals)
            }
            next.lines.forEach(say)
            life.status.updatedAt = invocation.clock.now()
            try life.status.write(to: home)
            if BackgroundSync.sleep(
                seconds: next.seconds, wakingOn: next.wakeOn, watch: &life.watch,
                slice: wakeups.isEventDriven ? .infinity : 1, asked: { asking.isRaised },
                stopped: { signals.wait(seconds: $0) })
            {
                break
            }
        }
        life.status.updatedAt = invocation.clock.now()
        try life.status.write(to: home)
        say("stopped")
    }

    /// One pass: the restore-point check, the run, what it says and what the
    /// status file says after it; another pass at once when someone else
    /// recorded while it ran.
    func pass(
        ledger: InspectionLedger, config: LedgerConfig, session: ServerSession, asked: Bool, life: Life,
        signals: StopSignals
    ) throws -> BackgroundSync.Next {
        let (lines, pulls) = life.schedule.starting(at: ContinuousClock.now)
        lines.forEach(say)
        try checkRestorePoint(config: config, ledger: ledger, session: session, life: life)
        let began = invocation.clock.now()
        life.status.passesStarted += 1
        life.settled = (life.status.state, life.status.since)
        life.status.since = began
        life.status.state = .sending
        life.status.updatedAt = began
        try life.status.write(to: invocation.home)
        let head = try ledger.log.read { try $0.head().position }
        let witness = try WitnessSetting.witness(
            for: config, directory: invocation.home, key: { try DeviceKeyFile.ensure(invocation) })
        let run = try SyncRun(
            ledger: ledger, session: session, device: config.deviceID, clock: invocation.clock,
            policy: try RetryPolicy.standard(invocation.environment), pullsReferenceData: pulls || asked,
            shouldStop: { signals.stopRequested }, journalPath: invocation.home.syncInflightPath,
            concurrency: concurrency)
        run.witness = witness
        let started = ContinuousClock.now
        let report = try run.run()
        let seconds = BackgroundSync.seconds(ContinuousClock.now - started)
        if case .loginRequired(let why) = report.stop { try SessionRefusal.learned(why, invocation) }
        var next = life.schedule.ran(
            report, pulledReferenceData: pulls || asked, seconds: seconds, finished: ContinuousClock.now,
            now: invocation.clock.now(), witness: witness?.outcome)
        // The run's own outcomes are no reason to run again; anyone else's record is.
        _ = life.watch.look()
        if report.stop == nil, try BackgroundSync.othersRecorded(in: ledger, after: head) {
            next.seconds = min(next.seconds, 0.3)
        }
        settle(report, seconds: seconds, witness: witness?.outcome, began: began, next: next, life: life)
        return next
    }

    /// The status file after a pass: the state it leaves, and its outcome as `jqc sync` would say it.
    func settle(
        _ report: SyncReport, seconds: Double, witness: CheckpointWitness.Outcome?, began: Timestamp,
        next: BackgroundSync.Next, life: Life
    ) {
        let now = invocation.clock.now()
        let answer = SyncCommand.answer(report, seconds: seconds, witness: witness, invocation)
        var status = life.status
        status.until = now.adding(seconds: next.seconds)
        status.lastError = nil
        status.detail = nil
        switch report.stop {
        case .serverUnreachable(let why):
            status.state = .offline
            status.lastError = TerminalText.singleLine(why)
        case .loginRequired(let why):
            status.state = .waitingForLogin
            status.detail = BackgroundSync.refusedLine(why)
            status.until = nil
        case .transportRefused(let why):
            status.state = .waiting
            status.detail = "the server cannot be used: " + TerminalText.singleLine(why)
            status.until = nil
        case .interrupted, nil:
            status.state = report.retrying.isEmpty ? .idle : .backingOff
            status.lastError = report.retrying.first.map { TerminalText.singleLine($0.summary) }
        }
        // Offline (or backing off) since the first pass that found it so.
        status.since = status.state == life.settled.state ? life.settled.since : began
        status.lastPass = SyncDaemonStatus.Pass(
            number: status.passesStarted, startedAt: began, finishedAt: now,
            outcome: Self.outcome(report, seconds: seconds), exitStatus: answer.failure == nil ? 0 : 1,
            lines: answer.lines, warnings: answer.warnings, failure: answer.failure, document: answer.json)
        life.status = status
    }

    /// One line for `jqc status`: what the pass did.
    static func outcome(_ report: SyncReport, seconds: Double) -> String {
        if case .serverUnreachable(let why) = report.stop { return "offline: " + TerminalText.singleLine(why) }
        let lines = BackgroundSync.outcomeLines(report, seconds: seconds)
        return lines.isEmpty ? "nothing to send" : TerminalText.singleLine(lines.joined(separator: "; "))
    }

    /// No pass can run: the status says what it waits for, and a `jqc sync`
    /// that asked is answered with the reason (exit status 1).
    func waiting(_ why: String, life: Life, asked: Bool) {
        let now = invocation.clock.now()
        let state: SyncDaemonStatus.State = why.contains("jqc login") ? .waitingForLogin : .waiting
        if life.status.state != state || life.status.detail != why { life.status.since = now }
        life.status.state = state
        life.status.detail = why
        life.status.until = nil
        life.status.lastError = nil
        guard asked else { return }
        life.status.passesStarted += 1
        life.status.lastPass = SyncDaemonStatus.Pass(
            number: life.status.passesStarted, startedAt: now, finishedAt: now, outcome: why, exitStatus: 1,
            failure: "The background sync cannot sync now: \(why)")
    }

    /// A restored backup asks the witness first (`RestorePointCheck`).
    func checkRestorePoint(config: LedgerConfig, ledger: InspectionLedger, session: ServerSession, life: Life) throws {
        let outcome = try RestorePointCheck.run(
            home: invocation.home, config: config, ledger: ledger, session: session,
            key: { try DeviceKeyFile.ensure(invocation) }, clock: invocation.clock)
        switch outcome {
        case .newerHistory(let message)?: throw JQCError.refused(TerminalText.singleLine(message))
        case .couldNotCheck(let message)? where !life.restoreCheckSaid:
            say("warning: " + TerminalText.singleLine(message))
            life.restoreCheckSaid = true
        default: break
        }
    }

    enum Readiness {
        case ready(LedgerConfig, ServerSession)
        /// Nothing can be sent until `until` changes; `why` says what to do.
        case wait(String, until: LedgerWatch.Changes)
    }

    /// Whether a run can start: a server, a login the server has not refused.
    func prepare() -> Readiness {
        let config: LedgerConfig
        do { config = try invocation.config() } catch {
            return .wait("the ledger's config cannot be read: \(error)", until: [.config])
        }
        guard config.serverURL?.isEmpty == false else {
            return .wait("waiting: no server is configured; set one with 'jqc config set server URL'", until: [.config])
        }
        let saved: StoredSession?
        do { saved = try invocation.session() } catch {
            return .wait("waiting: \(error)", until: [.session])
        }
        guard let saved else {
            return .wait("waiting: nobody is logged in; run 'jqc login' and the queued work is sent", until: [.session])
        }
        if let refusal = SessionRefusal.of(saved, in: invocation.home) {
            return .wait(BackgroundSync.refusedLine(refusal.message), until: [.session, .config])
        }
        do {
            return .ready(
                config, try invocation.serverSession(transport: try invocation.httpClient(connections: concurrency)))
        } catch {
            return .wait("waiting: \(error)", until: [.session, .config])
        }
    }

    func say(_ line: String) {
        invocation.stderr.line("\(invocation.clock.now().iso8601.prefix(19))Z jqc sync: \(line)")
    }
}

/// SIGUSR1, a `jqc sync` asking the daemon for a pass now
/// (`SyncNowRequest`): raised until the daemon takes it, and waking the
/// daemon's sleep.
final class SyncNowSignal: Sendable {
    private let raised = Mutex(false)
    private let source: Mutex<(any DispatchSourceSignal)?>

    init(waking signals: StopSignals) {
        // The default action would end the process; a dispatch source sees the signal once it is ignored.
        signal(SyncNowRequest.signal, SIG_IGN)
        let made = DispatchSource.makeSignalSource(signal: SyncNowRequest.signal, queue: .global())
        source = Mutex(made)
        source.withLock { source in
            source?.setEventHandler { [weak self] in
                self?.raised.withLock { $0 = true }
                signals.wakeUp()
            }
            source?.resume()
        }
    }

    deinit { source.withLock { $0?.cancel() } }

    var isRaised: Bool { raised.withLock { $0 } }

    /// Whether a pass was asked for since the last call.
    func take() -> Bool {
        raised.withLock { raised in
            defer { raised = false }
            return raised
        }
    }
}

extension Timestamp {
    /// This moment `seconds` later (whole microseconds).
    fileprivate func adding(seconds: Double) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: microsecondsSinceEpoch + Int64((seconds * 1_000_000).rounded()))
    }
}
