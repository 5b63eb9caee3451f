import Foundation
import LMDB
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

/// The views as a developer and an auditor see them: damaged rows found and
/// never shown, `rebuild --dry-run`, `views` and its schema, waiting for a
/// rebuild said aloud.
@Suite struct ViewCommandTests {
    let directory = TemporaryDirectory(prefix: "views")
    let jqc: JQCRunner
    var storePath: String { jqc.ledger + "/store" }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try #require(try jqc("init").status == 0)
        try #require(try jqc("pull", "--from", SampleReference.path).status == 0)
    }

    func run(_ arguments: String...) throws -> ProcessResult {
        let result = try jqc.run(arguments)
        #expect(result.status == 0, "jqc \(arguments) failed: \(result.stderr)")
        return result
    }

    func json(_ arguments: String...) throws -> [String: Any] {
        let result = try jqc.run(["--json"] + arguments)
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    func start(_ arguments: String...) throws -> String {
        let result = try jqc.run(["--as", "Dana", "--json", "start"] + arguments)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require(object["id"] as? String)
    }

    /// A completed inspection at Riverside Medical Center and an open draft.
    func twoInspections() throws -> (completed: String, draft: String) {
        let completed = try start("-t", "11", "-f", "101")
        for (field, value) in [("2", "4"), ("3", "5"), ("5", "pass")] {
            _ = try run("--as", "Dana", "set", completed, field, value)
        }
        _ = try run("--as", "Dana", "submit", completed)
        let draft = try start("-t", "22", "-f", "102")
        return (completed, draft)
    }

    /// Changes the store directly, as damage or a forger would (the CLI is
    /// not running: LMDB forbids two handles on one file in a process).
    func alterStore(_ body: (Transaction, (String) -> Table) throws -> Void) throws {
        let log = try EventLog(directory: storePath)
        defer { log.close() }
        var tables: [String: Table] = [:]
        for name in ["view:inspections", "view:drafts"] { tables[name] = try log.table(name) }
        try log.environment.write { txn in try body(txn, { tables[$0]! }) }
    }

    static func uuidBytes(_ text: String) throws -> [UInt8] { try #require(UUID(uuidString: text)).bytes }

    static func sha256(_ path: String) throws -> String {
        SHA256Hasher().digest([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))).hex
    }

    // MARK: - A damaged row

    /// One bit flipped in a `view:inspections` row ("Riverside" → "Siverside").
    func flipABit(of id: String) throws {
        try alterStore { txn, table in
            let table = table("view:inspections")
            let key = try Self.uuidBytes(id)
            var value = try #require(try txn.get(table, key))
            let name = Array("Riverside".utf8)
            let at = try #require(
                (0...(value.count - name.count)).first { value[$0..<($0 + name.count)].elementsEqual(name) })
            value[at] ^= 0x01
            try txn.put(table, key, value)
        }
    }

    @Test func aFlippedBitIsFoundTheViewRebuiltAndTheRowNeverShown() throws {
        let (completed, _) = try twoInspections()
        try flipABit(of: completed)
        let listed = try run("--json", "inspections")
        #expect(!listed.stdout.contains("Siverside"))
        let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        #expect(
            rows?.contains { $0["facility_name"] as? String == "Riverside Medical Center" } == true, "\(listed.stdout)")
        #expect(listed.stderr.contains("the inspections view is damaged (row "))
        #expect(listed.stderr.contains("rebuilding it from the log"))
        // Rebuilt: the next listing is quiet.
        let again = try run("inspections")
        #expect(again.stderr.isEmpty)
        #expect(try jqc("rebuild", "--dry-run").status == 0)
    }

    @Test func aFlippedBitIsNamedByTheDryRunAndByViewsCheck() throws {
        let (completed, _) = try twoInspections()
        try flipABit(of: completed)
        let dry = try json("rebuild", "--dry-run", "inspections")
        let view = try #require((dry["views"] as? [[String: Any]])?.first)
        let difference = try #require((view["differences"] as? [[String: Any]])?.first)
        #expect(difference["changed"] as? [String] == [completed])
        #expect(difference["damaged"] as? [String] == [completed])
        let check = try jqc("views", "--check")
        #expect(check.status == 1)
        let checked = try json("views", "--check")
        let inspections = (checked["views"] as? [[String: Any]])?.first { $0["name"] as? String == "inspections" }
        let found = (inspections?["differences"] as? [[String: Any]])?.first {
            $0["table"] as? String == "view:inspections"
        }
        #expect(found?["changed"] as? [String] == [completed], "changed view:inspections \(completed)")
        #expect(found?["damaged"] as? [String] == [completed], "checksum does not match")
    }

    @Test func aCompletedInspectionPlantedInTheDraftsViewIsNeverListed() throws {
        let (completed, draft) = try twoInspections()
        // Checksum and all: only the row's disagreement with its inspection shows.
        try alterStore { txn, table in
            let planted = try Self.uuidBytes(completed)
            try txn.put(
                table("view:drafts"), planted, ViewRowChecksum.seal(table: "view:drafts", key: planted, value: []))
        }
        let listed = try jqc.run(["--json", "drafts"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let drafts = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(drafts.map { $0["id"] as? String } == [draft])
        #expect(listed.stderr.contains("the drafts view is damaged (row "))
        #expect(
            listed.stderr.contains("names inspection \(completed), which is completed): rebuilding it from the log"))
        #expect(try jqc("rebuild", "--dry-run").status == 0)
    }

    // MARK: - rebuild --dry-run

    @Test func aDryRunReportsPlantedRowsExactlyAndChangesNoByte() throws {
        let (completed, draft) = try twoInspections()
        #expect(try jqc("rebuild", "--dry-run").status == 0)
        // An edited row (with a valid checksum: a forger's, not damage) and a
        // completed inspection planted in the drafts view.
        try alterStore { txn, table in
            let inspections = table("view:inspections")
            let key = try Self.uuidBytes(draft)
            let stored = try #require(try txn.get(inspections, key))
            let value = try ViewRowChecksum.open(
                view: "inspections", table: "view:inspections", key: key, stored: stored)
            var text = value
            let name = Array("Harbor Tower".utf8)
            let at = try #require(
                (0...(text.count - name.count)).first { text[$0..<($0 + name.count)].elementsEqual(name) })
            text.replaceSubrange(at..<(at + 6), with: Array("Harbou".utf8))
            try txn.put(inspections, key, ViewRowChecksum.seal(table: "view:inspections", key: key, value: text))
            let drafts = table("view:drafts")
            let planted = try Self.uuidBytes(completed)
            try txn.put(drafts, planted, ViewRowChecksum.seal(table: "view:drafts", key: planted, value: []))
        }
        let data = storePath + "/data.mdb"
        let before = try Self.sha256(data)

        let text = try jqc.reportingKinds("rebuild", "--dry-run")
        #expect(text.status == 1)
        #expect(text.errorKind == "ViewCheckError.differences", "\(text.stderr)")
        #expect(text.errorDetail?["views"] as? [String] == ["inspections", "drafts"], "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasPrefix("inspections (version 3, stored 3, at ") && $0.hasSuffix(": 0 added, 0 removed, 1 changed")
            })
        let planted = try json("rebuild", "--dry-run")
        let plantedViews = try #require(planted["views"] as? [[String: Any]])
        func differences(_ name: String) -> [String: Any]? {
            (plantedViews.first { $0["name"] as? String == name }?["differences"] as? [[String: Any]])?.first
        }
        #expect(differences("inspections")?["changed"] as? [String] == [draft], "changed view:inspections \(draft)")
        let drafts = plantedViews.first { $0["name"] as? String == "drafts" }
        #expect(
            drafts?["added"] as? Int == 0 && drafts?["removed"] as? Int == 1 && drafts?["changed"] as? Int == 0,
            "drafts: 0 added, 1 removed, 0 changed")
        #expect(differences("drafts")?["removed"] as? [String] == [completed], "removed view:drafts \(completed)")
        #expect(
            lines.filter { $0.hasSuffix(": no change") }.count == 5, "templates, followups, issues, outbox, receptions")
        #expect(lines.filter { $0.hasPrefix("  ") }.count == 2)

        let result = try jqc.run(["--json", "rebuild", "--dry-run"])
        #expect(result.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["changes"] as? Bool == true)
        let views = try #require(object["views"] as? [[String: Any]])
        let changed = views.filter { ($0["differences"] as? [Any])?.isEmpty == false }
        #expect(changed.map { $0["name"] as? String } == ["inspections", "drafts"])
        #expect(
            (changed[0]["differences"] as? [[String: Any]])?.first?["changed"] as? [String] == [draft])
        #expect(
            (changed[1]["differences"] as? [[String: Any]])?.first?["removed"] as? [String] == [completed])
        try validate(result.stdout)

        // Only the drafts view asked for: only it is folded and reported.
        let one = try json("rebuild", "--dry-run", "drafts")
        #expect((one["views"] as? [[String: Any]])?.map { $0["name"] as? String } == ["drafts"])

        #expect(try Self.sha256(data) == before, "a dry run changed the store")

        _ = try run("rebuild")
        #expect(try jqc("rebuild", "--dry-run").status == 0)
        #expect(!(try run("drafts").stdout.contains(String(completed.prefix(8)))))
    }

    // MARK: - views

    @Test func viewsShowsVersionsPositionsAndRowsAsItsSchemaSays() throws {
        _ = try twoInspections()
        let result = try run("--json", "views")
        try validate(result.stdout)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let head = try #require(object["head"] as? Int)
        let views = try #require(object["views"] as? [[String: Any]])
        #expect(
            views.map { $0["name"] as? String } == [
                "templates", "inspections", "drafts", "followups", "issues", "outbox", "receptions",
            ])
        for view in views {
            // Every view but templates is at version 3 (the merge rules of
            // wave 9; an issue the server may hold twice).
            // The receptions view is new (version 1); the outbox holds other
            // devices' unreported submissions (version 4); drafts leave out
            // a read-only copy (version 4).
            let version =
                ["templates": 2, "receptions": 1, "outbox": 4, "drafts": 4][view["name"] as? String ?? ""] ?? 3
            #expect(view["code_version"] as? Int == version)
            #expect(view["stored_version"] as? Int == version)
            #expect(view["position"] as? Int == head)
            #expect(view["stale"] as? Bool == false)
        }
        let rows = Dictionary(uniqueKeysWithValues: views.map { ($0["name"] as! String, $0["rows"] as! Int) })
        #expect(rows["inspections"] == 2)  // two inspections, no re-inspection
        #expect(rows["drafts"] == 1)
        #expect(rows["templates"] == 2)
        let checked = try run("--json", "views", "--check")
        try validate(checked.stdout)
        let text = try run("views")
        let line = text.stdout.split(separator: "\n").first { $0.hasPrefix("inspections ") }
        #expect(
            line?.split(separator: " ").map(String.init) == [
                "inspections", "3", "3", "\(head)", "of", "\(head)", "2", "up", "to", "date",
            ])
    }

    // MARK: - Waiting for another process's rebuild

    @Test func aRecordingCommandBehindARebuildSaysItIsWaiting() throws {
        let (_, draft) = try twoInspections()
        // Hold the lock a rebuild holds, as another process's rebuild would.
        let fd = open(storePath + "/rebuild.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(flock(fd, LOCK_EX) == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Products.executable("jqc"))
        process.arguments = ["--as", "Dana", "set", String(draft.prefix(8)), "Supervisor on site", "Lee"]
        process.environment = ProcessInfo.processInfo.environment.merging(jqc.environment) { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = Pipe()
        try process.run()
        // Read stderr until the notice arrives: the command is now waiting.
        var seen = Data()
        let notice = "waiting for a rebuild of the views to finish…"
        while !String(decoding: seen, as: UTF8.self).contains(notice) {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        #expect(String(decoding: seen, as: UTF8.self).contains(notice))
        flock(fd, LOCK_UN)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try run("show", String(draft.prefix(8))).stdout.contains("Lee"))
    }

    // MARK: - The schema

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// Checks output against Schemas/cli/views.schema.json with Python's
    /// jsonschema (sharing no code with the Swift that wrote it).
    func validate(_ text: String) throws {
        let file = directory.appending("views-\(UUID().uuidString.prefix(8)).json")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let script = """
            import json, pathlib, sys
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import best_match
            schema = json.loads(pathlib.Path(sys.argv[1]).read_text(encoding="utf-8"))
            Draft202012Validator.check_schema(schema)
            error = best_match(Draft202012Validator(schema).iter_errors(
                json.loads(pathlib.Path(sys.argv[2]).read_text(encoding="utf-8"))))
            if error is not None:
                sys.exit("invalid at /" + "/".join(map(str, error.absolute_path)) + ": " + error.message)
            """
        let result = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + ["-c", script, Products.repositoryFile("Schemas/cli/views.schema.json"), file])
        guard result.status == 0 else { throw Invalid(description: result.stderr) }
    }
}
