import Foundation
import JQCCommands
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

/// A pull that would leave nothing to record with keeps the cache; a file
/// with one unusable template keeps the rest.
@Suite struct ReferenceCacheKeptTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        try jqc.initWithSampleReference()
    }

    /// The sample reference data with the templates whose ids are in
    /// `broken` given a field type no jqc knows.
    func file(breaking broken: Set<String>, dropping dropped: Set<String> = []) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var templates = try #require(object["templates"] as? [[String: Any]])
        templates.removeAll { dropped.contains("\($0["id"]!)") }
        for index in templates.indices where broken.contains("\(templates[index]["id"]!)") {
            var schema = try #require(templates[index]["form_schema"] as? [String: Any])
            var fields = try #require(schema["fields"] as? [[String: Any]])
            fields[1]["type"] = "hologram"
            schema["fields"] = fields
            templates[index]["form_schema"] = schema
        }
        object["templates"] = templates
        let path = directory.appending("reference-\(broken.sorted())-\(dropped.sorted()).json")
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    var templates: String { get throws { try jqc("--json", "templates").stdout } }

    @Test func aFileWithoutAUsableTemplateKeepsTheCache() throws {
        let before = try templates
        let result = try jqc("pull", "--from", try file(breaking: ["11", "22"]))
        #expect(result.status == 1)
        #expect(result.errorKind == "ReferenceDataError.wouldLose", "\(result.stderr)")
        #expect(result.stderr.contains("Template 11 \"Restroom QC\" was skipped"))
        #expect(try templates == before)
        // Offline, recording still works from the kept cache.
        _ = try jqc.startInspection("Restroom QC")
    }

    @Test func oneUnusableTemplateIsSkippedAndTheRestKept() throws {
        let result = try jqc("pull", "--from", try file(breaking: ["22"]))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Pulled 2 facilities and 1 templates.\n")
        #expect(result.stderr.contains("Template 22 \"Office Area QC\" was skipped"), "\(result.stderr)")
        #expect(try templates.contains("Restroom QC"))
        #expect(try !templates.contains("Office Area QC"))
    }

    @Test func aPullLeavingOutATemplateADraftUsesIsRefused() throws {
        _ = try jqc.startInspection("Office Area QC")
        let before = try templates
        let result = try jqc("pull", "--from", try file(breaking: [], dropping: ["22"]))
        #expect(result.status == 1)
        #expect(result.errorKind == "ReferenceDataError.wouldLose", "\(result.stderr)")
        #expect(result.errorMessage?.contains("template 22") == true, "\(result.stderr)")
        #expect(try templates == before)
        // Without the draft, the same file is taken.
        let fresh = JQCRunner(ledger: directory.appending("other"))
        try fresh.initWithSampleReference()
        #expect(try fresh("pull", "--from", try file(breaking: [], dropping: ["22"])).status == 0)
    }
}

/// The map fits the process's address-space limit (`ulimit -v`, `LimitAS=`).
@Suite struct AddressSpaceLimitTests {
    let directory = TemporaryDirectory()
    var ledger: String { directory.appending("ledger") }

    /// Runs the built jqc under `ulimit -v KIB`.
    func limited(_ kib: Int, _ arguments: [String]) throws -> ProcessResult {
        let quoted = arguments.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return try ProcessRun.run(
            "/bin/bash",
            ["-c", "ulimit -v \(kib); exec '\(Products.executable("jqc"))' " + quoted.joined(separator: " ")],
            environment: ["NO_COLOR": "1", "JQC_HOME": ledger, "JQC_ERRORS": "json"])
    }

    @Test func theLedgerWorksUnderAFourGiBLimit() throws {
        for arguments in [["init"], ["pull", "--from", SampleReference.path]] {
            let result = try limited(4_194_304, arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        let started = try limited(
            4_194_304, ["--as", "Dana", "--json", "start", "-t", "Restroom QC", "-f", "101"])
        #expect(started.status == 0, "\(started.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        let id = String(try #require(object?["id"] as? String).prefix(8))
        for arguments in [
            ["--as", "Dana", "set", id, "Floors", "4"], ["audit", id], ["verify"], ["log"],
            ["backup", directory.appending("b")],
        ] {
            let result = try limited(4_194_304, arguments)
            #expect(result.status == 0 && !result.signalled, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("storage failed"))
        }
        // And the map it had was sized for the limit, not 1 TiB.
        let stats = try limited(4_194_304, ["--json", "stats"])
        let map = try #require(
            ((try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])?["map_size_bytes"]
                as? Int))
        #expect(map < 4 << 30 && map > 0, "map of \(map) bytes")
    }

