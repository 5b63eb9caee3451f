import Foundation
import InspectionDomain
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionStore

/// `InspectionLedger.record`: decide, append with the expected stream
/// version, decide again when another writer got there first.
@Suite struct RecordingTests {
    @Test func aBatchIsRecordedInOneCommitOrNotAtAll() throws {
        let directory = TemporaryDirectory()
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let id = try recorder.start(template: "11")
        let before = try recorder.ledger.log.read { try $0.count() }
        let recorded = try recorder.ledger.record(
            [.setField(field: "Notes", to: .text("one")), .setField(field: "Notes", to: .text("two"))], on: id,
            by: recorder.actor, device: recorder.device, clock: recorder.clock)
        #expect(recorded.events.count == 2)
        #expect(try recorder.ledger.log.read { try $0.count() } == before + 2)
        let refused = #expect(throws: RecordingError.self) {
            try recorder.ledger.record(
                [
                    .setField(field: "Notes", to: .text("three")), .setField(field: "No such field", to: .text("x")),
                    .setField(field: "Floors", to: .text("banana")),
                ], on: id, by: recorder.actor, device: recorder.device, clock: recorder.clock)
        }
        guard case .batchRefused(_, let refusals, let accepted) = refused else {
            Issue.record("expected a refused batch, got \(String(describing: refused))")
            return
        }
        #expect(refusals.count == 2 && accepted == 1)
        #expect(try recorder.ledger.log.read { try $0.count() } == before + 2)
    }

    @Test func aWriterThatGotThereFirstMakesTheCommandsDecidedAgain() throws {
        let directory = TemporaryDirectory()
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let id = try recorder.start(template: "11")
        var raced = false
        let recorded = try recorder.ledger.record(
            [.setField(field: "Notes", to: .text("mine"))], on: id, by: recorder.actor, device: recorder.device,
            clock: recorder.clock,
            before: {
                guard !raced else { return }
                raced = true
                try recorder.perform(.setField(field: "Floors", to: .text("2")), on: id)
            })
        let state = try #require(try recorder.ledger.state(of: id))
        #expect(recorded.state.eventCount == state.eventCount)
        #expect(state.values[FieldID(rawValue: "9")] == .text("mine"))
        #expect(state.values[FieldID(rawValue: "2")] != nil)
    }

    @Test func commandsThatNoLongerApplyAfterTheRaceAreRefusedSayingSo() throws {
        let directory = TemporaryDirectory()
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let id = try recorder.start(template: "11")
        try recorder.ledger.record(
            [.setField(field: "Floors", to: .text("3"))], on: id, by: recorder.actor, device: recorder.device,
            clock: recorder.clock)
        var raced = false
        let error = #expect(throws: RecordingError.self) {
            try recorder.ledger.record(
                [.setField(field: "Notes", to: .text("late"))], on: id, by: recorder.actor, device: recorder.device,
                clock: recorder.clock,
                before: {
                    guard !raced else { return }
                    raced = true
                    try recorder.perform(.discard(reason: "wrong facility"), on: id)
                })
        }
        guard case .noLongerApplies = error else {
            Issue.record("expected noLongerApplies, got \(String(describing: error))")
            return
        }
        #expect(try recorder.ledger.state(of: id)?.values[FieldID(rawValue: "9")] == nil)
    }

    /// Batches `record` decides and appends, each on the inspection the
    /// ones before it left (the last two on a re-inspection of it).
    enum Batch: String, CaseIterable, Sendable {
        case start, answers, clearAndAnswer, photoAndIssue, submitWithFollowUp, reinspectionStart
        case reinspectionSubmit

        /// The stream the batch records to and its commands.
        func commands(_ recorder: Recorder, _ id: UUID, child: UUID, _ random: inout SeededRandom) throws
            -> (on: UUID, [InspectionCommand])
        {
            switch self {
            case .start:
                let template = try #require(try recorder.ledger.reference.template(id: "11"))
                let facility = try #require(try recorder.ledger.reference.facility(id: "101"))
                let pinned = try recorder.ledger.pinnedTemplate(hash: template.contentHash) != nil
                let start = StartInspection(
                    template: template, templateAlreadyPinned: pinned, facilityID: facility.id,
                    facilityName: facility.name)
                return (id, [.start(start)])
            case .answers:
                return (
                    id,
                    [
                        .setField(field: "Notes", to: .text("one")), .setField(field: "Floors", to: .text("3")),
                        .setField(field: "Notes", to: .text("two")),
                    ]
                )
            case .clearAndAnswer:
                return (id, [.clearField(field: "Notes"), .setField(field: "Notes", to: .text("three"))])
            case .photoAndIssue:
                return (
                    id,
                    [
                        .flagIssue(FlagIssue(issueID: UUID(), severity: "high", description: "leak", photo: nil)),
                        .capturePhoto(recorder.photo(), for: .inspection),
                    ]
                )
            case .submitWithFollowUp, .reinspectionSubmit:
                let stream = self == .submitWithFollowUp ? id : child
                let state = try #require(try recorder.ledger.state(of: stream))
                var commands: [InspectionCommand] = []
                for field in state.missingRequiredFields() where !field.type.holdsPhoto {
                    let answer = ViewPropertyTests.answer(for: field, &random)
                    commands.append(.setField(field: field.id.rawValue, to: .text(answer)))
                }
                return (stream, commands + [.submit(followUpRequired: self == .submitWithFollowUp)])
            case .reinspectionStart:
                let parent = try #require(try recorder.ledger.state(of: id))
                return (child, [.start(try StartInspection.reinspection(of: parent))])
            }
        }
    }

    /// The state `record` answers, which the views took for each record, is
    /// the state the log folds to: same device, stamps, answers, photos,
    /// issues and closings (a debug build also checks it record by record).
    @Test func theStateRecordedIsTheStateTheLogFoldsTo() throws {
        let directory = TemporaryDirectory()
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let id = UUID()
        let child = UUID()
        var random = SeededRandom(seed: 32)
        for batch in Batch.allCases {
            recorder.clock.advance(microseconds: 1_000)
            let (stream, commands) = try batch.commands(recorder, id, child: child, &random)
            let recorded = try recorder.ledger.record(
                commands, on: stream, by: recorder.actor, device: recorder.device, clock: recorder.clock)
            #expect(!recorded.events.isEmpty, "\(batch)")
            let folded = try #require(try recorder.ledger.state(of: stream))
            #expect(recorded.state == folded, "\(batch): the decided state is not the log's")
            #expect(recorded.state.device == recorder.device, "\(batch)")
        }
        // The re-inspection's submit cleared the parent's follow-up in the views too.
        #expect(try recorder.ledger.summary(of: id)?.followUpResolvedBy == child)
        #expect(try recorder.ledger.compareViews().allSatisfy { $0.isEmpty })
    }

    @Test func aWriterThatAlwaysWinsEndsTheAttempts() throws {
        let directory = TemporaryDirectory()
        let recorder = try Recorder(directory: directory)
        defer { recorder.ledger.close() }
        let id = try recorder.start(template: "11")
        var round = 0
        let error = #expect(throws: RecordingError.self) {
            try recorder.ledger.record(
                [.setField(field: "Notes", to: .text("mine"))], on: id, by: recorder.actor, device: recorder.device,
                clock: recorder.clock,
                before: {
                    round += 1
                    try recorder.perform(.setField(field: "Notes", to: .text("theirs \(round)")), on: id)
                })
        }
        guard case .keptChanging(_, let attempts) = error else {
            Issue.record("expected keptChanging, got \(String(describing: error))")
            return
        }
        #expect(attempts == InspectionLedger.recordingAttempts)
        #expect(round == InspectionLedger.recordingAttempts)
    }
}
