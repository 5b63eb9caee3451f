import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc sync --daemon`: the background sync the systemd user unit runs
/// (`jqc service install`). It holds the ledger's sync lock for its whole
/// life (a second one is refused at once), runs a `SyncRun` whenever
/// something may be sent, and between runs looks once a second
/// (`LedgerWatch`) for a commit (a submit is sent within seconds), a new
/// login, a changed config or a change of the network's routes and
/// addresses, besides the earliest retry and a slow poll. Offline it backs
/// off (5 s doubling to 5 min, woken early by a network change). A refused
/// session never ends it: it says so once, `jqc status` and `whoami` say
/// "log in again", and it resumes by itself after `jqc login`. Each outcome
/// is one line on stderr (the journal) with its time; nothing when idle.
struct SyncDaemon {
    let invocation: Invocation
    let concurrency: Int
    let interval: Int

    func run() throws {
        let home = invocation.home
        let ledger = try invocation.ledger()
        let policy = try RetryPolicy.standard(invocation.environment)
        let lock = try SyncLock(path: home.syncLockPath)
        defer { lock.release() }
        let signals = StopSignals.watching()
        var watch = LedgerWatch(home)
        var schedule = BackgroundSync(interval: interval)
        var restoreCheckSaid = false
        say("started on \(home.path); syncs after each change, when the network returns, and every \(interval) s")
        while !signals.stopRequested {
            let next: BackgroundSync.Next
            switch prepare() {
            case .wait(let why, let until):
                next = schedule.cannotRun(why, until: until)
            case .ready(let config, let session):
                let (lines, pulls) = schedule.starting(at: ContinuousClock.now)
                lines.forEach(say)
                // A restored backup asks the witness first (`RestorePointCheck`).
                switch try RestorePointCheck.run(home: home, config: config, ledger: ledger, session: session) {
                case .newerHistory(let message)?: throw JQCError.refused(TerminalText.singleLine(message))
                case .couldNotCheck(let message)? where !restoreCheckSaid:
                    say("warning: " + TerminalText.singleLine(message))
                    restoreCheckSaid = true
                default: break
                }
                let witness = try WitnessSetting.witness(
                    for: config, directory: invocation.home, key: { try DeviceKeyFile.ensure(invocation) })
                let run = try SyncRun(
                    ledger: ledger, session: session, device: config.deviceID, clock: invocation.clock,
                    policy: policy, pullsReferenceData: pulls, shouldStop: { signals.stopRequested },
                    journalPath: home.path + "/sync-inflight", concurrency: concurrency)
                run.witness = witness
                let started = ContinuousClock.now
                let report = try run.run()
                if case .loginRequired(let why) = report.stop { try SessionRefusal.learned(why, invocation) }
                next = schedule.ran(
                    report, pulledReferenceData: pulls, seconds: BackgroundSync.seconds(ContinuousClock.now - started),
                    finished: ContinuousClock.now, now: invocation.clock.now(), witness: witness?.outcome)
            }
            next.lines.forEach(say)
            _ = watch.look()  // the run's own outcomes are no reason to run again
            if BackgroundSync.sleep(
                seconds: next.seconds, wakingOn: next.wakeOn, watch: &watch, stopped: { signals.wait(seconds: $0) })
            {
                break
            }
        }
        say("stopped")
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
