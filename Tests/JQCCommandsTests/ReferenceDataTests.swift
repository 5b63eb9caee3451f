import Foundation
import LedgerTestSupport
import Testing

/// Reference data that names one id twice is refused whole, with the ids
/// named, and the counts printed are what the cache holds.
@Suite struct ReferenceDataTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        #expect(try jqc("init").status == 0)
    }

    /// The sample reference data with its first facility and template repeated
    /// under the same ids (an impostor of each).
    func ambiguousFile(facilities: Bool, templates: Bool) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        if facilities, var list = object["facilities"] as? [[String: Any]] {
            var impostor = list[0]
            impostor["name"] = "Siverside Medical Center"
            list.append(impostor)
            object["facilities"] = list
        }
        if templates, var list = object["templates"] as? [[String: Any]] {
            var impostor = list[0]
            impostor["name"] = "Impostor QC"
            list.append(impostor)
            object["templates"] = list
        }
        let path = directory.appending("ambiguous-\(facilities)-\(templates).json")
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [(true, false), (false, true), (true, true)])
    func duplicateIDsAreRefusedAndNamed(facilities: Bool, templates: Bool) throws {
        #expect(try jqc("pull", "--from", SampleReference.path).stdout == "Pulled 2 facilities and 2 templates.\n")
        let before = try jqc("--json", "facilities").stdout
        let result = try jqc("pull", "--from", try ambiguousFile(facilities: facilities, templates: templates))
        #expect(result.status == 1)
        #expect(result.errorKind == "ReferenceDataError.duplicateIDs", "\(result.stderr)")
        #expect(result.errorDetail?["facilities"] as? [String] == (facilities ? ["101"] : []), "\(result.stderr)")
        #expect(result.errorDetail?["templates"] as? [String] == (templates ? ["11"] : []), "\(result.stderr)")
        #expect(try jqc("--json", "facilities").stdout == before)
        #expect(!(try jqc("facilities").stdout.contains("Siverside")))
    }

    /// A file holding one new template only (a copy of template 11 as id 77).
    func oneNewTemplateFile() throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var template = try #require((object["templates"] as? [[String: Any]])?.first)
        template["id"] = 77
        template["name"] = "Lift QC"
        let path = directory.appending("one-template.json")
        try JSONSerialization.data(withJSONObject: ["facilities": [], "templates": [template]])
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Issue #33 item 8: one new template could not be imported on a ledger
    /// with drafts (the file replaces the cache, leaving out the drafts'
    /// template); `--add` adds it to what is cached.
    @Test func oneNewTemplateIsAddedBesideADraftsTemplate() throws {
        _ = try JQCRunner.succeeded(jqc("pull", "--from", SampleReference.path))
        _ = try JQCRunner.succeeded(jqc("--as", "Dana", "start", "-t", "11", "-f", "101"))
        let file = try oneNewTemplateFile()
        let replacing = try jqc("pull", "--from", file)
        #expect(replacing.status == 1, "\(replacing.stdout)")
        #expect(replacing.stderr.contains("--add"), "the refusal names the way that works: \(replacing.stderr)")
        let added = try jqc("pull", "--from", file, "--add")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "Pulled 2 facilities and 3 templates.\n", "\(added.stdout)")
        let templates = try jqc("templates").stdout
        for name in ["Restroom QC", "Office Area QC", "Lift QC"] { #expect(templates.contains(name), "\(templates)") }
        _ = try JQCRunner.succeeded(jqc("--as", "Dana", "start", "-t", "Lift QC", "-f", "101"))
        let online = try jqc("pull", "--add")
        #expect(online.status == 2)
        #expect(online.errorKind == "UsageError.unexpectedArgument", "\(online.stderr)")
    }
}
