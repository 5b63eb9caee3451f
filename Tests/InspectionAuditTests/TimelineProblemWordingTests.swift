import Foundation
import Testing

@testable import InspectionAudit

/// The words of each problem of a timeline entry, as the text, HTML and
/// JSON reports print them (word for word as before they were cases).
@Suite struct TimelineProblemWordingTests {
    static let stream = UUID(uuidString: "0a1b2c3d-0000-4000-8000-00000000000f")!

    static let cases: [(TimelineProblem, String)] = [
        (
            .versionsMissing(first: 3, last: 3),
            "stream version 3 is missing: the stream index has no entry for them, so the events were removed with "
                + "their index entries"
        ),
        (
            .versionsMissing(first: 3, last: 5),
            "stream versions 3–5 are missing: the stream index has no entry for them, so the events were removed "
                + "with their index entries"
        ),
        (
            .recordRemoved(position: 9, version: 2),
            "the stream index names position 9 as version 2 of this inspection, but the log holds no record there: "
                + "it was removed"
        ),
        (.notARecord(position: 7, reason: "r"), "the bytes stored at position 7 are not a record (r)"),
        (
            .ofAnotherInspection(stream),
            "the record belongs to inspection 0a1b2c3d-0000-4000-8000-00000000000f, yet the stream index lists it here"
        ),
        (
            .undecodable(type: "inspection.field_set", schemaVersion: 2, why: "w"),
            "the inspection.field_set event (version 2) cannot be decoded: w"
        ),
    ]

    @Test(arguments: cases)
    func eachProblemIsWordedAsBefore(_ problem: TimelineProblem, _ words: String) {
        #expect(problem.description == words)
    }

    @Test func anEntrysProblemsAreJoinedInTheOrderFound() throws {
        var entry = TimelineEntry(
            position: 4, streamVersion: 4, record: nil, event: nil, summary: "s", changes: [], problems: [],
            hadNoEffect: false)
        #expect(entry.problem == nil)
        entry.problems = [Self.cases[4].0, Self.cases[5].0]
        #expect(entry.problem == Self.cases[4].1 + "; " + Self.cases[5].1)
    }
}
