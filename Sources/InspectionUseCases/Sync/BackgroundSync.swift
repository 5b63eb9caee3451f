import FoundationEssentials
import Glibc
import InspectionDomain
import InspectionStore
import LedgerCore
import SyncWorker

/// What the background sync (`jqc sync --daemon`) decides between runs:
/// whether a run pulls reference data (the first, then at most every 15
/// minutes), how long to wait after it and on which changes to wake
/// (offline: 5 s doubling to 5 minutes, woken early by a network change;
/// a refused session: until a new login or config), and what to say, one
/// line per outcome and nothing when idle. A wait is said once, not at
/// every look. The decisions and their words are the service's
/// (`SyncService.runInBackground`); what it waits on and looks at is the
/// worker's (`LedgerWakeups`, `LedgerWatch`).
public struct BackgroundSync: Sendable {
    /// The longest wait between runs, in seconds.
    public let interval: Int
    /// Multiplies the offline waits: 1 in use. Tests stretch them with the
    /// test-only `JQC_SYNC_BACKOFF_SCALE` (`offlineStretch(_:)`), so that
    /// only a `jqc sync` asking for a pass can end a wait within the test.
    public let offlineStretch: Double
    /// Runs in a row that found the server unreachable.
    public private(set) var offlineStreak = 0
    /// What the daemon waits for before it can run, said once; nil while it runs.
    public private(set) var waitingFor: String?
    private var lastPull: ContinuousClock.Instant?

    /// The longest wait while offline, in seconds.
    public static let longestOfflineWait = 300.0
    /// Seconds between pulls of reference data.
    public static let referencePullInterval = 900
    /// How long a refused session or an unusable server waits for a change.
    static let dayLong = 86_400.0

    /// Until when the daemon sleeps, and what it says first.
    public struct Next: Equatable, Sendable {
        public var lines: [String]
        public var seconds: Double
        public var wakeOn: LedgerWatch.Changes
    }

    public init(interval: Int, offlineStretch: Double = 1) {
        self.interval = interval
        self.offlineStretch = offlineStretch
    }

    /// The stretch of the offline waits a retry policy asks for: its
    /// `JQC_SYNC_BACKOFF_SCALE` when that lengthens them, else 1. Never
    /// shorter than in use: the tests' usual scale of 0 (every retry due at
    /// once) would have an offline daemon try again 20 times a second.
    public static func offlineStretch(_ policy: RetryPolicy) -> Double { max(1, policy.scale) }

    /// No run can start until `until` changes; `why` says what to do.
    public mutating func cannotRun(_ why: String, until: LedgerWatch.Changes) -> Next {
        let lines = waitingFor == why ? [] : [why]
        waitingFor = why
        return Next(lines: lines, seconds: Double(interval), wakeOn: until)
    }

    /// A run starts at `now`: whether it pulls reference data, and what to
    /// say first ("resumed" after a wait that was not an offline one).
    public mutating func starting(at now: ContinuousClock.Instant) -> (lines: [String], pullsReferenceData: Bool) {
        let lines = waitingFor != nil && offlineStreak == 0 ? ["resumed"] : []
        waitingFor = nil
        let pulls = lastPull.map { now - $0 > .seconds(Self.referencePullInterval) } ?? true
        return (lines, pulls)
    }

    /// What a run that took `seconds` and ended at `finished` (`now` on the
    /// ledger's clock) asks for: the lines to say, the wait, what wakes.
    public mutating func ran(
        _ report: SyncReport, pulledReferenceData pulled: Bool, seconds: Double, finished: ContinuousClock.Instant,
        now: Timestamp, witness: CheckpointWitness.Outcome?
    ) -> Next {
        if pulled, case .refreshed = report.reference { lastPull = finished }
        var next = Next(lines: [], seconds: Double(interval), wakeOn: [.ledger, .session, .config, .network])
        switch report.stop {
        case .serverUnreachable(let why):
            offlineStreak += 1
            next.seconds = min(Self.longestOfflineWait, 5 * pow(2, Double(offlineStreak - 1))) * offlineStretch
            if offlineStreak == 1 || !report.sent.isEmpty {
                next.lines.append(
                    "offline: \(TerminalText.singleLine(why)); trying again on a network change or in "
                        + "\(Int(next.seconds)) s at the latest")
            }
        case .loginRequired(let why):
            // The server's reason alone: `why` is a sentence that already says to log in.
            let line = Self.refusedLine(report.sessionRefusedBecause ?? why)
            waitingFor = line
            next.lines.append(line)
            next.wakeOn = [.session, .config]
            next.seconds = Self.dayLong
        case .transportRefused(let why):
            next.lines.append(
                "the server cannot be used: \(TerminalText.singleLine(why)); waiting for a change of the config")
            next.wakeOn = [.config, .session]
            next.seconds = Self.dayLong
        case .interrupted, nil:
            if offlineStreak > 0 { next.lines.append("online again") }
            offlineStreak = 0
            next.seconds = Self.nextRun(after: report, interval: interval, now: now)
        }
        next.lines += Self.outcomeLines(report, seconds: seconds)
        if let witness, Self.worthSaying(witness) { next.lines.append(TerminalText.singleLine(witness.description)) }
        return next
    }

