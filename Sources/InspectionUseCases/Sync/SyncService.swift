import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

/// The one sync service of a ledger: `jqc sync` (one pass), `jqc sync
/// --watch` (passes until a stop) and the background sync (`jqc sync
/// --daemon`, `runInBackground`) are this type, so what a pass does is
/// written once: the restore-point check (`RestorePointCheck`, which says a
/// check it cannot make once by itself), the witness named by the config
/// (`WitnessSetting`), the `SyncRun`, a refused session kept
/// (`SessionRefusal`) and the schedule of the next pass (`BackgroundSync`).
/// The command that starts it gives it what it runs against
/// (`Surroundings`) and prints what a pass hands back; nothing here writes
/// to a terminal.
public final class SyncService {
    /// What the service runs against, from the command that starts it.
    public struct Surroundings {
        public var home: LedgerDirectory
        public var clock: any LedgerClock
        public var environment: [String: String]
        /// Requests in flight at once; the session's transport allows as many.
        public var concurrency: Int
        public var config: () throws -> LedgerConfig
        /// The saved session, nil when nobody is logged in.
        public var storedSession: () throws -> StoredSession?
        /// The saved session on the configured server, ready for calls.
        public var serverSession: () throws -> ServerSession
        /// The device's signing key, made on first use.
        public var deviceKey: () throws -> NoteKey
        /// Whether SIGINT or SIGTERM asked for a stop.
        public var stopRequested: @Sendable () -> Bool
        /// Waits up to the seconds given, answering whether a stop was asked for.
        public var wait: (Double) -> Bool
        /// Ends a `wait` under way early, without a stop.
        public var wakeUp: @Sendable () -> Void

        public init(
            home: LedgerDirectory, clock: any LedgerClock, environment: [String: String], concurrency: Int,
            config: @escaping () throws -> LedgerConfig, storedSession: @escaping () throws -> StoredSession?,
            serverSession: @escaping () throws -> ServerSession, deviceKey: @escaping () throws -> NoteKey,
            stopRequested: @escaping @Sendable () -> Bool, wait: @escaping (Double) -> Bool,
            wakeUp: @escaping @Sendable () -> Void
        ) {
            self.home = home
            self.clock = clock
            self.environment = environment
            self.concurrency = concurrency
            self.config = config
            self.storedSession = storedSession
            self.serverSession = serverSession
            self.deviceKey = deviceKey
            self.stopRequested = stopRequested
            self.wait = wait
            self.wakeUp = wakeUp
        }
    }

    /// What one pass did.
    public struct Pass {
        public var report: SyncReport
        public var seconds: Double
        /// The witness step's outcome, when a witness is configured.
        public var witness: CheckpointWitness.Outcome?
        /// The restore point could not be checked: said once (`RestorePointCheck`).
        public var restoreWarning: String?
    }

    /// Why the service stopped syncing: each message says what to do.
    public enum Refusal: Error, CustomStringConvertible, Equatable {
        /// Another copy of this device recorded after the backup this ledger was restored from.
        case restoredOverNewerHistory(String)
        /// The server refused the session: log in again.
        case sessionRefused(String)
        /// The server cannot be used as configured (TLS, a redirect, a bad URL).
        case serverUnusable(String)

        public var description: String {
            switch self {
            case .restoredOverNewerHistory(let message): TerminalText.singleLine(message)
            case .sessionRefused(let why), .serverUnusable(let why): why
            }
        }
    }

    let ledger: InspectionLedger
    let surroundings: Surroundings
    /// The restore-point mark (and the witnesses it is checked against) as
    /// the last check left them, with that check's outcome: while they stay
    /// so, a pass does not ask the witnesses again (each would be a round
    /// trip to every witness at every interval of `--watch` or the
    /// background sync, with the same answer).
    var checkedMark: (inputs: RestorePointInputs, outcome: RestorePointCheck.Outcome?)?

    public init(ledger: InspectionLedger, _ surroundings: Surroundings) {
        self.ledger = ledger
        self.surroundings = surroundings
    }

