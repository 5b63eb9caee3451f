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

    /// The longest wait while offline.
    static let longestOfflineWait = 300.0
    /// Seconds between pulls of reference data.
    static let referencePullInterval = 900

    func run() throws {
        let home = invocation.home
        let ledger = try invocation.ledger()
        let policy = try SyncCommand.policy(invocation.environment)
        let lock = try SyncLock(path: home.syncLockPath)
        defer { lock.release() }
        let signals = StopSignals.watching()
        var watch = LedgerWatch(home)
        var offlineStreak = 0
        var waitingFor: String?
        var lastPull: ContinuousClock.Instant?
        var restoreCheckSaid = false
        say("started on \(home.path); syncs after each change, when the network returns, and every \(interval) s")
        while !signals.stopRequested {
            var wait = Double(interval)
            var wakeOn: LedgerWatch.Changes = [.ledger, .session, .config, .network]
            switch prepare() {
            case .wait(let why, let until):
                if waitingFor != why { say(why) }
                waitingFor = why
                wakeOn = until
            case .ready(let config, let session):
                if waitingFor != nil, offlineStreak == 0 { say("resumed") }
                waitingFor = nil
                // A restored backup asks the witness first (`RestorePointCheck`).
                switch try RestorePointCheck.run(home: home, config: config, ledger: ledger, session: session) {
                case .newerHistory(let message)?: throw JQCError.refused(TerminalText.singleLine(message))
                case .couldNotCheck(let message)? where !restoreCheckSaid:
                    say("warning: " + TerminalText.singleLine(message))
                    restoreCheckSaid = true
                default: break
                }
                let witness = WitnessSetting.witness(for: config, key: { try DeviceKeyFile.ensure(invocation) })
                // Reference data changes rarely: pulled on the first run, then at most every 15 minutes.
                let pulls = lastPull.map { ContinuousClock.now - $0 > .seconds(Self.referencePullInterval) } ?? true
                let run = try SyncRun(
                    ledger: ledger, session: session, device: config.deviceID, clock: invocation.clock,
                    policy: policy, pullsReferenceData: pulls, shouldStop: { signals.stopRequested },
                    journalPath: home.path + "/sync-inflight", concurrency: concurrency)
                run.witness = witness
                let started = ContinuousClock.now
                let report = try run.run()
                if pulls, case .refreshed = report.reference { lastPull = ContinuousClock.now }
                let seconds = Self.seconds(ContinuousClock.now - started)
                switch report.stop {
                case .serverUnreachable(let why):
                    offlineStreak += 1
                    wait = min(Self.longestOfflineWait, 5 * pow(2, Double(offlineStreak - 1)))
                    if offlineStreak == 1 || !report.sent.isEmpty {
                        say(
                            "offline: \(TerminalText.singleLine(why)); trying again on a network change or in "
                                + "\(Int(wait)) s at the latest")
                    }
                case .loginRequired(let why):
                    try SessionRefusal.learned(why, invocation)
                    waitingFor = Self.refusedLine(why)
                    say(waitingFor!)
                    wakeOn = [.session, .config]
                    wait = 86_400
                case .transportRefused(let why):
                    say(
                        "the server cannot be used: \(TerminalText.singleLine(why)); waiting for a change of the "
                            + "config")
                    wakeOn = [.config, .session]
                    wait = 86_400
                case .interrupted, nil:
                    if offlineStreak > 0 { say("online again") }
                    offlineStreak = 0
                    wait = SyncCommand.wait(after: report, interval: interval, now: invocation.clock.now())
                }
                for line in Self.outcomeLines(report, seconds: seconds) { say(line) }
                if let outcome = witness?.outcome, Self.worthSaying(outcome) {
                    say(TerminalText.singleLine(outcome.description))
                }
            }
            _ = watch.look()  // the run's own outcomes are no reason to run again
            if Self.sleep(seconds: wait, wakingOn: wakeOn, watch: &watch, signals: signals) { break }
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
            return .wait(Self.refusedLine(refusal.message), until: [.session, .config])
        }
        do {
            return .ready(
                config, try invocation.serverSession(transport: try invocation.httpClient(connections: concurrency)))
        } catch {
            return .wait("waiting: \(error)", until: [.session, .config])
        }
    }

    static func refusedLine(_ why: String) -> String {
        "the server refused the session (\(TerminalText.singleLine(why))): log in again with 'jqc login'; "
            + "the queued work is sent after it, nothing is lost meanwhile"
    }

    /// Waits up to `seconds`, looking once a second; answers true when a stop was requested.
    static func sleep(
        seconds: Double, wakingOn wanted: LedgerWatch.Changes, watch: inout LedgerWatch, signals: StopSignals
    ) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(max(0.05, seconds) * 1000))
        while ContinuousClock.now < deadline {
            let left = Self.seconds(deadline - ContinuousClock.now)
            if signals.wait(seconds: min(1, max(0.01, left))) { return true }
            let changes = watch.look()
            if !changes.isDisjoint(with: wanted) {
                // A burst of recording (fill, a batch set) settles first.
                return signals.wait(seconds: changes.contains(.ledger) ? 0.3 : 0)
            }
        }
        return false
    }

    /// One line per outcome of a run; none when it did nothing.
    static func outcomeLines(_ report: SyncReport, seconds: Double) -> [String] {
        var lines: [String] = []
        if !report.sent.isEmpty {
            let kinds = SyncItemKind.allCases.compactMap { kind -> String? in
                let n = report.sentCount(kind)
                return n == 0 ? nil : "\(n) \(kind.rawValue)\(n == 1 ? "" : "s")"
            }
            lines.append("sent \(kinds.joined(separator: ", "))" + String(format: " [%.2f s]", seconds))
        }
        for item in report.adopted {
            lines.append("\(item.kind.rawValue) \(item.id.lowercased.prefix(8)) already on the server, not sent again")
        }
        for failure in report.gaveUp { lines.append("failed for good: \(SyncCommand.describe(failure))") }
        for failure in report.retrying {
            let when = failure.nextAttemptAt.map { " (next try \($0.iso8601.prefix(19))Z)" } ?? ""
            lines.append(
                (failure.isStalled ? "stalled after \(failure.attempts) attempts: " : "will retry: ")
                    + SyncCommand.describe(failure) + when)
        }
        if case .failed(let why) = report.reference { lines.append("reference data not refreshed: \(why)") }
        return lines
    }

    /// Witness outcomes other than "nothing new" (which a daemon would say every minute).
    static func worthSaying(_ outcome: CheckpointWitness.Outcome) -> Bool {
        if case .upToDate = outcome { return false }
        return true
    }

    func say(_ line: String) {
        invocation.stderr.line("\(invocation.clock.now().iso8601.prefix(19))Z jqc sync: \(line)")
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
