import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `receive` races another recording command as every recording command
/// does: a command recorded to the same inspection between the reception's
/// read snapshot and its append makes it read, plan and decide again, and
/// both are recorded.
@Suite struct ReceptionRaceTests {
    typealias Device = HandoverUseCaseTests.Device

    /// A shares its draft with B, then answers Floors again and shares once more.
    static func secondCopy() throws -> (a: Device, b: Device, id: UUID, file: String) {
        let a = try Device(actor: "Ana")
        let b = try Device(actor: "Ben")
        let id = try a.startInspection()
        try a.record([.setField(field: "Floors", to: .text("4"))], on: id)
        func share(_ name: String) throws -> String {
            let file = a.temporary.appending(name)
            _ = try Handover(ledger: a.ledger, identity: a.identity).write(
                inspection: id, to: "Ben", mode: .share, output: file, actor: a.actor, clock: a.clock)
            return file
        }
        _ = try Reception(ledger: b.ledger, device: b.device).receive(
            file: try share("first.json"), actor: b.actor, clock: b.clock)
        try a.record([.setField(field: "Floors", to: .text("2"))], on: id)
        return (a, b, id, try share("second.json"))
    }

    /// What races the reception on B, and what B's form must hold after both.
    struct Race: Sendable, CustomStringConvertible {
        var description: String
        var commands: [InspectionCommand]
        var expected: [FieldID: FieldValue]
        /// How many attempts the racing command disturbs (each one lost).
        var times: Int
    }

    static let races: [Race] = [
        Race(
            description: "another field set once", commands: [.setField(field: "Toilets and urinals", to: .text("3"))],
            expected: ["2": .rating(2), "3": .rating(3)], times: 1),
        Race(
            description: "the same field set on three attempts",
            commands: [.setField(field: "Odor", to: .text("Poor"))],
            expected: ["2": .rating(2), "8": .option("Poor")], times: 3),
    ]

    @Test(arguments: races)
    func aCommandRecordedBetweenTheReadAndTheAppendDoesNotFailTheReception(_ race: Race) throws {
        // A is kept to the end: its directory holds the file.
        let (a, b, id, file) = try Self.secondCopy()
        defer { withExtendedLifetime(a) {} }
        let before = try #require(try b.ledger.state(of: id)).eventCount
        var reception = Reception(ledger: b.ledger, device: b.device)
        let attempts = Locked(0)
        reception.beforeAppending = {
            let attempt = attempts.withLock { count in
                count += 1
                return count
            }
            // A set that changes nothing records nothing: alternate the
            // commands' own clears so each disturbing attempt records.
            guard attempt <= race.times else { return }
            if attempt > 1 {
                let cleared = race.commands.compactMap { command -> InspectionCommand? in
                    guard case .setField(let field, _) = command else { return nil }
                    return .clearField(field: field)
                }
                try b.record(cleared, on: id)
            }
            try b.record(race.commands, on: id)
        }
        let received = try reception.receive(file: file, actor: b.actor, clock: b.clock)
        #expect(received.recorded && received.merged)
        #expect(attempts.withLock { $0 } == race.times + 1)
        let after = try #require(try b.ledger.state(of: id))
        for (field, value) in race.expected { #expect(after.values[field] == value, "field \(field)") }
        let types = try b.ledger.log.records(inStream: id).dropFirst(before).map(\.type)
        #expect(types.filter { $0 == InspectionEventType.received.rawValue }.count == 1, "\(types)")
        #expect(types.filter { $0 == InspectionEventType.fieldSet.rawValue }.count == race.times, "\(types)")
        #expect(types.last == InspectionEventType.received.rawValue, "\(types)")
    }
}
