import Foundation
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
@_spi(RawAppend) import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// What `jqc status` counts as not on the server, without `jqc`: drafts,
/// submitted items waiting, stalled ones, ones failed for good, photos, and
/// the last sync from the log's outcome events.
@Suite struct SyncStandingTests {
    let temporary = TemporaryDirectory(prefix: "sync-standing")
    let ledger: InspectionLedger
    let clock = ManualClock()
    let device = UUID()
    let actor = Actor(id: "local:Dana", name: "Dana", verified: false)
    let worker = Actor(id: "device:worker", name: "sync-worker", verified: true)

    init() throws {
        ledger = try InspectionLedger(
            storePath: temporary.appending("store"), photosPath: temporary.appending("photos"), access: .creating)
        let json = try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
        try ledger.reference.replace(with: try ReferenceCache.Snapshot(json: json), at: clock.now())
    }

    func record(_ command: InspectionCommand, on id: UUID) throws {
        let state = try ledger.state(of: id) ?? InspectionState(id: id)
        try ledger.record(
            try state.decide(command), stream: id, expectedVersion: UInt64(state.eventCount), actor: actor,
            device: device, at: clock.now())
    }

    func outcome(_ event: InspectionEvent, on id: UUID) throws {
        clock.advance(microseconds: 1_000_000)
        try ledger.append([event.pending(stream: id, actor: worker, device: device, recordedAt: clock.now())])
    }

    func photo() -> PhotoReference {
        PhotoReference(
            photoID: UUID(), sha256: Digest256(bytes: Array(repeating: 7, count: 32))!, size: 10, mediaType: "image/png"
        )
    }

    /// An inspection of template 11, answered; submitted unless `submit` is false.
    func inspection(photos: [PhotoReference] = [], submit: Bool = true) throws -> UUID {
        let template = try #require(try ledger.reference.template(id: "11"))
        let facility = try #require(try ledger.reference.facility(id: "101"))
        let id = UUID()
        try record(
            .start(
                StartInspection(
                    template: template,
                    templateAlreadyPinned: try ledger.pinnedTemplate(hash: template.contentHash) != nil,
                    facilityID: facility.id, facilityName: facility.name, areaID: nil, areaName: nil)), on: id)
        for (field, value) in [("2", "4"), ("3", "5"), ("5", "pass"), ("7", "yes"), ("8", "Good"), ("9", "Clean")] {
            try record(.setField(field: field, to: .text(value)), on: id)
        }
        for (photo, field) in zip(photos, ["10", "11"]) { try record(.capturePhoto(photo, for: .field(field)), on: id) }
        if submit { try record(.submit(followUpRequired: false), on: id) }
        return id
    }

    @Test func aFreshLedgerHasEverythingOnTheServer() throws {
        let standing = try SyncStanding.read(ledger)
        #expect(standing.serverHasEverything)
        #expect(standing.photos == 0)
        #expect(standing.lastSent == nil && standing.lastAttempt == nil)
    }

    @Test func aDraftIsNotOnTheServer() throws {
        _ = try inspection(photos: [photo()], submit: false)
        let standing = try SyncStanding.read(ledger)
        #expect(try ledger.outbox().isEmpty)
        #expect(!standing.serverHasEverything)
        #expect(standing.drafts == 1)
        #expect(standing.draftPhotos == 1)
        #expect(standing.photos == 1)
        #expect(standing.unsent == 0)
    }

    @Test func eachKindIsCountedAndTheLastSyncFound() throws {
        _ = try inspection(submit: false)
        let waiting = try inspection()
        let stalledPhoto = photo()
        let stalledOne = try inspection(photos: [stalledPhoto])
        let refused = try inspection()
        let sent = try inspection()
        try outcome(.inspectionAccepted(InspectionAccepted(serverID: "41")), on: sent)
        let sentAt = clock.now()
        for attempt in 1...SyncFailure.stalledAfterAttempts {
            try outcome(
                .syncAttemptFailed(
                    SyncAttemptFailed(
                        item: SyncItem(kind: .photo, id: stalledPhoto.photoID), attempt: attempt, error: "HTTP 503",
                        httpStatus: 503, willRetry: true, nextAttemptAt: clock.now())), on: stalledOne)
        }
        try outcome(
            .syncGaveUp(SyncGaveUp(item: SyncItem(kind: .inspection, id: refused), error: "HTTP 422: no such area")),
            on: refused)
        let attemptedAt = clock.now()

        let standing = try SyncStanding.read(ledger)
        #expect(standing.drafts == 1)
        // The waiting one, and the stalled photo's inspection, which waits for it.
        #expect(standing.waiting == [.inspection: 2])
        #expect(standing.stalled.map(\.item) == [SyncItem(kind: .photo, id: stalledPhoto.photoID)])
        #expect(standing.stalled.first?.attempts == SyncFailure.stalledAfterAttempts)
        #expect(standing.failed.map(\.item) == [SyncItem(kind: .inspection, id: refused)])
        #expect(standing.photos == 1)
        #expect(standing.unsent == 4)
        #expect(standing.lastSent == sentAt)
        #expect(standing.lastAttempt == attemptedAt)
        #expect(!standing.serverHasEverything)
        _ = waiting
    }

    /// Looked for near the log's head or, past that window, in each
    /// submitted inspection's stream: the same answer either way, and none
    /// for outcomes that never happened.
    @Test(arguments: [1, 2, 3, 5, 1000] as [UInt64])
    func theLastSyncIsFoundBeyondTheRecentWindow(window: UInt64) throws {
        let never = try SyncStanding.lastSync(
            ledger, drafts: Set(try ledger.summaries(.drafts).map(\.id)), window: window)
        #expect(never.sent == nil && never.attempt == nil)
        let sent = try inspection()
        try outcome(.inspectionAccepted(InspectionAccepted(serverID: "41")), on: sent)
        let sentAt = clock.now()
        let failing = try inspection()
        try outcome(
            .syncAttemptFailed(
                SyncAttemptFailed(
                    item: SyncItem(kind: .inspection, id: failing), attempt: 1, error: "HTTP 503", httpStatus: 503,
                    willRetry: true, nextAttemptAt: clock.now())), on: failing)
        let attemptedAt = clock.now()
        // Recording goes on after the sync, in drafts and submitted inspections.
        _ = try inspection(submit: false)
        _ = try inspection()
        let found = try SyncStanding.lastSync(
            ledger, drafts: Set(try ledger.summaries(.drafts).map(\.id)), window: window)
        #expect(found.sent == sentAt)
        #expect(found.attempt == attemptedAt)
    }
}
