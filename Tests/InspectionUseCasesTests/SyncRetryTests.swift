import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `jqc sync retry` without `jqc`: which items a retry queues again, each
/// refusal, and the retry recorded as events (on the ledger of `SyncStandingTests`).
@Suite struct SyncRetryTests {
    @Test func anItemFailedForGoodIsQueuedAgainByItsInspectionsId() throws {
        let fixture = try SyncStandingTests()
        let refused = try fixture.inspection()
        try fixture.outcome(
            .syncGaveUp(SyncGaveUp(item: SyncItem(kind: .inspection, id: refused), error: "HTTP 422: no such area")),
            on: refused)
        let selection = try SyncRetry.select(String(refused.lowercased.prefix(8)), in: fixture.ledger)
        #expect(selection.queued.map(\.item) == [SyncItem(kind: .inspection, id: refused)])
        #expect(selection.leftOut.isEmpty)
        try SyncRetry.queue(
            selection, in: fixture.ledger, actor: fixture.actor, device: fixture.device, at: fixture.clock.now())
        let row = try #require(try fixture.ledger.outbox().first { $0.item.id == refused })
        #expect(row.state == .pending)
        #expect(row.attempts == 0)
        #expect(try SyncStanding.read(fixture.ledger).failed.isEmpty)
    }

    @Test func anItemNotFailedIsNotRetried() throws {
        let fixture = try SyncStandingTests()
        let waiting = try fixture.inspection()
        let error = #expect(throws: SyncRetry.Refusal.self) {
            try SyncRetry.select(waiting.lowercased, in: fixture.ledger)
        }
        #expect(error == .nothingToRetry(waiting.lowercased, states: ["pending"]))
    }

    @Test func aPrefixNamingNothingIsRefused() throws {
        let fixture = try SyncStandingTests()
        _ = try fixture.inspection()
        // Random ids: none starts with sixteen zeros.
        let unknown = "0000000000000000"
        #expect(throws: SyncRetry.Refusal.noSuchItem(unknown)) { try SyncRetry.select(unknown, in: fixture.ledger) }
        #expect(throws: LookupError.self) { try SyncRetry.select("not-hex", in: fixture.ledger) }
    }
}
