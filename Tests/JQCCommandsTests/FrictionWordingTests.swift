import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// Issue 23's smaller frictions, through the built `jqc`, each with the
/// words a new inspector reads: listing filters, `templates show` whole,
/// a facility without areas, an unanswered rating, `pull --clear`, and
/// `jqc log` on the device's own stream.
@Suite struct FrictionWordingTests {
    let directory = TemporaryDirectory(prefix: "friction")
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try #require(try jqc("init").status == 0)
        try #require(try jqc("pull", "--from", SampleReference.path).status == 0)
    }

    func ok(_ arguments: String...) throws -> ProcessResult {
        let result = try jqc.run(arguments)
        #expect(result.status == 0, "jqc \(arguments) failed: \(result.stderr)")
        return result
    }

    func start(_ who: String, _ arguments: String...) throws -> String {
        let result = try jqc.run(["--as", who, "--json", "start"] + arguments)
        let object = try #require(try JSONValue(parsing: result.stdout)["id"]?.stringValue, "\(result.stderr)")
        return String(object.prefix(8))
    }

    /// A completed Restroom QC by Dana at Riverside's lobby restrooms, a
    /// draft by Sam at Harbor Tower, with one high and one low issue.
    func sample() throws -> (completed: String, draft: String) {
        let completed = try start("Dana", "-t", "11", "-f", "101", "--area", "Lobby restrooms")
        for (field, value) in [("2", "4"), ("3", "5"), ("5", "pass")] {
            _ = try ok("--as", "Dana", "set", completed, field, value)
        }
        _ = try ok("--as", "Dana", "flag", completed, "-s", "high", "-d", "Leaking tap")
        _ = try ok("--as", "Dana", "submit", completed)
        let draft = try start("Sam", "-t", "22", "-f", "102")
        _ = try ok("--as", "Sam", "flag", draft, "-s", "low", "-d", "Loose tile")
        return (completed, draft)
    }

    func listed(_ arguments: [String]) throws -> [String] {
        let result = try jqc.run(["--json"] + arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try #require(try JSONValue(parsing: result.stdout).arrayValue).compactMap {
            $0["id"]?.stringValue.map { String($0.prefix(8)) }
        }
    }

    @Test func inspectionsAreFilteredByFacilityAreaStatusTimeAndInspector() throws {
        let (completed, draft) = try sample()
        let cases: [([String], [String])] = [
            ([], [completed, draft]),
            (["--facility", "101"], [completed]), (["--facility", "harbor tower"], [draft]),
            (["--area", "lobby restrooms"], [completed]), (["--status", "draft"], [draft]),
            (["--status", "Completed"], [completed]), (["--inspector", "sam"], [draft]),
            (["--since", "2000-01-01"], [completed, draft]), (["--until", "2000-01-01"], []),
            (["--since", "2999-01-01T00:00:00Z"], []), (["--facility", "101", "--status", "draft"], []),
        ]
        for (filters, expected) in cases {
            #expect(try listed(["inspections"] + filters) == expected, "\(filters)")
        }
        let none = try ok("inspections", "--facility", "Harbor Tower", "--status", "completed")
        #expect(none.stdout == "None of the 2 inspections matches facility \"Harbor Tower\", status completed.\n")
        let refused = try jqc("inspections", "--status", "open")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--status"), "\(refused.stderr)")
        #expect(refused.stderr.contains("expected draft or completed"), "\(refused.stderr)")
        let position = try jqc("inspections", "--since", "42")
        #expect(position.status == 2)
        #expect(position.stderr.contains("expected a time (RFC 3339"), "\(position.stderr)")
    }

    @Test func issuesAreFilteredBySeverityAndFacility() throws {
        _ = try sample()
        func descriptions(_ filters: String...) throws -> [String] {
            let result = try jqc.run(["--json", "issues"] + filters)
            return try #require(try JSONValue(parsing: result.stdout).arrayValue).compactMap {
                $0["description"]?.stringValue
            }
        }
        #expect(try descriptions() == ["Leaking tap", "Loose tile"])
        #expect(try descriptions("--severity", "HIGH") == ["Leaking tap"])
        #expect(try descriptions("--facility", "Harbor Tower") == ["Loose tile"])
        #expect(try descriptions("--facility", "102", "--severity", "high") == [])
        let none = try ok("issues", "--severity", "critical")
        #expect(none.stdout == "None of the 2 issues matches severity critical.\n")
        let refused = try jqc("issues", "--severity", "urgent")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("expected low, medium, high or critical"), "\(refused.stderr)")
    }

    @Test func templatesShowListsWholeLabelsAndEveryOption() throws {
        let restroom = try ok("templates", "show", "Restroom QC").stdout
        #expect(restroom.contains("Fields (whole labels, every option):"))
        #expect(restroom.contains("  3   Toilets and urinals — rating 1–5 (0 leaves it unanswered), required"))
        #expect(restroom.contains("  8   Odor — radio: Good, Acceptable, Poor"))
        #expect(restroom.contains("  5   Soap dispensers stocked — pass_fail: pass, fail, required"))
        let office = try ok("templates", "show", "22").stdout
        #expect(office.contains("  7   Areas covered — checkbox_group: Desks, Kitchenette, Conference rooms, Lobby"))
        #expect(
            office.contains("  1   Complete every section. Ratings: 1 poor – 5 excellent. (label, nothing to answer)"))
    }

    @Test func aFacilityWithoutAreasSaysSo() throws {
        var reference = try JSONValue(
            parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
        if case .object(var members) = reference, let index = members.firstIndex(where: { $0.key == "facilities" }),
            case .array(var facilities) = members[index].value
        {
            facilities.append(
                .object([.init("id", .integer(103)), .init("name", .string("Depot")), .init("areas", .array([]))]))
            members[index].value = .array(facilities)
            reference = .object(members)
        }
        let file = directory.appending("reference.json")
        try reference.serialized().write(toFile: file, atomically: true, encoding: .utf8)
        _ = try ok("pull", "--from", file)
        let refused = try jqc("--as", "Dana", "start", "-t", "11", "-f", "103", "--area", "Yard")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("It has no areas: start without --area."), "\(refused.stderr)")
        #expect(!refused.stderr.contains("Its areas: ."))
    }

    @Test func anUnansweredRatingShowsADash() throws {
        let id = try start("Dana", "-t", "11", "-f", "101")
        _ = try ok("--as", "Dana", "set", id, "Floors", "0")
        _ = try ok("--as", "Dana", "set", id, "Toilets and urinals", "3")
        let shown = try ok("show", id).stdout
        #expect(shown.contains("[2] Floors (rating): —"), "\(shown)")
        #expect(shown.contains("[3] Toilets and urinals (rating): 3"))
        let log = try ok("log", "--inspection", id).stdout
        #expect(log.contains("set Floors (2) = — (unanswered)"), "\(log)")
    }

    @Test func pullClearEmptiesTheCacheAndKeepsRecordedInspections() throws {
        let (completed, _) = try sample()
        let cleared = try ok("pull", "--clear")
        #expect(
            cleared.stdout
                == "Cleared the reference cache (2 facilities, 2 templates). Recorded inspections keep the templates "
                + "they pinned; 'jqc pull' fetches them again.\n")
        #expect(try ok("templates").stdout.hasPrefix("No templates yet"))
        #expect(try ok("show", completed).stdout.contains("Toilets and urinals"), "the pinned template is kept")
        let both = try jqc("pull", "--clear", "--from", SampleReference.path)
        #expect(both.status == 2)
        #expect(both.stderr.contains("--from with --clear"), "\(both.stderr)")
    }

    @Test func theLogWordsTheDevicesOwnStream() throws {
        _ = try ok("checkpoint")  // publishes the device's key first
        let log = try ok("log").stdout
        #expect(log.contains("published the device's signing key: ed25519 key "), "\(log)")
        #expect(!log.contains("does not know"))
    }
}