    /// One pass, everything a pass does once: the restore-point check, the
    /// witness of the config, the run, and a refused session kept for
    /// `jqc status` and `whoami`. Throws `Refusal.restoredOverNewerHistory`
    /// before sending anything when another copy recorded after the backup.
    public func pass(
        config: LedgerConfig, session: ServerSession, pullsReferenceData: Bool = true,
        progress: ((SyncProgress) -> Void)? = nil
    ) throws -> Pass {
        let home = surroundings.home
        let warning = try checkRestorePoint(config: config, session: session)
        // Only a configured witness is asked (`WitnessSetting`); with none the step is skipped.
        let witness = try WitnessSetting.witness(for: config, directory: home, key: surroundings.deviceKey)
        let run = try SyncRun(
            ledger: ledger, session: session, device: config.deviceID, clock: surroundings.clock,
            policy: try RetryPolicy.standard(surroundings.environment), pullsReferenceData: pullsReferenceData,
            shouldStop: surroundings.stopRequested, journalPath: home.syncInflightPath,
            concurrency: surroundings.concurrency)
        let started = ContinuousClock.now
        let report = try run.run(witness: witness, progress: progress)
        let seconds = BackgroundSync.seconds(ContinuousClock.now - started)
        // The server's reason is kept, not the sentence around it: `status` and `whoami` word it themselves.
        if case .loginRequired(let why) = report.stop { try learnRefusal(report.sessionRefusedBecause ?? why) }
        return Pass(report: report, seconds: seconds, witness: witness?.outcome, restoreWarning: warning)
    }

    /// `jqc sync` (one pass) and `jqc sync --watch` (`watching`: passes
    /// until a stop, the next one at the earliest retry or after
    /// `interval` seconds). Each pass is handed to `show` as it ends; a
    /// refused session or an unusable server ends the loop (`Refusal`).
    /// Answers whether the last pass left something failed for good.
    public func runInForeground(
        watching: Bool, interval: Int, progress: () -> ((SyncProgress) -> Void)?, show: (Pass) throws -> Void
    ) throws -> Bool {
        repeat {
            let pass = try self.pass(
                config: try surroundings.config(), session: try surroundings.serverSession(), progress: progress())
            try show(pass)
            switch pass.report.stop {
            case .loginRequired(let why): throw Refusal.sessionRefused(why)
            case .transportRefused(let why): throw Refusal.serverUnusable(why)
            default: break
            }
            guard watching, !surroundings.stopRequested() else { return pass.report.needsAttention }
            let wait = BackgroundSync.nextRun(after: pass.report, interval: interval, now: surroundings.clock.now())
            if surroundings.wait(wait) { return pass.report.needsAttention }
        } while true
    }

    /// A restored backup asks the witnesses first (`RestorePointCheck`):
    /// a refusal when another copy of the device recorded after the
    /// backup; the warning of a check that could not be made, once. Asked
    /// once per service start, and again only when the mark or what names
    /// its witnesses changed (`RestorePointInputs`: their stamps looked at
    /// each pass, their bytes read only when a stamp moved): a backup
    /// restored over it, a witness added, another server configured, the
    /// mark cleared.
    func checkRestorePoint(config: LedgerConfig, session: ServerSession) throws -> String? {
        let home = surroundings.home
        let outcome: RestorePointCheck.Outcome?
        if let checked = checkedMark, checkedMark?.inputs.unchanged(in: home) == true {
            outcome = checked.outcome
            // What it found stands; a check that could not be made was said when it was made.
            if case .couldNotCheck? = outcome { return nil }
        } else {
            outcome = try RestorePointCheck.run(
                home: home, config: config, ledger: ledger, session: session, key: surroundings.deviceKey,
                clock: surroundings.clock)
            // Taken after the check, which rewrites the mark with what it found.
            checkedMark = (RestorePointInputs.current(home), outcome)
        }
        switch outcome {
        case .newerHistory(let message)?: throw Refusal.restoredOverNewerHistory(message)
        case .couldNotCheck(let message)?: return TerminalText.singleLine(message)
        case .passed?, .stillUnchecked?, nil: return nil
        }
    }

    /// Keeps the server's refusal of the saved session, so `whoami` and
    /// `status` say "log in again" until a new `jqc login`.
    func learnRefusal(_ why: String) throws {
        guard let saved = try surroundings.storedSession() else { return }
        try SessionRefusal.record(
            SessionRefusal(
                sessionSavedAt: saved.savedAt, refusedAt: surroundings.clock.now().iso8601,
                message: TerminalText.singleLine(why)),
            in: surroundings.home)
    }
}
