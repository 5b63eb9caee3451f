import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

@testable import SyncWorker

/// "skipped" is never a bare count: every item a sync leaves in the outbox
/// is listed with why and when it is tried next; the history prints scores
/// in one form whatever the server sent.
@Suite struct SkippedWordingTests {
    @Test func everySkippedItemSaysWhyAndWhenItIsTriedNext() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 1, issues: 0)
        try server.faults(.object(["fault_rate": .integer(1), "fault_paths": .array([.string("/api/v1/photos")])]))
        // Retries far enough ahead not to fall due within these runs.
        let slow = JQCRunner(ledger: sample.path, environment: ["JQC_SYNC_BACKOFF_SCALE": "2500"])
        let short = id.lowercased.prefix(8)

        let first = try slow("sync")

        #expect(first.stdout.contains("will retry 1; skipped 1"), "\(first.stdout)")
        let waiting = try #require(first.stdout.split(separator: "\n").first { $0.contains("skipped: inspection") })
        // The inspection's own item is named once (issue #33 item 8: no "inspection X of inspection X").
        #expect(waiting.hasPrefix("  skipped: inspection \(short): waiting for photo "), "\(waiting)")
        #expect(waiting.contains("HTTP 500: internal server error (injected fault)"))
        #expect(waiting.hasSuffix("; it goes once that is on the server"), "\(waiting)")

        let second = try slow("--json", "sync")
        let report = try JSONValue(parsing: second.stdout)
        let items = try #require(report["skipped_items"]?.arrayValue)
        #expect(items.count == 2)
        let photo = try #require(items.first { $0["kind"] == .string("photo") })
        #expect(
            photo["reason"]?.stringValue
                == "not due yet: attempt 1 failed (HTTP 500: internal server error (injected fault))")
        #expect(photo["next_attempt_at"]?.stringValue != nil)
        let text = try slow("sync")
        #expect(text.stdout.contains("skipped 2"))
        #expect(
            text.stdout.contains(
                ": not due yet: attempt 1 failed (HTTP 500: internal server error (injected fault)); next try 20"),
            "\(text.stdout)")
    }

    @Test func theHistoryPrintsEveryScoreWithTwoDecimals() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 0, issues: 0)
        #expect(try sample.jqc("sync").status == 0)
        let history = try sample.jqc("history")
        #expect(history.status == 0, "\(history.stderr)")
        let row = try #require(history.stdout.split(separator: "\n").dropFirst().first)
        let score = try #require(
            try JSONValue(parsing: try sample.jqc("--json", "history").stdout)["inspections"]?.arrayValue?.first?[
                "overall_score"]?.doubleValue)
        #expect(row.contains(" \(String(format: "%.2f", score)) "), "\(row)")
    }

    static let inspection = UUID(uuidString: "c73923c2-0000-7000-8000-000000000001")!
    static let other = UUID(uuidString: "3d15a2b0-0000-7000-8000-000000000002")!

    /// A failure's line names the inspection's own item once; a photo or an
    /// issue with the inspection it belongs to (issue #33 item 8).
    @Test(arguments: [
        (SyncItem(kind: .inspection, id: inspection), "inspection c73923c2: timed out"),
        (SyncItem(kind: .photo, id: other), "photo 3d15a2b0 of inspection c73923c2: timed out"),
        (SyncItem(kind: .issue, id: other), "issue 3d15a2b0 of inspection c73923c2: timed out"),
    ])
    func aFailuresLineNamesTheInspectionOnce(item: SyncItem, line: String) {
        let failure = SyncReport.Failure(
            item: item, inspectionID: Self.inspection, error: "timed out", httpStatus: nil, nextAttemptAt: nil)
        #expect(failure.summary == line)
    }
}
