import Foundation
import InspectionDomain
import Testing

@testable import SyncWorker

/// `InspectionMatch`: which record of the server's history is the inspection
/// whose answer was lost, from what the reference backend's summary carries.
@Suite struct InspectionMatchTests {
    /// The body `SyncRequests.inspection` sends (microseconds).
    static let body = JSONValue.object([
        .init("client_id", .string("3d15a2b0-0000-4000-8000-000000000001")),
        .init("template_id", .integer(11)), .init("facility_id", .integer(101)), .init("area_id", .integer(1001)),
        .init("form_data", .object([])), .init("overall_score", .number("52.5")),
        .init("started_at", .string("2026-03-01T09:00:00.123456Z")),
        .init("completed_at", .string("2026-03-01T09:30:00.987654Z")),
        .init("parent_inspection_id", .integer(7)), .init("follow_up_required", .bool(true)),
    ])

    /// The reference backend's summary of that inspection (milliseconds, no client_id, no started_at).
    static func summary(_ changes: [String: JSONValue?] = [:], id: Int = 41) -> JSONValue {
        var members: [JSONValue.Member] = [
            .init("id", .integer(id)), .init("template_id", .integer(11)),
            .init("template_name", .string("Restroom QC")),
            .init("facility_id", .integer(101)), .init("facility_name", .string("North Plant")),
            .init("area_id", .integer(1001)), .init("area_name", .string("Restrooms")),
            .init("inspector_id", .integer(1)), .init("inspector_name", .string("Dana")),
            .init("status", .string("completed")), .init("overall_score", .number("52.5")),
            .init("completed_at", .string("2026-03-01T09:30:00.987Z")),
            .init("created_at", .string("2026-03-01T09:30:01.000Z")),
            .init("parent_inspection_id", .integer(7)), .init("follow_up_required", .bool(true)),
            .init("form_data", .object([])),
        ]
        for (key, value) in changes {
            members.removeAll { $0.key == key }
            if let value { members.append(.init(key, value)) }
        }
        return .object(members)
    }

    struct Case: CustomStringConvertible, Sendable {
        var description: String
        var changes: [String: JSONValue?]
        var matches: Bool
    }

    static let cases: [Case] = [
        Case(description: "the summary as the reference backend shows it", changes: [:], matches: true),
        Case(
            description: "ids as text", changes: ["template_id": .string("11"), "facility_id": .string("101")],
            matches: true),
        Case(description: "another template", changes: ["template_id": .integer(12)], matches: false),
        Case(description: "another facility", changes: ["facility_id": .integer(102)], matches: false),
        Case(description: "another area", changes: ["area_id": .integer(1002)], matches: false),
        Case(description: "no area where ours has one", changes: ["area_id": .null], matches: false),
        Case(
            description: "completed a millisecond later",
            changes: ["completed_at": .string("2026-03-01T09:30:00.989Z")], matches: false),
        Case(
            description: "completed time rounded up", changes: ["completed_at": .string("2026-03-01T09:30:00.988Z")],
            matches: true),
        Case(
            description: "completed time in whole seconds", changes: ["completed_at": .string("2026-03-01T09:30:00Z")],
            matches: true),
        Case(
            description: "whole seconds, another second", changes: ["completed_at": .string("2026-03-01T09:30:02Z")],
            matches: false),
        Case(
            description: "completed time with microseconds",
            changes: ["completed_at": .string("2026-03-01T09:30:00.987654+00:00")], matches: true),
        Case(
            description: "completed time without a zone (UTC)",
            changes: ["completed_at": .string("2026-03-01T09:30:00.987")], matches: true),
        Case(description: "completed time unreadable", changes: ["completed_at": .string("yesterday")], matches: false),
        Case(description: "no completed time", changes: ["completed_at": nil], matches: false),
        Case(
            description: "a summary without area, score, parent or badge (not compared)",
            changes: ["area_id": nil, "overall_score": nil, "parent_inspection_id": nil, "follow_up_required": nil],
            matches: true),
        Case(description: "the template left out (not compared)", changes: ["template_id": nil], matches: true),
        Case(description: "another score", changes: ["overall_score": .number("48.0")], matches: false),
        Case(description: "the score as a whole number", changes: ["overall_score": .number("52")], matches: true),
        Case(description: "the score with more digits", changes: ["overall_score": .number("52.50")], matches: true),
        Case(description: "no score where ours has one", changes: ["overall_score": .null], matches: false),
        Case(
            description: "the follow-up badge cleared by a re-inspection",
            changes: ["follow_up_required": .bool(false)], matches: true),
        Case(description: "another parent", changes: ["parent_inspection_id": .integer(8)], matches: false),
        Case(description: "no parent where ours has one", changes: ["parent_inspection_id": .null], matches: false),
        Case(
            description: "started_at shown and the same", changes: ["started_at": .string("2026-03-01T09:00:00.123Z")],
            matches: true),
        Case(
            description: "started_at shown and another", changes: ["started_at": .string("2026-03-01T08:00:00.123Z")],
            matches: false),
        Case(
            description: "our client_id (the contract's history)",
            changes: ["client_id": .string("3D15A2B0-0000-4000-8000-000000000001"), "overall_score": .number("1")],
            matches: true),
        Case(
            description: "another client_id", changes: ["client_id": .string("3d15a2b0-0000-4000-8000-000000000002")],
            matches: false),
    ]

