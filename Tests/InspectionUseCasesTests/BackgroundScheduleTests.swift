import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases
@testable import SyncWorker

/// What the background sync decides between runs, without a server or
/// `jqc`: the offline backoff, waiting through a refused session, when
/// reference data is pulled, the wait until the earliest retry, and that a
/// wait is said once.
@Suite struct BackgroundScheduleTests {
    static let now = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)

    static func report(stop: SyncReport.Stop? = nil, sent: [SyncItem] = [], nextAttemptIn seconds: Int64? = nil)
        -> SyncReport
    {
        var report = SyncReport()
        report.stop = stop
        report.sent = sent
        report.nextAttemptAt = seconds.map {
            Timestamp(microsecondsSinceEpoch: now.microsecondsSinceEpoch + $0 * 1_000_000)
        }
        return report
    }

    func ran(_ schedule: inout BackgroundSync, _ report: SyncReport) -> BackgroundSync.Next {
        schedule.ran(
            report, pulledReferenceData: false, seconds: 0.5, finished: .now, now: Self.now, witness: nil)
    }

    @Test func offlineItBacksOffDoublingToFiveMinutesAndSaysSoOnce() {
        var schedule = BackgroundSync(interval: 60)
        let waits = (1...9).map { _ in ran(&schedule, Self.report(stop: .serverUnreachable("no route"))) }
        #expect(waits.map(\.seconds) == [5, 10, 20, 40, 80, 160, 300, 300, 300])
        #expect(waits.map(\.lines.count) == [1, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(waits[0].lines[0].hasPrefix("offline: no route; trying again on a network change or in 5 s"))
        #expect(waits.allSatisfy { $0.wakeOn.contains(.network) })
        let back = ran(&schedule, Self.report())
        #expect(back.lines == ["online again"])
        #expect(back.seconds == 60)
        #expect(schedule.offlineStreak == 0)
    }

    /// (`JQC_SYNC_BACKOFF_SCALE`, the offline waits): a scale above 1
    /// stretches them, so a test can tell a wait cut by `jqc sync` from
    /// one that ran out; a smaller one leaves them as in use.
    static let stretches: [(scale: String?, waits: [Double])] = [
        (nil, [5, 10, 20, 300]), ("0", [5, 10, 20, 300]), ("0.02", [5, 10, 20, 300]),
        ("100", [500, 1000, 2000, 30_000]),
    ]

    @Test(arguments: stretches)
    func aBackOffScaleAboveOneStretchesTheOfflineWaits(scale: String?, waits: [Double]) throws {
        let policy = try RetryPolicy.standard(scale.map { ["JQC_SYNC_BACKOFF_SCALE": $0] } ?? [:])
        var schedule = BackgroundSync(interval: 60, offlineStretch: BackgroundSync.offlineStretch(policy))
        let seconds = (1...7).map { _ in ran(&schedule, Self.report(stop: .serverUnreachable("no route"))).seconds }
        #expect([seconds[0], seconds[1], seconds[2], seconds[6]] == waits)
    }

    @Test func aRefusedSessionWaitsForALoginAndIsSaidOnce() {
        var schedule = BackgroundSync(interval: 60)
        let refused = ran(&schedule, Self.report(stop: .loginRequired("HTTP 401: token revoked")))
        #expect(refused.lines == [BackgroundSync.refusedLine("HTTP 401: token revoked")])
        #expect(refused.wakeOn == [.session, .config])
        #expect(refused.seconds == 86_400)
        // The next look finds the refusal recorded: nothing more is said.
        let waiting = schedule.cannotRun(BackgroundSync.refusedLine("HTTP 401: token revoked"), until: [.session])
        #expect(waiting.lines.isEmpty)
        #expect(waiting.wakeOn == [.session])
        let start = schedule.starting(at: .now)
        #expect(start.lines == ["resumed"])
        #expect(schedule.waitingFor == nil)
    }

    @Test func referenceDataIsPulledFirstThenAtMostEveryFifteenMinutes() {
        var schedule = BackgroundSync(interval: 60)
        let first = ContinuousClock.now
        #expect(schedule.starting(at: first).pullsReferenceData)
        var pulled = Self.report()
        pulled.reference = .refreshed(facilities: 3, templates: 2)
        _ = schedule.ran(pulled, pulledReferenceData: true, seconds: 1, finished: first, now: Self.now, witness: nil)
        #expect(!schedule.starting(at: first + .seconds(BackgroundSync.referencePullInterval)).pullsReferenceData)
        #expect(schedule.starting(at: first + .seconds(BackgroundSync.referencePullInterval + 1)).pullsReferenceData)
    }

    static let waits: [(report: SyncReport, expected: Double)] = [
        (report(), 30),
        (report(nextAttemptIn: 3), 3),
        (report(nextAttemptIn: 300), 30),
        (report(nextAttemptIn: -10), 0.05),
        (report(stop: .serverUnreachable("down"), nextAttemptIn: 3), 30),
    ]

    @Test(arguments: waits) func theNextRunIsAtTheEarliestRetry(report: SyncReport, expected: Double) {
        #expect(BackgroundSync.nextRun(after: report, interval: 30, now: Self.now) == expected)
    }

    @Test func aRunThatDidNothingSaysNothing() {
        var schedule = BackgroundSync(interval: 60)
        #expect(ran(&schedule, Self.report()).lines.isEmpty)
        let sent = ran(&schedule, Self.report(sent: [SyncItem(kind: .photo, id: UUID())]))
        #expect(sent.lines == ["sent 1 photo [0.50 s]"])
    }

    @Test func aWaitEndsOnAStopOrAWantedChange() throws {
        let temporary = TemporaryDirectory(prefix: "schedule")
        var watch = LedgerWatch(LedgerDirectory(path: temporary.path), networkFiles: [])
        var asked = 0
        let stopped = BackgroundSync.sleep(seconds: 600, wakingOn: [.ledger], watch: &watch) { _ in
            asked += 1
            return asked == 3
        }
        #expect(stopped)
        #expect(asked == 3)
        // A change it waits for wakes it.
        try Data("{}".utf8).write(to: URL(fileURLWithPath: temporary.appending("config.json")))
        let woken = BackgroundSync.sleep(seconds: 600, wakingOn: [.config], watch: &watch) { _ in false }
        #expect(!woken)
    }
}
