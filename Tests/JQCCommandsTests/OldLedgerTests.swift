import Foundation
import LedgerTestSupport
import Testing

/// A ledger written by an earlier jqc (`Tests/Fixtures/ledger-format-1`, see
/// its README) opens with this one: its store and views are upgraded, it
/// verifies, the digest handed out then still verifies, and every listing
/// and form is what that jqc printed. A change that breaks the ledgers
/// already on inspectors' devices fails here.
@Suite struct OldLedgerTests {
    static let fixture = Products.repositoryFile("Tests/Fixtures/ledger-format-1")
    let directory = TemporaryDirectory(prefix: "old-ledger")
    let jqc: JQCRunner

    init() throws {
        let ledger = directory.appending("ledger")
        let copy = try ProcessRun.run("/bin/cp", ["-R", Self.fixture + "/ledger", ledger])
        #expect(copy.status == 0, "\(copy.stderr)")
        jqc = JQCRunner(ledger: ledger)
    }

    static func expected(_ name: String) throws -> Any {
        try JSONSerialization.jsonObject(
            with: try Data(contentsOf: URL(fileURLWithPath: fixture + "/expected/" + name)))
    }

    func json(_ arguments: String...) throws -> (value: Any, stderr: String) {
        let result = try jqc.run(["--json"] + arguments)
        #expect(result.status == 0, "jqc \(arguments) failed: \(result.stderr)")
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)), result.stderr)
    }

    @Test func opensUpgradesRebuildsVerifiesAndListsWhatWasRecorded() throws {
        // Before anything rebuilds them, the views are those of the old code.
        let before = try #require(try json("views").value as? [String: Any])
        let views = try #require(before["views"] as? [[String: Any]])
        #expect(views.count == 7)
        #expect(views.allSatisfy { $0["stale"] as? Bool == true })
        #expect(views.dropLast().allSatisfy { $0["stored_version"] as? Int == 1 })
        // The receptions view came after that jqc: no table, never built.
        #expect(views.last?["name"] as? String == "receptions" && views.last?["stored_version"] is NSNull)
        // What this code's rebuild would do to them: rewrite them all (stale),
        // with the same content in every row (views v2 only add checksums).
        let data = jqc.ledger + "/store/data.mdb"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: data))
        let dry = try jqc.run(["--json", "rebuild", "--dry-run"])
        #expect(dry.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect(report["changes"] as? Bool == true)
        for view in report["views"] as? [[String: Any]] ?? [] {
            #expect(view["stale"] as? Bool == true)
            // Version 2 rows of the sync views gain fields (sync notes, the
            // outbox's detail): rows may change, but none appears or goes.
            for difference in view["differences"] as? [[String: Any]] ?? [] {
                #expect((difference["added"] as? [Any])?.isEmpty == true, "\(view["name"] ?? "?") rows added")
                #expect((difference["removed"] as? [Any])?.isEmpty == true, "\(view["name"] ?? "?") rows removed")
                #expect((difference["damaged"] as? [Any])?.isEmpty ?? true, "\(view["name"] ?? "?") rows damaged")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: data)) == bytes, "a dry run changed the store")

        // The first listing rebuilds them, and says so.
        let listed = try json("inspections")
        #expect(
            listed.stderr.contains(
                "rebuilding the templates, inspections, drafts, followups, issues, outbox and receptions"))
        #expect(listed.stderr.contains("after an upgrade: 43 events…"))
        #expect(Self.agrees(listed.value, with: try Self.expected("inspections.json")))
        for listing in ["drafts", "followups", "issues", "outbox"] {
            let shown = try json(listing).value
            #expect(Self.agrees(shown, with: try Self.expected("\(listing).json")), "\(listing): \(shown)")
        }
        let forms = try FileManager.default.contentsOfDirectory(atPath: Self.fixture + "/expected/show")
        #expect(forms.count == 5)
        for file in forms {
            let id = String(file.dropLast(".json".count))
            let shown = try json("show", id).value
            #expect(Self.agrees(shown, with: try Self.expected("show/" + file)), "show \(id): \(shown)")
        }

        // Nothing is stale now, and a fold with this code agrees with every row.
        let after = try #require(try json("views", "--check").value as? [String: Any])
        #expect(after["changes"] as? Bool == false)
        #expect((after["views"] as? [[String: Any]])?.allSatisfy { $0["stale"] as? Bool == false } == true)

        // The chain is what it was: intact, and it still extends the old digest.
        let verified = try #require(try json("verify").value as? [String: Any])
        #expect(verified["intact"] as? Bool == true)
        #expect(verified["checked"] as? Int == 43)
        let digest = try String(contentsOfFile: Self.fixture + "/expected/digest.txt", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let extended = try jqc("verify", "--digest", digest)
        #expect(extended.status == 0, "\(extended.stderr)")
        #expect(try jqc("digest").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == digest)
    }

    @Test func recordingOnTopOfAnOldLedgerWorks() throws {
        let drafts = try #require(try json("drafts").value as? [[String: Any]])
        let id = try #require(drafts.first?["id"] as? String)
        let set = try jqc("--as", "Dana", "set", String(id.prefix(8)), "Supervisor email", "lee@example.com")
        #expect(set.status == 0, "\(set.stderr)")
        let verified = try jqc("verify")
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(try jqc("rebuild", "--dry-run").status == 0)
    }

    /// Whether today's output says what the old one did: every field the old
    /// code printed is there with the same value, newer fields aside. The one
    /// documented change is that an unanswered field's `value` is now null
    /// where the old code printed the type's empty value (0, "", []).
    static func agrees(_ actual: Any, with expected: Any, key: String? = nil) -> Bool {
        switch (actual, expected) {
        case (let actual as [String: Any], let expected as [String: Any]):
            return expected.allSatisfy { name, value in
                actual[name].map { agrees($0, with: value, key: name) } ?? false
            }
        case (let actual as [Any], let expected as [Any]):
            if key == "value", actual.isEmpty && expected.isEmpty { return true }
            return actual.count == expected.count && zip(actual, expected).allSatisfy { agrees($0, with: $1) }
        case (is NSNull, _) where key == "value":
            return expected is NSNull || (expected as? String) == "" || (expected as? Int) == 0
                || (expected as? [Any])?.isEmpty == true
        default:
            return (actual as? NSObject).map { $0.isEqual(expected) } ?? false
        }
    }
}