    /// Seconds until the next run after `report` (of `jqc sync --watch` and
    /// the daemon): the earliest retry, else the interval; never less than 50 ms.
    public static func nextRun(after report: SyncReport, interval: Int, now: Timestamp) -> Double {
        var seconds = Double(interval)
        if case .serverUnreachable = report.stop { return seconds }
        if let next = report.nextAttemptAt {
            seconds = min(
                seconds, (Double(next.microsecondsSinceEpoch) - Double(now.microsecondsSinceEpoch)) / 1_000_000)
        }
        return max(0.05, seconds)
    }

    /// What the daemon says of a refused session, and what to do about it.
    public static func refusedLine(_ why: String) -> String {
        "the server refused the session (\(TerminalText.singleLine(why))): log in again with 'jqc login'; "
            + "the queued work is sent after it, nothing is lost meanwhile"
    }

    /// One line per outcome of a run; none when it did nothing.
    public static func outcomeLines(_ report: SyncReport, seconds: Double) -> [String] {
        var lines: [String] = []
        if !report.sent.isEmpty {
            let kinds = SyncItemKind.allCases.compactMap { kind -> String? in
                let n = report.sentCount(kind)
                return n == 0 ? nil : "\(n) \(kind.rawValue)\(n == 1 ? "" : "s")"
            }
            lines.append("sent \(kinds.joined(separator: ", "))" + " [\(FixedPoint.text(seconds, places: 2)) s]")
        }
        for item in report.adopted {
            lines.append("\(item.kind.rawValue) \(item.id.lowercased.prefix(8)) already on the server, not sent again")
        }
        for failure in report.gaveUp { lines.append("failed for good: \(failure.summary)") }
        for failure in report.retrying {
            let when = failure.nextAttemptAt.map { " (next try \($0.iso8601.prefix(19))Z)" } ?? ""
            lines.append(
                (failure.isStalled ? "stalled after \(failure.attempts) attempts: " : "will retry: ")
                    + failure.summary + when)
        }
        if case .failed(let why) = report.reference { lines.append("reference data not refreshed: \(why)") }
        return lines
    }

    /// Witness outcomes other than "nothing new" (which a daemon would say every minute).
    static func worthSaying(_ outcome: CheckpointWitness.Outcome) -> Bool {
        if case .upToDate = outcome { return false }
        return true
    }

    /// A `jqc sync` asked for a pass now (`SyncNowRequest`): the offline
    /// back-off starts again from its first step, so the pass runs at once
    /// and, if the server is still away, the next try comes soon.
    public mutating func cutBackOff() { offlineStreak = 0 }

    /// The event types the daemon's own passes record: outcomes, the
    /// witness's answer, its key's publication. Any other record appended
    /// while a pass ran (a submit, `jqc sync retry`) is a reason for another
    /// pass at once (`othersRecorded`).
    public static let ownEventTypes: Set<String> =
        Set(
            [
                InspectionEventType.photoUploaded, .inspectionAccepted, .issueAccepted, .syncAttemptFailed,
                .syncGaveUp,
            ].map(\.rawValue)
        ).union([DeviceStreamEventType.checkpointWitnessed.rawValue, DeviceStreamEventType.keyPublished.rawValue])

    /// Whether a record other than the daemon's own was appended after
    /// `position` (the log's head when the pass began).
    public static func othersRecorded(in ledger: InspectionLedger, after position: UInt64) throws -> Bool {
        try ledger.log.read { reader in
            var found = false
            try reader.forEachRecord(from: position + 1) { record in
                found = !ownEventTypes.contains(record.type)
                return !found
            }
            return found
        }
    }

    /// Waits up to `seconds`, looking at `watch` every `slice` seconds (once
    /// a second when polling; `.infinity` when `LedgerWakeups` wakes
    /// `stopped` on each notification, so an idle daemon does nothing); answers true
    /// when `stopped` (which waits up to the seconds it is given) says a stop
    /// was requested. A change among `wanted` ends the wait; a burst of
    /// recording (fill, a batch set) settles first. A request to sync now
    /// (`asked`, which wakes `stopped`) ends it at once.
    public static func sleep(
        seconds: Double, wakingOn wanted: LedgerWatch.Changes, watch: inout LedgerWatch,
        slice: Double = 1, asked: () -> Bool = { false }, stopped: (Double) -> Bool
    ) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(max(0.05, seconds) * 1000))
        while ContinuousClock.now < deadline {
            let left = Self.seconds(deadline - ContinuousClock.now)
            if asked() { return false }
            if stopped(min(slice, max(0.01, left))) { return true }
            if asked() { return false }
            let changes = watch.look()
            if !changes.isDisjoint(with: wanted) { return stopped(changes.contains(.ledger) ? 0.3 : 0) }
        }
        return false
    }

    /// A duration in seconds.
    public static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
