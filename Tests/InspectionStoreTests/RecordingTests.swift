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
