import Foundation
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// An inspection's form as `jqc show` prints it, without `jqc`: each field
/// marked required or missing, what is still required, the score so far or
/// the score, the follow-up, issues and sync; person-written text on one
/// line, the JSON exact.
@Suite struct FormReportTests {
    /// A fresh ledger with the sample reference data, recording as Dana.
    struct Recorded {
        let temporary = TemporaryDirectory(prefix: "form-report")
        let ledger: InspectionLedger
        let clock = ManualClock()
        let id = UUID()

        init() throws {
            ledger = try InspectionLedger(
                storePath: temporary.appending("store"), photosPath: temporary.appending("photos"), access: .creating)
            let json = try JSONValue(
                parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
            try ledger.reference.replace(with: try ReferenceCache.Snapshot(json: json), at: clock.now())
            let template = try #require(try ledger.reference.template(id: "11"))
            let facility = try #require(try ledger.reference.facility(id: "101"))
            try record(
                .start(
                    StartInspection(
                        template: template, templateAlreadyPinned: false, facilityID: facility.id,
                        facilityName: facility.name, areaID: "1001", areaName: "Lobby restrooms")))
        }

        func record(_ command: InspectionCommand) throws {
            clock.advance(microseconds: 1_000_000)
            let state = try ledger.state(of: id) ?? InspectionState(id: id)
            try ledger.record(
                try state.decide(command), stream: id, expectedVersion: UInt64(state.eventCount),
                actor: Actor(id: "local:Dana", name: "Dana", verified: false), device: UUID(), at: clock.now())
        }

        func report() throws -> FormReport { FormReport(state: try #require(try ledger.state(of: id))) }
    }

    static let answered: [InspectionCommand] = [
        .setField(field: "2", to: .text("4")), .setField(field: "3", to: .text("5")),
        .setField(field: "5", to: .text("pass")),
    ]
    static let issue = UUID(uuidString: "5e5e5e5e-0000-4000-8000-000000000003")!

    /// A way an inspection stands, the lines its text must hold in order
    /// (among others), and the JSON members it must have.
    struct Standing: Sendable, CustomTestStringConvertible {
        let name: String
        let commands: [InspectionCommand]
        let lines: [String]
        let json: [String: JSONValue]
        var testDescription: String { name }
    }

    static let standings: [Standing] = [
        Standing(
            name: "a draft with one required answer",
            commands: [.setField(field: "2", to: .text("4"))],
            lines: [
                "  Restroom QC at Riverside Medical Center, Lobby restrooms", "", "== Restroom condition",
                " * [2] Floors (rating): 4", " ! [3] Toilets and urinals (rating): —",
                "   [4] Sinks and counters (rating): —", " ! [5] Soap dispensers stocked (pass_fail): —",
                "Still required: Toilets and urinals, Soap dispensers stocked", "Score so far: 80.00",
            ],
            json: [
                "status": .string("draft"), "missing_required": .array([.string("3"), .string("5")]),
                "score": .null, "score_so_far": .integer(80), "completed_at": .null,
                "area": .object(["id": .string("1001"), "name": .string("Lobby restrooms")]),
            ]),
        Standing(
            name: "submitted with a follow-up",
            commands: answered + [.submit(followUpRequired: true)],
            lines: [
                " * [5] Soap dispensers stocked (pass_fail): pass", "Score: ",
                "Follow-up: required (re-inspect with 'jqc start --reinspect ",
            ],
            json: [
                "status": .string("completed"), "missing_required": .array([]), "follow_up_required": .bool(true),
                "follow_up_outstanding": .bool(true),
            ]),
        Standing(
            name: "an issue flagged",
            commands: [.flagIssue(FlagIssue(issueID: issue, severity: "high", description: "Leak under sink"))],
            lines: ["Issues:", "  5e5e5e5e [high] Leak under sink"],
            json: ["photos": .array([])]),
        Standing(
            name: "an answer that would forge a line",
            commands: [.setField(field: "9", to: .text("clean\nSync: synced \u{1B}[2J"))],
            lines: ["   [9] Notes (textarea): clean\\nSync: synced \\u{1B}[2J"],
            json: [:]),
    ]

    @Test(arguments: standings)
    func theFormAsShown(_ standing: Standing) throws {
        let recorded = try Recorded()
        defer { recorded.ledger.close() }
        for command in standing.commands { try recorded.record(command) }
        let report = try recorded.report()
        let lines = report.text.components(separatedBy: "\n")
        #expect(lines[0] == "Inspection \(recorded.id.lowercased)  [\(report.state.status.rawValue)]")
        #expect(lines[2] == "  started \(try #require(report.state.startedAt).iso8601) by Dana")
        // Each expected line (or the start of one) in order.
        var next = lines.startIndex
        for expected in standing.lines {
            let found = lines[next...].firstIndex {
                $0 == expected || (expected.hasSuffix(" ") && $0.hasPrefix(expected))
            }
            #expect(found != nil, "\(expected) not after line \(next) of:\n\(report.text)")
            next = (found ?? next) + 1
        }
        #expect(!report.text.contains("\u{1B}"))
        let json = report.jsonValue
        #expect(json["id"]?.stringValue == recorded.id.lowercased)
        for (key, value) in standing.json { #expect(json[key] == value, "\(key)") }
        #expect(lines.last?.hasPrefix("Sync: \(SyncState.of(report.state).rawValue)") == true)
    }

    /// The JSON keeps what was written exactly; the text shows it escaped.
    @Test func theJSONKeepsAnAnswerExactly() throws {
        let recorded = try Recorded()
        defer { recorded.ledger.close() }
        try recorded.record(.setField(field: "9", to: .text("two\nlines")))
        let fields = try #require(try recorded.report().jsonValue["fields"]?.arrayValue)
        let notes = try #require(fields.first { $0["id"]?.stringValue == "9" })
        #expect(notes["value"] == .string("two\nlines"))
        #expect(notes["required"] == .bool(false))
        #expect(fields.allSatisfy { $0["type"]?.stringValue != "section" })
    }
}
