import Foundation
import LedgerTestSupport
import Testing

/// Recording commands say what they recorded, and every refusal's advice is
/// a command that works, through the built `jqc` binary.
@Suite struct RecordingTruthTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        try #require(jqc("init").status == 0)
        try #require(jqc("pull", "--from", SampleReference.path).status == 0)
    }

    @discardableResult
    func dana(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ProcessResult {
        try jqc.run(["--as", "Dana"] + arguments)
    }

    func ok(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        try ok(arguments, sourceLocation: sourceLocation)
    }

    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try dana(arguments)
        #expect(result.status == 0, "jqc \(arguments) failed: \(result.stderr)", sourceLocation: sourceLocation)
    }

    func object(_ arguments: [String]) throws -> [String: Any] {
        let result = try dana(arguments + ["--json"])
        try #require(result.status == 0, "jqc \(arguments) failed: \(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// A draft of "Restroom QC" in the lobby restrooms.
    func draft() throws -> String {
        try #require(try object(["start", "-t", "Restroom QC", "-f", "101", "-a", "1001"])["id"] as? String)
    }

    /// A submitted inspection, with or without a follow-up asked for.
    func completed(followUp: Bool) throws -> String {
        let id = try draft()
        try ok("set", id, "Floors=4", "3=5", "5=pass", "Notes=Stall 3 out of order")
        try ok(["submit", id] + (followUp ? ["--follow-up"] : []))
        return id
    }

    func png(_ name: String) throws -> String {
        try SampleReference.writePNG(in: directory.path, name: name, red: UInt8(name.count * 20))
    }

    /// A situation, the command it refuses, and how to make the advice runnable.
    struct Refusal: Sendable, CustomStringConvertible {
        var description: String
        /// Sets up the situation and returns (inspection id, the refused command).
        var arrange: @Sendable (RecordingTruthTests) throws -> (String, [String])
        var expectedStatus: Int32 = 1
    }

    static let refusals: [Refusal] = [
        Refusal(description: "set on a completed inspection without follow-up") { t in
            let id = try t.completed(followUp: false)
            return (id, ["set", id, "Floors", "2"])
        },
        Refusal(description: "set on a completed inspection that needs a follow-up") { t in
            let id = try t.completed(followUp: true)
            return (id, ["set", id, "Floors", "2"])
        },
        Refusal(description: "submit on a discarded draft") { t in
            let id = try t.draft()
            try t.ok("discard", id)
            return (id, ["submit", id])
        },
        Refusal(description: "set on a discarded draft") { t in
            let id = try t.draft()
            try t.ok("discard", id)
            return (id, ["set", id, "Notes=late"])
        },
        Refusal(description: "typed text for a signature field") { t in
            let id = try t.draft()
            return (id, ["set", id, "Inspector signature", "Dana"])
        },
        Refusal(description: "typed text for an image field") { t in
            let id = try t.draft()
            return (id, ["set", id, "10", "leak.png"])
        },
        Refusal(description: "sign on an image field") { t in
            let id = try t.draft()
            return (id, ["sign", id, "Photo of problem area", try t.png("a.png")])
        },
        Refusal(description: "photo on a signature field") { t in
            let id = try t.draft()
            return (id, ["photo", id, "11", try t.png("b.png")])
        },
        Refusal(
            description: "start --reinspect with --template",
            arrange: { t in
                let id = try t.completed(followUp: true)
                return (id, ["start", "--reinspect", id, "--template", "11"])
            }, expectedStatus: 2),
    ]

    /// Runs the refused command, takes the first `'jqc …'` command its message
    /// gives (placeholders ID and FILE filled in; "Remove it" means the
    /// command without the word it names), and runs that: it must be accepted.
    @Test(arguments: refusals) func everyRefusalsAdviceLeadsToACommandThatWorks(_ refusal: Refusal) throws {
        let (id, command) = try refusal.arrange(self)
        let refused = try dana(command)
        #expect(refused.status == refusal.expectedStatus, "\(refused.stderr)")
        #expect(!refused.stderr.contains("Start a re-inspection to record new findings"))
        var advice: [String]
        if refused.stderr.contains("Remove it"),
            let named = refused.stderr.firstMatch(of: /unexpected argument '(--[a-z]+)'/)?.1,
            let at = command.firstIndex(of: String(named))
        {
            advice = command
            advice.removeSubrange(at...at + 1)
        } else {
            let quoted = try #require(
                refused.stderr.firstMatch(of: /'jqc ([^']+)'/)?.1, "no command in: \(refused.stderr)")
            advice = quoted.split(separator: " ").map(String.init)
        }
        let file = try png("advice.png")
        advice = advice.map { $0 == "ID" ? String(id.prefix(8)) : $0 == "FILE" ? file : $0 }
        let followed = try dana(advice)
        #expect(followed.status == 0, "advice \(advice) from \"\(refused.stderr)\" failed: \(followed.stderr)")
    }

    @Test func startAndSubmitPrintTheTimesTheLogRecorded() throws {
        let started = try object(["start", "-t", "Restroom QC", "-f", "101"])
        let id = try #require(started["id"] as? String)
        try ok("set", id, "Floors=4", "3=5", "5=pass")
        let submitted = try object(["submit", id])
        let log = try jqc("log", "--inspection", id, "--json")
        let events = try log.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        func recorded(_ type: String) -> String? {
            events.first { $0["type"] as? String == type }?["recorded_at"] as? String
        }
        #expect(started["started_at"] as? String == recorded("inspection.started"))
        #expect(submitted["completed_at"] as? String == recorded("inspection.submitted"))
    }

    @Test func unansweredIsNullInShowJSON() throws {
        let id = try draft()
        try ok("set", id, "Floors", "0")
        try ok("set", id, "Soap dispensers stocked", "")
        try ok("set", id, "Notes", " ")
        let form = try object(["show", id])
        let fields = try #require(form["fields"] as? [[String: Any]])
        for fieldID in ["2", "5", "9"] {
            let value = fields.first { $0["id"] as? String == fieldID }?["value"]
            #expect(value is NSNull, "field \(fieldID) is \(String(describing: value))")
        }
    }

    @Test func aBlankActorNameIsRefused() throws {
        let result = try jqc("--as", " \t", "start", "-t", "11", "-f", "101")
        #expect(result.status == 2)
        #expect(result.errorKind == "UsageError.invalidValue", "\(result.stderr)")
        let listed = try JSONSerialization.jsonObject(with: Data(try jqc("inspections", "--json").stdout.utf8))
        #expect((listed as? [Any])?.isEmpty == true)
    }

    @Test func onlyTheFirstReinspectionClearsTheFollowUp() throws {
        let parent = try completed(followUp: true)
        let first = try #require(try object(["start", "--reinspect", parent])["id"] as? String)
        let second = try #require(try object(["start", "--reinspect", parent])["id"] as? String)
        for child in [first, second] { try ok("set", child, "Floors=5", "3=5", "5=pass") }
        let one = try dana(["submit", first])
        #expect(one.status == 0, "\(one.stderr)")
        let cleared = try object(["show", parent])
        #expect(cleared["follow_up_resolved_by"] as? String == first, "follow-up of \(parent) cleared by \(first)")
        let two = try dana(["submit", second])
        #expect(two.status == 0)
        let after = try object(["show", parent])
        #expect(after["follow_up_resolved_by"] as? String != second, "not cleared again by \(second)")
        #expect(after["follow_up_resolved_by"] as? String == first, "already cleared by re-inspection \(first)")
        let shown = try object(["show", parent])
        #expect(shown["follow_up_required"] as? Bool == true)
        #expect(shown["follow_up_outstanding"] as? Bool == false)
        #expect(shown["follow_up_resolved_by"] as? String == first)
        #expect(try jqc("show", parent).stdout.contains("Follow-up: cleared by re-inspection \(first)"))
    }

    @Test func submittingWithRequiredFieldsEmptyPointsToSetAndFill() throws {
        let id = try draft()
        let refused = try dana(["submit", id])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("'jqc set \(id.prefix(8)) FIELD=VALUE …'"), "\(refused.stderr)")
        #expect(refused.stderr.contains("'jqc fill \(id.prefix(8))'"))
        // The advice, with the fields it names: then submit is accepted.
        try ok("set", String(id.prefix(8)), "2=4", "3=4", "5=pass")
        try ok("submit", id)
    }

    @Test func oneCopiedAnswerIsOneAnswer() throws {
        let parent = try completed(followUp: true)
        let started = try dana(["start", "--reinspect", parent])
        #expect(started.stdout.contains("1 answer copied"), "\(started.stdout)")
    }
}
