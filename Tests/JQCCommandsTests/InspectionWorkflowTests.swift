import Foundation
import LedgerTestSupport
import Testing

/// Whole inspections through the built `jqc` binary, as an inspector works.
@Suite struct InspectionWorkflowTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"), environment: ["JQC_AS_TEST": "1"]).reportingKinds
        try expectSuccess(jqc("init"))
        try expectSuccess(jqc("pull", "--from", SampleReference.path))
    }

    @discardableResult
    func expectSuccess(_ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        #expect(result.status == 0, "jqc failed: \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }

    func json(_ arguments: String...) throws -> Any {
        let result = try jqc.run(arguments + ["--json"])
        #expect(result.status == 0, "jqc \(arguments) failed: \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    func start(_ arguments: String...) throws -> String {
        let object = try #require(try json(["--as", "Dana"] + ["start"] + arguments) as? [String: Any])
        return try #require(object["id"] as? String)
    }

    func json(_ arguments: [String]) throws -> Any {
        let result = try jqc.run(arguments + ["--json"])
        #expect(result.status == 0, "jqc \(arguments) failed: \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    func `as`(_ arguments: String...) throws -> ProcessResult { try jqc.run(["--as", "Dana"] + arguments) }
    func `as`(_ arguments: [String]) throws -> ProcessResult { try jqc.run(["--as", "Dana"] + arguments) }

    func fieldValues(_ id: String) throws -> [String: Any] {
        let form = try #require(try json("show", id) as? [String: Any])
        let fields = try #require(form["fields"] as? [[String: Any]])
        var values: [String: Any] = [:]
        for field in fields { values[field["id"] as! String] = field["value"] }
        return values
    }

    @Test func restroomInspectionWithAnIssuePhotoSignatureAndFollowUp() throws {
        let id = try start("--template", "Restroom QC", "--facility", "Riverside Medical Center", "--area", "1001")
        let short = String(id.prefix(8))
        let photo = try SampleReference.writePNG(in: directory.path, name: "leak.png", red: 10)
        let signature = try SampleReference.writePNG(in: directory.path, name: "sig.png", red: 250)
        for (field, value) in [
            ("Floors", "4"), ("3", "5"), ("4", "0"), ("Soap dispensers stocked", "pass"), ("6", "FAIL"),
            ("Trash emptied", "yes"), ("Odor", "acceptable"), ("Notes", "Stall 3 out of order"),
        ] {
            try expectSuccess(`as`("set", short, field, value))
        }
        try expectSuccess(`as`("photo", short, "Photo of problem area", photo))
        try expectSuccess(`as`("sign", short, "11", signature))
        let flagged = try #require(
            try json(["--as", "Dana", "flag", short, "-s", "high", "-d", "Leaking tap", "--photo", photo])
                as? [String: Any])
        #expect(flagged["issue"] is String)

        let values = try fieldValues(short)
        #expect(values["2"] as? Int == 4)
        #expect(values["5"] as? String == "pass")
        #expect(values["6"] as? String == "fail")
        #expect(values["7"] as? Bool == true)
        #expect(values["8"] as? String == "Acceptable")
        #expect((values["10"] as? [String: Any])?["sha256"] is String)

        let submitted = try #require(try json(["--as", "Dana", "submit", short, "--follow-up"]) as? [String: Any])
        // rating 4/5 + 5/5, pass 1, fail 0, checkbox 1, acceptable 1 → 4.8 of 6 = 80%; rating 0 is unanswered.
        #expect(submitted["score"] as? Double == 80)
        #expect(submitted["status"] as? String == "completed")

        let followUps = try #require(try json("followups") as? [[String: Any]])
        #expect(followUps.map { $0["id"] as? String } == [id])
        let outbox = try #require(try json("outbox") as? [[String: Any]])
        #expect(outbox.map { $0["kind"] as? String } == ["photo", "photo", "photo", "inspection", "issue"])

        // The re-inspection copies non-scoring answers only, and clears the follow-up when submitted.
        let child = try start("--reinspect", short)
        let copied = try fieldValues(String(child.prefix(8)))
        #expect(copied["9"] as? String == "Stall 3 out of order")
        #expect(copied["2"] is NSNull)
        #expect(copied["10"] is NSNull)
        for (field, value) in [("2", "5"), ("3", "5"), ("5", "pass")] {
            try expectSuccess(`as`("set", String(child.prefix(8)), field, value))
        }
        try expectSuccess(`as`("submit", String(child.prefix(8))))
        #expect((try json("followups") as? [[String: Any]])?.isEmpty == true)
        let parent = try #require(try json("show", short) as? [String: Any])
        #expect(parent["follow_up_resolved_by"] as? String == child)
        try expectSuccess(jqc("verify"))
    }

    @Test func officeInspectionCoversEveryOtherFieldType() throws {
        let id = try start("-t", "22", "-f", "102")
        let short = String(id.prefix(8))
        for (field, value) in [
            ("Supervisor on site", "Ana Ruiz"), ("Supervisor email", "ana@example.com"),
            ("Last deep clean", "2026-11-02"), ("Occupants present", "12.50"), ("Shift", "evening"),
            ("Areas covered", "Lobby, Desks"), ("8", "3"), ("9", "4"), ("10", "pass"), ("11", "N/A"),
            ("Supplies counted", "Towels,4,no;Soap,1,yes"), ("Follow-up needed", "no"),
        ] {
            try expectSuccess(`as`("set", short, field, value))
        }
        let values = try fieldValues(short)
        #expect(values["3"] as? String == "ana@example.com")
        #expect(values["4"] as? String == "2026-11-02")
        #expect((values["5"] as? NSNumber)?.doubleValue == 12.5)
        #expect(values["6"] as? String == "Evening")
        #expect(values["7"] as? [String] == ["Desks", "Lobby"])
        #expect(values["12"] as? [[String]] == [["Towels", "4", "no"], ["Soap", "1", "yes"]])
        try expectSuccess(`as`("clear", short, "Occupants present"))
        #expect(try fieldValues(short)["5"] is NSNull)
        let submitted = try #require(try json(["--as", "Dana", "submit", short]) as? [String: Any])
        // 3/5 + 4/5 + pass + "N/A" (0) + checkbox false (0) = 2.4 of 5.
        #expect(submitted["score"] as? Double == 48)
    }

    @Test func aDiscardedDraftDisappearsFromEveryView() throws {
        let id = try start("-t", "11", "-f", "101")
        try expectSuccess(`as`("flag", String(id.prefix(8)), "-s", "low", "-d", "Scuffed wall"))
        #expect((try json("issues") as? [[String: Any]])?.count == 1)
        try expectSuccess(`as`("discard", String(id.prefix(8)), "--reason", "wrong facility"))
        #expect((try json("drafts") as? [[String: Any]])?.isEmpty == true)
        #expect((try json("inspections") as? [[String: Any]])?.isEmpty == true)
        #expect((try json("issues") as? [[String: Any]])?.isEmpty == true)
        #expect((try json("outbox") as? [[String: Any]])?.isEmpty == true)
        // The log keeps it: started, issue, discard.
        #expect(((try json("stats") as? [String: Any])?["events"] as? Int) == 4)
    }

    // MARK: - Refusals record nothing

    @Test func refusalsExplainThemselvesAndRecordNothing() throws {
        let draft = String(try start("-t", "11", "-f", "101").prefix(8))
        let done = String(try start("-t", "22", "-f", "102").prefix(8))
        try expectSuccess(`as`("submit", done))
        let cases: [([String], String)] = [
            (["set", draft, "Floors", "7"], "a rating is a whole number from 0 to 5"),
            (["set", draft, "Odor", "smoky"], "Odor"),
            (["set", draft, "Trash emptied", "maybe"], "Trash emptied"),
            (["set", draft, "Color", "red"], "Color"),
            (["set", draft, "Restroom condition", "x"], "Restroom condition"),
            (["set", "ffffffff", "2", "3"], "no inspection matches 'ffffffff'"),
            (["set", "xyz!", "2", "3"], "is not an id"),
            (["submit", draft], "Floors"),
            (["set", done, "2", "3"], "only a draft can be edited"),
            (["discard", done], "completed"),
            (["flag", draft, "-s", "urgent", "-d", "x"], "urgent"),
            (["flag", draft, "-s", "low", "-d", "  "], "description"),
            (["photo", draft, "10", directory.appending("missing.png")], "no such file"),
            (["photo", draft, "Notes", SampleReference.path], "not a JPEG, PNG"),
            (["start", "-t", "99", "-f", "101"], "no template matches '99'"),
            (["start", "-t", "11", "-f", "999"], "no facility matches '999'"),
        ]
        let before = try jqc("digest").stdout
        for (arguments, message) in cases {
            let result = try `as`(arguments)
            #expect(result.status == 1, "\(arguments) should be refused: \(result.stdout)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try jqc("digest").stdout == before, "a refused command recorded something")
        // A refused photo leaves nothing in the photo store either.
        let photos = try FileManager.default.contentsOfDirectory(atPath: directory.appending("ledger/photos"))
        #expect(photos.isEmpty)
    }

    @Test func anAmbiguousPrefixListsTheCandidates() throws {
        var ids: [String] = []
        for _ in 0..<17 { ids.append(try start("-t", "11", "-f", "101")) }
        // Seventeen ids, sixteen hex digits: two share a first digit.
        let shared = Dictionary(grouping: ids, by: { $0.prefix(1) }).first { $0.value.count > 1 }!
        let result = try `as`("set", String(shared.key), "2", "3")
        #expect(result.status == 1)
        #expect(result.errorKind == "LookupError.ambiguous", "\(result.stderr)")
        #expect(result.stderr.contains(shared.value[0].lowercased()) || result.stderr.contains(shared.value[1]))
    }

    @Test func recordingNeedsSomeoneToAttributeItTo() throws {
        let result = try jqc("start", "-t", "11", "-f", "101")
        #expect(result.status == 1)
        #expect(result.errorKind == "JQCError.noActor", "\(result.stderr)")
    }

    // MARK: - JSON shapes

    @Test func jsonOutputHasItsDocumentedFields() throws {
        let id = try start("-t", "11", "-f", "101")
        let form = try #require(try json("show", String(id.prefix(6))) as? [String: Any])
        for key in [
            "id", "status", "template", "facility", "area", "parent_id", "started_at", "started_by", "completed_at",
            "score", "score_so_far", "follow_up_required", "follow_up_resolved_by", "fields", "missing_required",
            "issues", "photos", "sync",
        ] {
            #expect(form[key] != nil, "show --json lacks \(key)")
        }
        #expect(form["missing_required"] as? [String] == ["2", "3", "5"])
        let listing = try #require((try json("inspections") as? [[String: Any]])?.first)
        for key in [
            "id", "status", "template_id", "template_name", "facility_id", "facility_name", "area_name", "parent_id",
            "started_at", "started_by", "completed_at", "score", "follow_up_required", "follow_up_resolved_by",
            "server_id", "sync", "answered", "issues", "photos",
        ] {
            #expect(listing[key] != nil, "inspections --json lacks \(key)")
        }
        #expect(listing["sync"] as? String == "local")
        #expect(listing["started_by"] as? String == "Dana")
    }

    // MARK: - Rebuilds

    @Test func aRebuildKilledPartWayLeavesTheOldViewsIntact() throws {
        for i in 0..<6 {
            let id = String(try start("-t", "11", "-f", "101").prefix(8))
            try expectSuccess(`as`("set", id, "Notes", "inspection \(i)"))
            if i % 2 == 0 {
                for (field, value) in [("2", "4"), ("3", "4"), ("5", "pass")] {
                    try expectSuccess(`as`("set", id, field, value))
                }
                try expectSuccess(`as`("submit", id))
            }
        }
        let before = try jqc("inspections", "--json").stdout
        let killed = try jqc.run(["rebuild"], environmentOverride: ["JQC_TEST_KILL_REBUILD_AFTER": "20"])
        #expect(killed.status != 0)
        #expect(try jqc("inspections", "--json").stdout == before)
        try expectSuccess(jqc("verify"))
        let rebuilt = try #require(try json("rebuild") as? [String: Any])
        let views = try #require(rebuilt["views"] as? [String])
        #expect(
            Array(views.prefix(6)) == ["templates", "inspections", "drafts", "followups", "issues", "outbox"],
            "\(views)")
        #expect(try jqc("inspections", "--json").stdout == before)
        try expectSuccess(jqc("rebuild", "outbox"))
        #expect(try jqc("rebuild", "nonsense").status == 2)
    }
}
