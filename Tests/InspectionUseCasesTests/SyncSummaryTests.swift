import Foundation
import InspectionDomain
import LedgerCore
import Testing

@testable import InspectionUseCases
@testable import SyncWorker

/// `jqc sync`'s text summary of a run, worded from a report alone (no
/// server, no `jqc`): the counts, each line that needs a word, what
/// `--watch` leaves unsaid, and an offline stretch reported once.
@Suite struct SyncSummaryTests {
    static let inspection = UUID(uuidString: "AAAAAAAA-1111-2222-3333-444444444444")!
    static let photo = UUID(uuidString: "BBBBBBBB-1111-2222-3333-444444444444")!
    static let issue = UUID(uuidString: "CCCCCCCC-1111-2222-3333-444444444444")!
    static let now = Timestamp(microsecondsSinceEpoch: 1_780_000_000_000_000)

    static func summary(_ report: SyncReport, watching: Bool = false) -> SyncSummary {
        SyncSummary(report, seconds: 1.234, watching: watching, now: now, unreachable: { "offline: \($0)" })
    }

    static func failure(_ kind: SyncItemKind, _ id: UUID, next: Timestamp? = nil, attempts: Int = 1)
        -> SyncReport.Failure
    {
        SyncReport.Failure(
            item: SyncItem(kind: kind, id: id), inspectionID: inspection, error: "HTTP 500", httpStatus: 500,
            nextAttemptAt: next, attempts: attempts)
    }

    @Test func theCountsComeFirstWithTheKindsSent() {
        var report = SyncReport()
        report.sent = [
            SyncItem(kind: .photo, id: Self.photo), SyncItem(kind: .photo, id: UUID()),
            SyncItem(kind: .inspection, id: Self.inspection),
        ]
        report.reference = .refreshed(facilities: 3, templates: 1)
        let summary = Self.summary(report)
        #expect(
            summary.lines == [
                "Sent 3 (2 photos, 1 inspection); failed 0; will retry 0; skipped 0 [1.23 s]",
                "Reference data refreshed: 3 facilities, 1 templates.",
            ])
        #expect(summary.warnings.isEmpty)
    }

    /// Items found on the server are worded by who sent them: this
    /// device (its answer lost), the named submitter of a copy adopted
    /// here, or a device unknown here that adopted this one's submission.
    @Test(arguments: [
        (device: UUID?.none, by: "another device, which adopted the sending of this device's shared submission"),
        (
            device: UUID(uuidString: "DDDDDDDD-1111-2222-3333-444444444444"),
            by: "device dddddddd-1111-2222-3333-444444444444 (its submitter; this device had adopted the sending)"
        ),
    ])
    func aRecordAnotherDeviceSentIsWordedAsThatDevices(device: UUID?, by: String) {
        var report = SyncReport()
        let found = [SyncItem(kind: .inspection, id: Self.inspection), SyncItem(kind: .photo, id: Self.photo)]
        report.adopted = found + [SyncItem(kind: .inspection, id: Self.issue)]
        report.sentElsewhere = found.map { SyncReport.SentElsewhere(item: $0, device: device) }
        #expect(
            Self.summary(report).lines == [
                "Sent 0; failed 0; will retry 0; skipped 0 [1.23 s]",
                "  1 already on the server (an earlier answer was lost), not sent again: inspection cccccccc",
                "  2 already on the server, sent by \(by), not sent again: inspection aaaaaaaa, photo bbbbbbbb",
            ])
    }

    @Test func eachThingThatNeedsAWordHasItsLine() {
        var report = SyncReport()
        report.adopted = [SyncItem(kind: .inspection, id: Self.inspection)]
        report.gaveUp = [Self.failure(.issue, Self.issue)]
        let next = Timestamp(microsecondsSinceEpoch: Self.now.microsecondsSinceEpoch + 2_000_000)
        report.retrying = [
            Self.failure(.photo, Self.photo, next: next, attempts: 1),
            Self.failure(.photo, Self.photo, next: next, attempts: SyncFailure.stalledAfterAttempts),
        ]
        report.leftOut = [Self.failure(.photo, Self.photo)]
        report.failedEarlier = [Self.failure(.issue, Self.issue), Self.failure(.issue, UUID())]
        report.reference = .failed("HTTP 503\nagain")
        report.referenceWarnings = ["template 7 was dropped"]
        report.stop = .serverUnreachable("no route")
        let lines = Self.summary(report).lines
        let failed = "issue cccccccc of inspection aaaaaaaa: HTTP 500"
        let photo = "photo bbbbbbbb of inspection aaaaaaaa: HTTP 500 (next try \(next.iso8601.prefix(19))Z)"
        #expect(
            lines == [
                "Sent 0; failed 1; will retry 2; skipped 0 [1.23 s]",
                "  1 already on the server (an earlier answer was lost), not sent again: inspection aaaaaaaa",
                "  failed: \(failed)",
                "  will retry: \(photo)",
                "  stalled after \(SyncFailure.stalledAfterAttempts) attempts, will retry: \(photo)",
                "  1 photo(s) failed for good earlier and their records went to the server without them "
                    + "(see 'jqc outbox' and 'jqc show ID').",
                "  2 item(s) failed earlier and wait for 'jqc sync retry ID' (see 'jqc outbox').",
                "Reference data not refreshed: \(TerminalText.singleLine("HTTP 503\nagain"))",
                "offline: no route",
            ])
        #expect(Self.summary(report).warnings == ["template 7 was dropped"])
    }

    /// How the run stopped, and the last line it gives.
    @Test(
        arguments: [
            (SyncReport.Stop.interrupted, SyncReport.Stop.interrupted.description),
            (.loginRequired("expired"), nil), (.transportRefused("TLS"), nil),
        ] as [(SyncReport.Stop, String?)])
    func aStopThrownAsTheErrorIsNotWorded(stop: SyncReport.Stop, last: String?) {
        var report = SyncReport()
        report.stop = stop
        let lines = Self.summary(report).lines
        #expect(lines.count == (last == nil ? 1 : 2))
        if let last { #expect(lines.last == last) }
    }

    @Test func watchingAnIdleRunSaysNothingAndABusyOneIsStamped() {
        var report = SyncReport()
        report.reference = .refreshed(facilities: 3, templates: 1)
        report.referenceWarnings = ["w"]
        let idle = Self.summary(report, watching: true)
        #expect(idle.lines.isEmpty && idle.warnings.isEmpty)
        report.sent = [SyncItem(kind: .issue, id: Self.issue)]
        let summary = Self.summary(report, watching: true)
        #expect(
            summary.lines == [
                "\(Self.now.iso8601.prefix(19)) Sent 1 (1 issue); failed 0; will retry 0; skipped 0 [1.23 s]"
            ])
        #expect(summary.warnings == ["w"])
    }

    @Test func anOfflineStretchIsReportedOnceWhileWatching() {
        var offline = SyncReport()
        offline.stop = .serverUnreachable("down")
        var retrying = offline
        retrying.retrying = [Self.failure(.photo, Self.photo, next: Self.now)]
        let online = SyncReport()
        var stretch = SyncSummary.OfflineStretch()
        let runs = [offline, offline, offline, retrying, online, offline, offline]
        #expect(runs.map { stretch.repeats($0, watching: true) } == [false, true, true, false, false, false, true])
        var once = SyncSummary.OfflineStretch()
        #expect(runs.map { once.repeats($0, watching: false) }.allSatisfy { !$0 })
    }
}
