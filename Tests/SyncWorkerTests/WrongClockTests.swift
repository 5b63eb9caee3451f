import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// A retry scheduled while the device clock was wrong (a year ahead) must not
/// park the evidence once the clock is right again.
@Suite struct WrongClockTests {
    let sample: SampleLedger
    let server: ScriptedTransport

    init() throws {
        sample = try SampleLedger(serverURL: "http://fake.test/api/v1")
        server = try ScriptedTransport()
        try sample.logIn(to: server)
    }

    func run(at clock: ManualClock) throws -> SyncReport {
        let saved = try sample.session()
        let session = ServerSession(
            saved, api: APIClient(baseURL: saved.serverURL, transport: server),
            store: SessionStore(path: sample.credentialsPath))
        return try SyncRun(
            ledger: sample.ledger, session: session, device: sample.device, clock: clock, random: { 0.5 }
        )
        .run()
    }

    var inspectionPosts: Int {
        server.exchanges.filter { $0.request.method == .post && $0.path.hasSuffix("/inspections") }.count
    }

    @Test func aRetrySetAYearAheadIsSentOnceTheClockIsRight() throws {
        let id = try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.status(503, "down for maintenance")])
        let yearAhead = ManualClock(Timestamp(iso8601: "2027-03-01T09:00:00Z")!)
        let first = try run(at: yearAhead)
        #expect(first.retrying.map(\.item) == [SyncItem(kind: .inspection, id: id)])
        let next = try #require(try sample.ledger.outbox().first?.nextAttemptAt)
        #expect(next > Timestamp(iso8601: "2027-03-01T09:00:00Z")!)

        // The clock is put right: the next try lies a year ahead, further
        // than any backoff, so it was set by a wrong clock and is due now.
        let right = ManualClock(Timestamp(iso8601: "2026-03-01T09:05:00Z")!)
        let second = try run(at: right)
        #expect(second.sent.contains(SyncItem(kind: .inspection, id: id)))
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(inspectionPosts == 2)
    }

    @Test func syncRetryTakesARetryingItem() throws {
        let id = try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.status(503, "down for maintenance")])
        _ = try run(at: ManualClock(Timestamp(iso8601: "2027-03-01T09:00:00Z")!))
        #expect(try sample.ledger.outbox().first?.state == .retrying)
        let retry = try sample.jqc("--json", "sync", "retry", String(id.lowercased.prefix(8)))
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(
            try JSONValue(parsing: retry.stdout)
                == .array([.object(["kind": .string("inspection"), "id": .string(id.lowercased)])]),
            "\(retry.stdout)")
        #expect(try sample.ledger.outbox().first?.state == .pending)
    }

    @Test func aRetryWithinTheBackoffStillWaits() throws {
        try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.status(503, "down for maintenance")])
        let clock = ManualClock(Timestamp(iso8601: "2026-03-01T09:00:00Z")!)
        _ = try run(at: clock)
        // One second later the two-second backoff has not passed: nothing is sent.
        clock.advance(microseconds: 1_000_000)
        let second = try run(at: clock)
        #expect(second.sent.isEmpty)
        #expect(inspectionPosts == 1)
        #expect(try sample.ledger.outbox().first?.state == .retrying)
    }

    @Test func aServerAskingForAYearIsWaitedForAnHourAtMost() throws {
        try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.status(503, "come back next year", retryAfter: 31_536_000)])
        let clock = ManualClock(Timestamp(iso8601: "2026-03-01T09:00:00Z")!)
        _ = try run(at: clock)
        let next = try #require(try sample.ledger.outbox().first?.nextAttemptAt)
        #expect(next.microsecondsSinceEpoch - clock.now().microsecondsSinceEpoch <= 3_600_000_000)
        clock.advance(microseconds: 3_600_000_000)
        #expect(try run(at: clock).sent.count == 1)
    }
}
