import Foundation
import LedgerTestSupport
import Testing

/// `jqc fill` through a pseudo-terminal (`Tools/pty-session`), as an
/// inspector types.
@Suite struct FillTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        try jqc.initWithSampleReference()
    }

    func start(_ template: String) throws -> String { try jqc.startInspection(template) }

    /// Runs `jqc fill ID` on a terminal, answering each prompt with the next
    /// line (nil: end of input), then `submit` to the offer to submit, and
    /// returns the status and the transcript.
    func fill(_ id: String, _ lines: [String?], submit: String? = nil, followUp: String? = nil) throws
        -> ProcessResult
    {
        var steps: [[String: Any]] = lines.map { ["expect": "> ", "send": $0 as Any? ?? NSNull()] }
        if let submit { steps.append(["expect": "Submit now? [y/N] ", "send": submit]) }
        if let followUp { steps.append(["expect": "(a follow-up)? [y/N] ", "send": followUp]) }
        let file = directory.appending("steps-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: steps).write(to: URL(fileURLWithPath: file))
        return try ProcessRun.run(
            Products.repositoryFile("Tools/pty-session"),
            [file, Products.executable("jqc"), "--as", "Dana", "fill", String(id.prefix(8))],
            environment: jqc.environment, timeout: 120)
    }

    func values(_ id: String) throws -> [String: Any] {
        let result = try jqc("show", id, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let fields = try #require(object["fields"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: fields.map { ($0["id"] as! String, $0["value"] as Any) })
    }

    func png(_ name: String, red: UInt8) throws -> String {
        try SampleReference.writePNG(in: directory.path, name: name, red: red)
    }

    @Test func everyFieldTypeARefusalItsCorrectionAndGoingBack() throws {
        let id = try start("Office Area QC")
        let signature = try png("sig.png", red: 90)
        let session = try fill(
            id,
            [
                "Kim Lee", "not-an-email", "kim@example.com", "2026-11-30", "7", "Night", "Desks,Lobby", "4",
                "<", "3", "5", "pass", "Pass", "Soap,4,no;Towels,10,yes", "yes", signature,
            ], submit: "n")
        #expect(session.status == 0, "\(session.stdout)")
        let transcript = session.stdout
        #expect(transcript.contains("Complete every section."), "the label text is shown")
        #expect(transcript.contains("[1/13] Supervisor on site (text)"))
        #expect(transcript.contains("  options: Day, Evening, Night"))
        #expect(transcript.contains("  columns: Item, Count, Reorder?"))
        #expect(transcript.contains("refused: field 3 \"Supervisor email\" (email) refuses \"not-an-email\""))
        // Back from Vacuuming to Dusting, which shows the answer just given.
        #expect(transcript.contains("[7/13] Dusting (rating)\r\n  now: 4\r\n> 3"), "\(transcript)")
        #expect(transcript.contains("Submit now? [y/N]"))
        #expect(transcript.contains("Not submitted. Submit later with 'jqc submit"))

        let values = try values(id)
        #expect(values["2"] as? String == "Kim Lee")
        #expect(values["3"] as? String == "kim@example.com")
        #expect(values["4"] as? String == "2026-11-30")
        #expect(values["5"] as? Int == 7)
        #expect(values["6"] as? String == "Night")
        #expect(values["7"] as? [String] == ["Desks", "Lobby"])
        #expect(values["8"] as? Int == 3)
        #expect(values["9"] as? Int == 5)
        #expect(values["10"] as? String == "pass")
        #expect(values["11"] as? String == "Pass")
        #expect(values["12"] as? [[String]] == [["Soap", "4", "no"], ["Towels", "10", "yes"]])
        #expect(values["13"] as? Bool == true)
        #expect((values["14"] as? [String: Any])?["sha256"] is String)
    }

    @Test func stoppingAndResumingAtTheFirstRequiredFieldThenSubmitting() throws {
        let id = try start("Restroom QC")
        let first = try fill(id, ["4", "q"])
        #expect(first.status == 0, "\(first.stdout)")
        let stopped = try JSONSerialization.jsonObject(with: Data(try jqc("show", id, "--json").stdout.utf8))
        let missing = ((stopped as? [String: Any])?["missing_required"] as? [Any])?.map {
            ($0 as? String) ?? (($0 as? [String: Any])?["id"] as? String) ?? "\($0)"
        }
        #expect(missing == ["3", "5"], "still required: Toilets and urinals, Soap dispensers stocked")
        #expect(first.stdout.contains("Continue with 'jqc fill \(id.prefix(8))'"))
        #expect(try values(id)["2"] as? Int == 4, "the answer given before stopping is recorded")

        let photo = try png("leak.png", red: 10)
        let signature = try png("signature.png", red: 240)
        let second = try fill(
            id,
            [
                "5", "", "pass", "-", "yes", "Good", "\\-", "'\(photo)'", directory.appending("sig"), signature,
            ], submit: "y", followUp: "y")
        #expect(second.status == 0, "\(second.stdout)")
        let asked = try #require(second.stdout.firstMatch(of: /\[(\d+)\/10\] ([A-Za-z ]+) \(/))
        #expect(asked.2 == "Toilets and urinals", "resumes at the first required field still empty")
        #expect(second.stdout.contains("refused: no file "), "a signature is a file, not typed text")
        #expect(second.stdout.contains("Files there that start so: \(signature)"), "\(second.stdout)")
        #expect(second.stdout.contains("Submitted \(id):"), "\(second.stdout)")

        let shown = try JSONSerialization.jsonObject(with: Data(try jqc("show", id, "--json").stdout.utf8))
        #expect((shown as? [String: Any])?["status"] as? String == "completed")
        #expect((shown as? [String: Any])?["follow_up_required"] as? Bool == true)
        #expect(second.stdout.contains("re-inspect with 'jqc start --reinspect \(id.prefix(8))'"))
        let values = try values(id)
        #expect(values["3"] as? Int == 5)
        #expect(values["9"] as? String == "-", "a backslash makes a key an answer")
        #expect((values["10"] as? [String: Any])?["size"] is Int)
        #expect((values["11"] as? [String: Any])?["size"] is Int)
    }

    @Test func endOfInputStopsAndKeepsTheAnswers() throws {
        let id = try start("Restroom QC")
        let session = try fill(id, ["3", nil])
        #expect(session.status == 0)
        #expect(session.stdout.contains("Continue with 'jqc fill"))
        #expect(try values(id)["2"] as? Int == 3)
    }

    @Test func withoutATerminalItPointsToSet() throws {
        let id = try start("Restroom QC")
        let result = try jqc("--as", "Dana", "fill", id)
        #expect(result.status == 1)
        #expect(result.errorKind == "FillError.noTerminal", "\(result.stderr)")
        #expect(result.errorMessage?.contains(id) == true, "\(result.stderr)")
    }
}
