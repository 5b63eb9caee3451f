import Dispatch
import FoundationEssentials
import Glibc
import InspectionDomain
import InspectionStore
import LedgerCore
import SyncWorker
import Synchronization

/// The background sync (`jqc sync --daemon`, the systemd user unit of
/// `jqc service install`): it runs a pass whenever something may be sent,
/// and between passes sleeps until inotify or netlink wakes it
/// (`LedgerWakeups`; once a second where neither can be had, or with
/// `JQC_SYNC_WATCH=poll`) and looks (`LedgerWatch`) for a commit (a submit
/// is sent within seconds), a new login, a changed config or a change of
/// the network's routes and addresses, besides the earliest retry and a
/// slow poll. The watch is armed before the first pass, and a record
/// appended by anyone else while a pass runs (`BackgroundSync.othersRecorded`)
/// brings another pass at once, so nothing waits for the periodic pass.
/// Offline it backs off (5 s doubling to 5 min, woken early by a network
/// change). A refused session never ends it: it says so once, `jqc status`
/// and `whoami` say "log in again", and it resumes by itself after
/// `jqc login`. It says what it is doing in `sync-daemon.json`
/// (`SyncDaemonStatus`, what `jqc status` shows), and a `jqc sync` asks it
/// for a pass now with SIGUSR1 (`SyncNowRequest`): the back-off is cut and
/// the pass's outcome is written there for the asker.
extension SyncService {
    /// What `jqc sync` would print of a pass and end with: what the
    /// background sync hands to a `jqc sync` that asked it for the pass.
    public struct Answer {
        public var lines: [String]
        public var warnings: [String]
        public var failure: String?
        public var document: JSONValue

        public init(lines: [String], warnings: [String], failure: String?, document: JSONValue) {
            self.lines = lines
            self.warnings = warnings
            self.failure = failure
            self.document = document
        }
    }

    /// The background sync's state between passes.
    final class Life {
        var schedule: BackgroundSync
        var watch: LedgerWatch
        var status: SyncDaemonStatus
        /// The state before the pass under way, and since when: a state a pass leaves as it was keeps its time.
        var settled: (state: SyncDaemonStatus.State, since: Timestamp)
        init(_ home: LedgerDirectory, interval: Int, offlineStretch: Double, now: Timestamp) {
            schedule = BackgroundSync(interval: interval, offlineStretch: offlineStretch)
            watch = LedgerWatch(home)
            status = .thisProcess(at: now)
            settled = (status.state, now)
        }
    }

    /// Runs until SIGINT or SIGTERM; each outcome is one line handed to
    /// `say` (the journal), nothing when idle; `answer` words a pass as
    /// `jqc sync` would, for a `jqc sync` that asked for it.
    public func runInBackground(interval: Int, say: (String) -> Void, answer: (Pass) -> Answer) throws {
        let home = surroundings.home
        let asking = SyncNowSignal(waking: surroundings.wakeUp)
        // Armed before the first pass: whatever is recorded from here on is seen.
        let stretch = BackgroundSync.offlineStretch(try RetryPolicy.standard(surroundings.environment))
        let life = Life(home, interval: interval, offlineStretch: stretch, now: surroundings.clock.now())
        let wakeups = LedgerWakeups(
            home, polling: surroundings.environment["JQC_SYNC_WATCH"] == "poll", onEvent: surroundings.wakeUp)
        try life.status.write(to: home)
        say(
            "started on \(home.path); syncs after each change, when the network returns, and every \(interval) s"
                + " (\(wakeups.means))")
        while !surroundings.stopRequested() {
            let asked = asking.take()
            if asked { life.schedule.cutBackOff() }
            let next: BackgroundSync.Next
            switch prepare() {
            case .wait(let why, let until):
                next = life.schedule.cannotRun(why, until: until)
                waiting(why, life: life, asked: asked)
            case .ready(let config, let session):
                next = try backgroundPass(
                    config: config, session: session, asked: asked, life: life, say: say, answer: answer)
            }
            next.lines.forEach(say)
            life.status.updatedAt = surroundings.clock.now()
            try life.status.write(to: home)
            if BackgroundSync.sleep(
                seconds: next.seconds, wakingOn: next.wakeOn, watch: &life.watch,
                slice: wakeups.isEventDriven ? .infinity : 1, asked: { asking.isRaised },
                stopped: surroundings.wait)
            {
                break
            }
        }
        life.status.updatedAt = surroundings.clock.now()
        try life.status.write(to: home)
        say("stopped")
    }