    @Test func aStoreTooLargeForTheLimitSaysSo() throws {
        let jqc = JQCRunner(ledger: ledger).reportingKinds
        #expect(try jqc("init").status == 0)
        // A store file of 3 GiB (sparse: LMDB allows a file longer than its pages).
        #expect(truncate(ledger + "/store/data.mdb", 3 << 30) == 0)
        let result = try limited(2_097_152, ["verify"])
        #expect(result.status == 1 && !result.signalled)
        #expect(result.errorKind == "LedgerError.addressSpace", "\(result.stderr)")
        #expect(result.errorMessage?.contains("2.0 GiB") == true && result.errorMessage?.contains("3.0 GiB") == true)
        #expect(try jqc("verify").status == 0, "without the limit the same store opens")
    }
}

/// A store that went back in time (a meta page's transaction id rewritten,
/// an older data.mdb put in place) is refused with what is missing.
@Suite struct RolledBackStoreTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String
    var home: String { directory.appending("ledger") }
    var dataFile: String { home + "/store/data.mdb" }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        inspection = try jqc.recordSampleInspection()
    }

    func events() throws -> Int {
        let verified = try JSONSerialization.jsonObject(with: Data(try jqc("--json", "verify").stdout.utf8))
        return try #require((verified as? [String: Any])?["checked"] as? Int)
    }

    func u64(_ data: Data, _ offset: Int) -> UInt64 {
        data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
    }

    /// Gives the newest meta page a transaction id below the other's, so
    /// LMDB opens the older one: the last commit is gone, every link intact.
    func dropLastCommit() throws {
        var data = try #require(FileManager.default.contents(atPath: dataFile))
        let (first, second) = (u64(data, 144), u64(data, 4096 + 144))
        let newest = first > second ? 144 : 4096 + 144
        var older = min(first, second) - 1
        data.replaceSubrange(newest..<(newest + 8), with: Data(bytes: &older, count: 8))
        try data.write(to: URL(fileURLWithPath: dataFile))
    }

    @Test func aStoreMissingItsLastCommitIsRefusedByEveryCommand() throws {
        let before = try events()
        #expect(try jqc("--as", "Dana", "set", inspection, "Floors", "2").status == 0)
        #expect(try events() == before + 1)
        try dropLastCommit()
        let damaged = FileManager.default.contents(atPath: dataFile)
        let commands = [
            ["verify"], ["inspections"], ["show", inspection], ["--as", "Dana", "set", inspection, "Floors", "3"],
            ["log"], ["audit", inspection], ["backup", directory.appending("b")],
        ]
        for command in commands {
            let result = try jqc.run(command)
            #expect(result.status == 1 && !result.signalled, "\(command): \(result.stdout)")
            #expect(result.errorKind == "LedgerError.rolledBack", "\(command): \(result.stderr)")
            #expect(result.errorDetail?["found_position"] as? Int == before, "ends at position \(before)")
            #expect(result.errorDetail?["recorded_position"] as? Int == before + 1, "up to \(before + 1)")
            #expect(!result.stdout.contains("INTACT"))
        }
        #expect(FileManager.default.contents(atPath: dataFile) == damaged, "the store was written to")
        // Accepting the older store on purpose: remove the head file.
        #expect(unlink(home + "/store-head") == 0)
        #expect(try events() == before)
    }

    @Test func aRestoredBackupBringsItsOwnHeadAndAnOlderStoreAloneIsRefused() throws {
        let backup = directory.appending("backup")
        #expect(try jqc("backup", backup).status == 0)
        let atBackup = try events()
        for value in ["1", "2", "3"] {
            #expect(try jqc("--as", "Dana", "set", inspection, "Floors", value).status == 0)
        }
        // Only the store put back: three records are missing, and it says so.
        let store = try #require(FileManager.default.contents(atPath: backup + "/store/data.mdb"))
        unlink(home + "/store/lock.mdb")
        try store.write(to: URL(fileURLWithPath: dataFile))
        let partial = try jqc("verify")
        #expect(partial.status == 1)
        #expect(partial.errorKind == "LedgerError.rolledBack", "\(partial.stderr)")
        let detail = partial.errorDetail
        let missing = (detail?["recorded_position"] as? Int).flatMap { r in
            (detail?["found_position"] as? Int).map { r - $0 }
        }
        #expect(missing == 3, "3 records are missing: \(partial.stderr)")
        // The README's restore (the whole directory) brings the backup's head file.
        try FileManager.default.removeItem(atPath: home)
        try FileManager.default.copyItem(atPath: backup, toPath: home)
        #expect(try events() == atBackup)
        #expect(try jqc("--as", "Dana", "set", inspection, "Floors", "4").status == 0)
    }

    @Test func aNewLedgerWhereAnotherWasRemovedIgnoresItsHeadFile() throws {
        #expect(FileManager.default.fileExists(atPath: home + "/store-head"))
        try FileManager.default.removeItem(atPath: home + "/store")
        try FileManager.default.removeItem(atPath: home + "/config.json")
        try FileManager.default.removeItem(atPath: home + "/device.key")
        #expect(try jqc("init").status == 0)
        #expect(try jqc("pull", "--from", SampleReference.path).status == 0)
        #expect(try jqc("verify").status == 0)
        _ = try jqc.startInspection("Restroom QC")
        #expect(StoreHead.read(home + "/store-head")?.head.position == UInt64(try events()))
    }

    @Test func aReadOnlyCopyIsCheckedAndNotWritten() throws {
        let head = try #require(StoreHead.read(home + "/store-head"))
        #expect(head.head.position == UInt64(try events()))
        let copy = directory.appending("copy")
        try FileManager.default.copyItem(atPath: home, toPath: copy)
        let before = FileManager.default.contents(atPath: copy + "/store-head")
        // An auditor's read-only copy.
        _ = try ProcessRun.run("/bin/chmod", ["-R", "a-w", copy])
        defer { _ = try? ProcessRun.run("/bin/chmod", ["-R", "u+w", copy]) }
        let audited = try JQCRunner(ledger: copy)("audit", inspection)
        #expect(audited.status == 0, "\(audited.stderr)")
        #expect(FileManager.default.contents(atPath: copy + "/store-head") == before)
    }

    @Test(arguments: ["", "jqc-store-head-v1 00000000000000000099", "garbage\n"])
    func aTornOrEmptyHeadFileSaysNothing(text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: home + "/store-head"))
        #expect(try jqc("verify").status == 0)
        #expect(try jqc("--as", "Dana", "set", inspection, "Floors", "3").status == 0)
        #expect(StoreHead.read(home + "/store-head")?.head.position == UInt64(try events()))
    }
}

