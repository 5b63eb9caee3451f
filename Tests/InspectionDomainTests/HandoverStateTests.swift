import Foundation
import InspectionDomain
import LedgerCore
import Testing

/// `inspection.handed_over` and `inspection.received` in the fold and in
/// `decide`: the sender stops, the receiver folds the sender's records.
@Suite struct HandoverStateTests {
    static let sender = Actor(id: "local:ana", name: "Ana", verified: false)
    static let receiver = Actor(id: "local:ben", name: "Ben", verified: false)
    static let senderDevice = Samples.uuid(500)

    /// A draft with an answer, a photo and an issue, as the sender recorded it.
    static func senderDraft() throws -> Inspection {
        var inspection = try Inspection.started(try Samples.restroom())
        try inspection.run(.setField(field: "2", to: .text("4")))
        try inspection.run(.capturePhoto(Samples.photo(1), for: .inspection))
        try inspection.run(
            .flagIssue(FlagIssue(issueID: Samples.uuid(60), severity: "high", description: "Leaking tap", photo: nil)))
        return inspection
    }

    /// The sender's records of `events`, as its log would encode them.
    static func records(_ events: [InspectionEvent], stream: UUID = Samples.uuid(1)) -> [[UInt8]] {
        events.enumerated().map { index, event in
            let pending = event.pending(
                stream: stream, actor: sender, device: senderDevice, recordedAt: Samples.time(index + 1))
            return EventRecord(position: UInt64(index + 10), streamVersion: UInt64(index + 1), event: pending)
                .encoded()
        }
    }

    static func senderEvents() throws -> [InspectionEvent] {
        let template = try Samples.restroom()
        var events = try InspectionState(id: Samples.uuid(1)).decide(
            .start(
                StartInspection(
                    template: template, templateAlreadyPinned: false, facilityID: "3", facilityName: "Harbor Tower")))
        var state = InspectionState(id: Samples.uuid(1))
        for event in events { state.apply(event, recordedAt: Samples.time(0), actor: sender) }
        for command: InspectionCommand in [
            .setField(field: "2", to: .text("4")), .capturePhoto(Samples.photo(1), for: .inspection),
            .flagIssue(FlagIssue(issueID: Samples.uuid(60), severity: "high", description: "Leaking tap", photo: nil)),
            .handOver(mode: .handover, to: "Ben"),
        ] {
            let decided = try state.decide(command)
            for event in decided { state.apply(event, recordedAt: Samples.time(1), actor: sender) }
            events += decided
        }
        return events
    }

    static let refusedAfterHandover: [InspectionCommand] = [
        .setField(field: "2", to: .text("5")), .clearField(field: "2"),
        .capturePhoto(Samples.photo(2), for: .inspection), .submit(followUpRequired: false),
        .discard(reason: nil),
        .flagIssue(FlagIssue(issueID: Samples.uuid(61), severity: "low", description: "Dust", photo: nil)),
    ]

    @Test(arguments: refusedAfterHandover)
    func theSenderRefusesEveryRecordingNamingWhereItWent(_ command: InspectionCommand) throws {
        var inspection = try Self.senderDraft()
        try inspection.run(.handOver(mode: .handover, to: "Ben's tablet"))
        #expect(inspection.state.isHandedAway)
        #expect(throws: DomainError.self) { try inspection.state.decide(command) }
        do {
            _ = try inspection.state.decide(command)
        } catch {
            let named = { if case .handedOver(_, to: "\"Ben's tablet\"", at: _) = error { true } else { false } }()
            #expect(named, "\(error)")
        }
    }

    @Test func handingOverAgainRecordsNothing() throws {
        var inspection = try Self.senderDraft()
        #expect(try inspection.run(.handOver(mode: .handover, to: nil)).count == 1)
        #expect(try inspection.run(.handOver(mode: .handover, to: "someone else")).isEmpty)
    }

    @Test func aShareKeepsTheRightToRecord() throws {
        var inspection = try Self.senderDraft()
        try inspection.run(.handOver(mode: .share, to: nil))
        #expect(!inspection.state.isHandedAway)
        #expect(try inspection.run(.setField(field: "2", to: .text("5"))).count == 1)
    }

    @Test(arguments: [InspectionStatus.notStarted, .completed, .discarded])
    func onlyADraftIsHandedOver(_ status: InspectionStatus) throws {
        var inspection = try Self.senderDraft()
        switch status {
        case .notStarted: inspection = Inspection(id: Samples.uuid(3))
        case .completed: inspection.state.status = .completed
        case .discarded: try inspection.run(.discard(reason: nil))
        case .draft: break
        }
        #expect(throws: DomainError.self) { try inspection.state.decide(.handOver(mode: .handover, to: nil)) }
    }

    @Test func aReceptionFoldsTheSendersRecordsAndTheInspectionGoesOnHere() throws {
        let template = try Samples.restroom()
        var state = InspectionState(id: Samples.uuid(1))
        let received = Samples.received(Self.records(try Self.senderEvents()))
        state.apply(.received(received), recordedAt: Samples.time(30), actor: Self.receiver)
        #expect(state.eventCount == 1, "carried records are not versions of this stream")
        #expect(state.status == .draft)
        #expect(state.template == template)
        #expect(state.values["2"] == .rating(4))
        #expect(state.photos.map(\.photo) == [Samples.photo(1)])
        #expect(state.issues.map(\.description) == ["Leaking tap"])
        #expect(state.startedBy == Self.sender)
        #expect(!state.isHandedAway && state.handedOver == nil)
        #expect(state.receivedFrom.map(\.fromDevice) == [Samples.uuid(77)])
        // The receiver records on.
        let set = try state.decide(.setField(field: "2", to: .text("5")))
        #expect(set.count == 1)
        // The same records received again are folded once (union by event id).
        var twice = state
        twice.apply(.received(received), recordedAt: Samples.time(31), actor: Self.receiver)
        #expect(twice.values == state.values && twice.photos == state.photos && twice.issues == state.issues)
        #expect(twice.carriedEventIDs == state.carriedEventIDs)
    }

    @Test func aRecordOfAnotherStreamIsNotFolded() throws {
        var state = InspectionState(id: Samples.uuid(1))
        let foreign = Self.records(try Self.senderEvents(), stream: Samples.uuid(2))
        state.apply(.received(Samples.received(foreign)), recordedAt: Samples.time(30), actor: Self.receiver)
        #expect(state.status == .notStarted)
        #expect(state.carriedEventIDs.isEmpty)
    }
}