    /// One pass of the background sync: the pass itself, what it says and
    /// what the status file says after it; another pass at once when
    /// someone else recorded while it ran.
    func backgroundPass(
        config: LedgerConfig, session: ServerSession, asked: Bool, life: Life, say: (String) -> Void,
        answer: (Pass) -> Answer
    ) throws -> BackgroundSync.Next {
        let (lines, pulls) = life.schedule.starting(at: ContinuousClock.now)
        lines.forEach(say)
        let began = surroundings.clock.now()
        life.status.passesStarted += 1
        life.settled = (life.status.state, life.status.since)
        life.status.since = began
        life.status.state = .sending
        life.status.updatedAt = began
        try life.status.write(to: surroundings.home)
        let head = try ledger.log.read { try $0.head().position }
        // A restore over newer history (`Refusal`) ends the background sync, as it refuses every sync.
        let pass = try self.pass(config: config, session: session, pullsReferenceData: pulls || asked)
        if let warning = pass.restoreWarning { say("warning: " + warning) }
        var next = life.schedule.ran(
            pass.report, pulledReferenceData: pulls || asked, seconds: pass.seconds, finished: ContinuousClock.now,
            now: surroundings.clock.now(), witness: pass.witness)
        // The run's own outcomes are no reason to run again; anyone else's record is.
        _ = life.watch.look()
        if pass.report.stop == nil, try BackgroundSync.othersRecorded(in: ledger, after: head) {
            next.seconds = min(next.seconds, 0.3)
        }
        settle(pass, answer: answer(pass), began: began, next: next, life: life)
        return next
    }

    /// The status file after a pass: the state it leaves, and its outcome as `jqc sync` would say it.
    func settle(_ pass: Pass, answer: Answer, began: Timestamp, next: BackgroundSync.Next, life: Life) {
        let now = surroundings.clock.now()
        let report = pass.report
        var status = life.status
        status.until = Timestamp(
            microsecondsSinceEpoch: now.microsecondsSinceEpoch + Int64((next.seconds * 1_000_000).rounded()))
        status.lastError = nil
        status.detail = nil
        switch report.stop {
        case .serverUnreachable(let why):
            status.state = .offline
            status.lastError = TerminalText.singleLine(why)
        case .loginRequired(let why):
            status.state = .waitingForLogin
            status.detail = BackgroundSync.refusedLine(report.sessionRefusedBecause ?? why)
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
            outcome: Self.outcome(report, seconds: pass.seconds), exitStatus: answer.failure == nil ? 0 : 1,
            lines: answer.lines, warnings: answer.warnings, failure: answer.failure, document: answer.document)
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
        let now = surroundings.clock.now()
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

    enum Readiness {
        case ready(LedgerConfig, ServerSession)
        /// Nothing can be sent until `until` changes; `why` says what to do.
        case wait(String, until: LedgerWatch.Changes)
    }

    /// Whether a pass can start: a server, a login the server has not refused.
    func prepare() -> Readiness {
        let config: LedgerConfig
        do { config = try surroundings.config() } catch {
            return .wait("the ledger's config cannot be read: \(error)", until: [.config])
        }
        guard config.serverURL?.isEmpty == false else {
            return .wait("waiting: no server is configured; set one with 'jqc config set server URL'", until: [.config])
        }
        let saved: StoredSession?
        do { saved = try surroundings.storedSession() } catch {
            return .wait("waiting: \(error)", until: [.session])
        }
        guard let saved else {
            return .wait("waiting: nobody is logged in; run 'jqc login' and the queued work is sent", until: [.session])
        }
        if let refusal = SessionRefusal.of(saved, in: surroundings.home) {
            return .wait(BackgroundSync.refusedLine(refusal.message), until: [.session, .config])
        }
        do {
            return .ready(config, try surroundings.serverSession())
        } catch {
            return .wait("waiting: \(error)", until: [.session, .config])
        }
    }
}

/// SIGUSR1, a `jqc sync` asking the background sync for a pass now
/// (`SyncNowRequest`): raised until the service takes it, and waking its
/// sleep.
final class SyncNowSignal: Sendable {
    private let raised = Mutex(false)
    private let source: Mutex<(any DispatchSourceSignal)?>

    init(waking wakeUp: @escaping @Sendable () -> Void) {
        // The default action would end the process; a dispatch source sees the signal once it is ignored.
        signal(SyncNowRequest.signal, SIG_IGN)
        let made = DispatchSource.makeSignalSource(signal: SyncNowRequest.signal, queue: .global())
        source = Mutex(made)
        source.withLock { source in
            source?.setEventHandler { [weak self] in
                self?.raised.withLock { $0 = true }
                wakeUp()
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