/// Events recorded while the device clock went back are marked wherever the
/// times are shown.
@Suite struct ClockWentBackTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String
    var home: String { directory.appending("ledger") }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        inspection = try jqc.recordSampleInspection()
        // One more answer, recorded by a device whose clock says 2020.
        let early = ManualClock(Timestamp(iso8601: "2020-01-01T00:00:00Z")!)
        let status = JQC.main(
            arguments: ["--as", "Dana", "set", inspection, "Floors", "2"], environment: ["JQC_HOME": home],
            stdout: TextOutput(), stderr: TextOutput(), clock: early)
        #expect(status == 0)
    }

    @Test func theAuditMarksTheEventInEveryFormat() throws {
        let text = try jqc("audit", inspection)
        #expect(text.status == 0, "\(text.stderr)")
        let marked = text.stdout.split(separator: "\n").filter { $0.contains(TimelineMarker.text) }
        #expect(marked.count == 1, "\(text.stdout)")
        #expect(marked.first?.contains("2020-01-01") == true)

        let json = try jqc("audit", inspection, "--format", "json")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        #expect(timeline.filter { $0["recorded_before_previous"] as? Bool == true }.count == 1)
        #expect(timeline.filter { $0["recorded_before_previous"] as? Bool == false }.count == timeline.count - 1)
        let valid = try JSONSchemaCheck.validate("audit", json.stdout)
        #expect(valid.status == 0, "\(valid.stderr)")

        let html = try jqc("audit", inspection, "--format", "html")
        #expect(html.stdout.contains(TimelineMarker.text))
    }

    @Test func theLogMarksTheEvent() throws {
        let text = try jqc("log")
        #expect(text.stdout.split(separator: "\n").filter { $0.contains(TimelineMarker.text) }.count == 1)
        let json = try jqc("--json", "log")
        #expect(json.status == 0)
        #expect(json.stderr.contains(TimelineMarker.text), "\(json.stderr)")
        #expect(!json.stdout.contains(TimelineMarker.text), "the JSON lines stay events")
    }
}

/// The marker as the reports print it.
enum TimelineMarker {
    static let text = "⚠ recorded before the previous event (the device clock went back)"
}