    @Test(arguments: cases)
    func aSummaryMatchesOnlyWhenEverythingItCarriesAgrees(_ example: Case) {
        #expect(InspectionMatch.matches(Self.summary(example.changes), Self.body) == example.matches)
    }

    @Test func aRecordShowingAFollowUpIsNotOneSentWithout() {
        var members = Self.body.objectMembers
        members.removeAll { $0.key == "follow_up_required" }
        members.append(.init("follow_up_required", .bool(false)))
        #expect(!InspectionMatch.matches(Self.summary(), .object(members)))
        #expect(InspectionMatch.matches(Self.summary(["follow_up_required": .bool(false)]), .object(members)))
    }

    @Test func anInspectionWithoutScoreAreaOrParentMatchesNullsOnly() {
        var members = Self.body.objectMembers
        for key in ["overall_score", "area_id", "parent_inspection_id"] {
            members.removeAll { $0.key == key }
            members.append(.init(key, .null))
        }
        let nulls: [String: JSONValue?] = ["overall_score": .null, "area_id": .null, "parent_inspection_id": .null]
        #expect(InspectionMatch.matches(Self.summary(nulls), .object(members)))
        #expect(!InspectionMatch.matches(Self.summary(), .object(members)))
    }

    struct OutcomeCase: CustomStringConvertible, Sendable {
        var description: String
        var records: [JSONValue]
        var outcome: InspectionMatch.Outcome
    }

    static let outcomes: [OutcomeCase] = [
        OutcomeCase(description: "an empty history", records: [], outcome: .none),
        OutcomeCase(
            description: "only other inspections",
            records: [
                summary(["facility_id": .integer(102)], id: 40), summary(["overall_score": .number("90")], id: 39),
            ],
            outcome: .none),
        OutcomeCase(
            description: "one among others",
            records: [summary(["facility_id": .integer(102)], id: 40), summary(id: 41)], outcome: .unique("41")),
        OutcomeCase(
            description: "the same record on two pages", records: [summary(id: 41), summary(id: 41)],
            outcome: .unique("41")),
        OutcomeCase(
            description: "two alike",
            records: [summary(id: 42), summary(["facility_id": .integer(102)], id: 40), summary(id: 41)],
            outcome: .ambiguous(["41", "42"])),
    ]

    @Test(arguments: outcomes)
    func theOutcomeIsUniqueOnlyForOneMatchingRecord(_ example: OutcomeCase) {
        #expect(InspectionMatch.outcome(of: Self.body, in: example.records) == example.outcome)
    }

    @Test(
        arguments: [
            ("2026-03-01T09:30:00Z", 1_000_000), ("2026-03-01T09:30:00.9Z", 100_000),
            ("2026-03-01T09:30:00.987Z", 1_000),
            ("2026-03-01T09:30:00.987654Z", 1), ("2026-03-01T09:30:00.987654321Z", 1),
        ] as [(String, Int64)])
    func theServersPrecisionIsReadFromItsText(_ text: String, _ unit: Int64) {
        #expect(InspectionMatch.timeUnitMicroseconds(of: text) == unit)
    }

    @Test func noUniqueMatchSaysWhatWasFoundAndWhatToDo() {
        let error = APIError.noUniqueMatch(ids: ["42", "41"])
        #expect(
            error.serverMessage.hasPrefix(
                "2 records on the server (ids 42, 41) match this inspection by template, facility, area, completion "
                    + "time, score, follow-up and parent"))
        #expect(error.serverMessage.contains("so it was not sent again"))
        #expect(error.serverMessage.contains("'jqc sync dismiss ID --reason TEXT'"))
        #expect(error.mayHaveBeenApplied, "looked up again at the next sync, never sent blindly")
        #expect(error.status == nil)
    }
}

extension JSONValue {
    fileprivate var objectMembers: [JSONValue.Member] {
        if case .object(let members) = self { return members }
        return []
    }
}
