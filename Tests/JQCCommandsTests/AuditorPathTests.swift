import Foundation
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

/// The auditor's path through the built `jqc`: ids by any unique prefix,
/// every read command on a read-only copy, permission problems named as
/// such, actors by a part of their name, the timeline as of a moment, the
/// pinned template's position and each event's chain hash.
@Suite struct AuditorPathTests {
    let scenario: AuditScenario
    var jqc: JQCRunner { scenario.jqc.reportingKinds }

    init() throws { scenario = try AuditCommandTests.shared.get() }

    /// Every stream id of the scenario's log.
    func streams() throws -> [String] {
        let lines = try jqc("log", "--json").stdout.split(separator: "\n")
        let ids = try lines.map { line -> String in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return try #require(object?["stream"] as? String)
        }
        return Array(Set(ids))
    }

    /// The shortest prefix of `id` (dashes dropped) that no other stream shares, made odd in length.
    func uniqueOddPrefix(of id: String) throws -> String {
        let digits = id.filter { $0 != "-" }
        let others = try streams().map { $0.filter { $0 != "-" } }.filter { $0 != digits }
        var length = 1
        while others.contains(where: { $0.hasPrefix(digits.prefix(length)) }) { length += 1 }
        if length % 2 == 0 { length += 1 }
        return String(digits.prefix(length))
    }

    // MARK: - Prefixes

    static let prefixCommands: [[String]] = [["audit"], ["log", "-i"], ["show"], ["audit", "--json"]]

    @Test(arguments: prefixCommands)
    func anOddLengthUniquePrefixResolves(command: [String]) throws {
        let prefix = try uniqueOddPrefix(of: scenario.parent)
        let result = try jqc.run(command + [prefix])
        #expect(result.status == 0, "\(command) \(prefix): \(result.stderr)")
        #expect(!result.stderr.contains("storage failed"))
    }

    @Test(arguments: [["audit"], ["log", "-i"]])
    func oneCharacterNamesTheSoleInspectionOfALedger(command: [String]) throws {
        let directory = TemporaryDirectory(prefix: "one-char")
        let own = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        #expect(try own("init").status == 0)
        #expect(try own("pull", "--from", SampleReference.path).status == 0)
        let started = try own("--as", "dana", "start", "-t", "11", "-f", "101", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        let id = try #require(object?["id"] as? String)
        let first = String(id.prefix(1))
        let result = try own.run(command + [first])
        #expect(result.status == 0, "\(command) \(first): \(result.stderr)")
        #expect(result.stdout.contains(id) || result.stdout.contains(id.prefix(8)), "\(result.stdout)")
        let shown = try own("show", first)
        #expect(shown.status == 0, "show \(first): \(shown.stderr)")

        // A digit no stream starts with names nothing, and says so.
        let other = try #require("0123456789abcdef".first { String($0) != first })
        let none = try own.run(command + [String(other)])
        #expect(none.status != 0)
        #expect(none.errorKind == "LookupError.noInspection", "\(none.stderr)")
    }

    @Test(arguments: [["audit"], ["log", "-i"]])
    func oneCharacterSharedByStreamsIsAmbiguousNotAStorageFailure(command: [String]) throws {
        let directory = TemporaryDirectory(prefix: "one-char-shared")
        let own = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        #expect(try own("init").status == 0)
        #expect(try own("pull", "--from", SampleReference.path).status == 0)
        // Seventeen ids cannot all start differently: sixteen hex digits.
        var firsts: [Character: Int] = [:]
        for _ in 0..<17 {
            let started = try own("--as", "dana", "start", "-t", "11", "-f", "101", "--json")
            let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
            let id = try #require(object?["id"] as? String)
            firsts[id.first!, default: 0] += 1
        }
        let shared = try #require(firsts.first { $0.value > 1 }?.key)
        let result = try own.run(command + [String(shared)])
        #expect(result.status != 0)
        #expect(result.errorKind == "LookupError.ambiguous", "\(result.stderr)")
    }

    // MARK: - Read-only copies and permissions

    /// Runs jqc on `home` as an ordinary user: root ignores permissions, so
    /// as root the command runs as `nobody` (setpriv), which they bind.
    static func runAsUser(_ home: String, scratch: String, _ arguments: [String]) throws -> ProcessResult {
        let command =
            getuid() == 0
            ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", Products.executable("jqc")]
            : [Products.executable("jqc")]
        return try ProcessRun.run(
            "/usr/bin/env", command + arguments,
            environment: ["JQC_HOME": home, "NO_COLOR": "1", "HOME": scratch, "JQC_ERRORS": "json"])
    }

    static let readCommands: [[String]] = [
        ["inspections"], ["drafts"], ["followups"], ["issues"], ["outbox"], ["stats"], ["facilities"],
        ["templates"], ["verify"], ["digest"], ["log"], ["inspections", "--json"], ["issues", "--json"],
        ["log", "--actors"],
    ]

    @Test func everyReadCommandWorksOnAReadOnlyCopy() throws {
        let own = TemporaryDirectory(prefix: "read-only")
        let copy = own.appending("copy")
        try FileManager.default.copyItem(atPath: scenario.home, toPath: copy)
        let before = try AuditScenario.listing(copy)
        try AuditScenario.chmod(copy, "a+rX,a-w")
        try AuditScenario.chmod(own.path, "a+rX")
        let scratch = own.appending("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        try AuditScenario.chmod(scratch, "a+rwx")
        defer { _ = try? AuditScenario.chmod(copy, "u+w") }

        var commands = Self.readCommands
        commands += [["show", scenario.parent], ["audit", scenario.parent], ["log", "-i", scenario.parent]]
        for command in commands {
            let result = try Self.runAsUser(copy, scratch: scratch, command)
            #expect(result.status == 0, "jqc \(command.joined(separator: " ")) on a read-only copy: \(result.stderr)")
            #expect(!result.stderr.contains("Permission denied"), "\(command): \(result.stderr)")
        }
        let listed = try Self.runAsUser(copy, scratch: scratch, ["inspections"])
        #expect(listed.stdout.contains(String(scenario.parent.prefix(8))), "\(listed.stdout)")
        #expect(try AuditScenario.listing(copy) == before, "a read command changed the copy")
    }

    @Test(arguments: [["audit"], ["log"], ["inspections"], ["show"], ["verify"]])
    func aLedgerTheUserCannotReadIsPermissionDeniedNotNoLedger(command: [String]) throws {
        let own = TemporaryDirectory(prefix: "unreadable")
        let copy = own.appending("copy")
        try FileManager.default.copyItem(atPath: scenario.home, toPath: copy)
        try AuditScenario.chmod(own.path, "a+rX")
        try AuditScenario.chmod(copy, "go-rwx")
        if getuid() != 0 { try AuditScenario.chmod(copy, "u-r") }
        let scratch = own.appending("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        try AuditScenario.chmod(scratch, "a+rwx")
        defer { _ = try? AuditScenario.chmod(copy, "u+rw") }
        var arguments = command
        if command == ["audit"] || command == ["show"] { arguments.append(scenario.parent) }
        let result = try Self.runAsUser(copy, scratch: scratch, arguments)
        #expect(result.status != 0)
        #expect(result.errorKind == "ReadAccessError.permissionDenied", "\(command): \(result.stderr)")
    }

    /// A copy whose views are behind its log: an event appended to the log
    /// alone (an `inspection.started` whose payload is not one), as a copy
    /// taken by a tool other than jqc could be.
    func copyWithViewsBehind(in own: TemporaryDirectory) throws -> String {
        let copy = own.appending("copy")
        try FileManager.default.copyItem(atPath: scenario.home, toPath: copy)
        let log = try EventLog(directory: copy + "/store")
        defer { log.close() }
        try log.append([
            SampleEvents.event(
                stream: UUID(), type: "inspection.started", note: "not a start",
                at: Timestamp(microsecondsSinceEpoch: 1))
        ])
        return copy
    }

    @Test func aListingOnAReadOnlyCopyWithStaleViewsSaysWhatWorks() throws {
        let own = TemporaryDirectory(prefix: "stale-views")
        let copy = try copyWithViewsBehind(in: own)
        try AuditScenario.chmod(copy, "a+rX,a-w")
        try AuditScenario.chmod(own.path, "a+rX")
        let scratch = own.appending("scratch")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
        try AuditScenario.chmod(scratch, "a+rwx")
        defer { _ = try? AuditScenario.chmod(copy, "u+w") }
        let listed = try Self.runAsUser(copy, scratch: scratch, ["inspections"])
        #expect(listed.status != 0)
        #expect(listed.errorKind == "ReadingError.viewsNeedWriting", "\(listed.stderr)")
        let audit = try Self.runAsUser(copy, scratch: scratch, ["audit", scenario.parent, "--no-verify"])
        #expect(audit.status == 0, "\(audit.stderr)")
    }

    @Test func theLinkScanNamesARecordItCannotRead() throws {
        let own = TemporaryDirectory(prefix: "link-scan")
        let copy = try copyWithViewsBehind(in: own)
        let runner = JQCRunner(ledger: copy)
        let result = try runner("audit", scenario.parent, "--no-verify", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let notes = try #require(report?["notes"] as? [String])
        #expect(notes.contains { $0.contains("found by scanning the log") }, "\(notes)")
        let position = scenario.eventCount + 1
        #expect(
            notes.contains { $0.contains("position \(position): the inspection.started event is unreadable") },
            "\(notes)")
        // The re-inspection is still found by the scan.
        let children = try #require(report?["children"] as? [[String: Any]])
        #expect(children.compactMap { $0["id"] as? String } == [scenario.child])
    }

    // MARK: - Actors

    @Test(arguments: ["ANA", "dan", "Dana", "ync-wor"])
    func anActorIsFoundByAPartOfItsName(part: String) throws {
        let result = try jqc("log", "--actor", part)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(!lines.isEmpty && lines.first != "No events match.", "--actor \(part) found nothing")
        #expect(lines.allSatisfy { $0.lowercased().contains(part.lowercased()) }, "\(result.stdout)")
    }

    @Test func theActorsOfTheLogAreListedWithTheirCounts() throws {
        let json = try jqc("log", "--actors", "--json")
        #expect(json.status == 0, "\(json.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let names = rows.compactMap { $0["name"] as? String }
        #expect(names.contains("dana") && names.contains("sync-worker"), "\(rows)")
        let total = rows.compactMap { $0["events"] as? Int }.reduce(0, +)
        #expect(total == scenario.eventCount)
        let dana = try #require(rows.first { $0["name"] as? String == "dana" })
        #expect(dana["id"] as? String == "local:dana" && dana["verified"] as? Bool == false)
        let danaEvents = try jqc("log", "--actor", "local:dana").stdout.split(separator: "\n").count
        #expect(dana["events"] as? Int == danaEvents)

        let text = try jqc("log", "--actors")
        #expect(text.stdout.contains("local:dana") && text.stdout.contains("\(danaEvents)"), "\(text.stdout)")
        let one = try jqc("log", "--actors", "-i", scenario.child, "--json")
        let childRows = try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [[String: Any]]
        #expect(childRows?.compactMap { $0["name"] as? String } == ["dana"], "\(one.stdout)")
    }

    @Test func aWrongDigestProvesNoRecordRatherThanRecordsOneToZero() throws {
        let digest = scenario.digestAfterSubmit
        let wrong = String(digest.dropLast()) + (digest.hasSuffix("0") ? "1" : "0")
        let text = try jqc("audit", scenario.parent, "--digest", wrong)
        #expect(text.status == 1)
        let report = try scenario.report(scenario.parent, "--digest", wrong, expectingStatus: 1)
        let verification = report["verification"] as? [String: Any]
        // The digest is checked by walking the log: it walked records, and proved none of them unchanged.
        #expect(
            verification?["verified_through"] as? Int == 0 && (verification?["checked"] as? Int ?? 0) > 0,
            "no record is proven unchanged: \(String(describing: verification))")
        #expect(!text.stdout.contains("1–0"))
        let directory = TemporaryDirectory(prefix: "wrong-digest")
        let file = directory.appending("r.html")
        _ = try jqc("audit", scenario.parent, "--digest", wrong, "--format", "html", "-o", file)
        let page = try String(contentsOfFile: file, encoding: .utf8)
        #expect(page.contains("No record is proven unchanged") && !page.contains("1–0"))
    }

    // MARK: - As of a moment, pins, chain hashes

    @Test func asOfAPositionTheTextShowsTheTimelineUpToIt() throws {
        let envelopes = try scenario.envelopes(of: scenario.parent)
        let positions = envelopes.compactMap { $0["position"] as? Int }
        let cut = positions[4]
        let result = try jqc("audit", scenario.parent, "--as-of", "\(cut)")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let heading = try #require(lines.firstIndex { $0.hasPrefix("TIMELINE (5 events") }, "\(result.stdout)")
        let shown = lines[(heading + 1)...].compactMap { line -> Int? in
            Int(line.trimmingCharacters(in: .whitespaces).prefix { $0.isNumber })
        }
        #expect(shown == Array(positions.prefix(5)), "\(result.stdout)")
        #expect(result.stdout.contains("set Floors (2): 3 → 4"))
        #expect(!result.stdout.contains("submitted the inspection"))
    }

    @Test func aTemplatePinnedByAnEarlierInspectionHasItsPosition() throws {
        let parentPin = try #require(
            try scenario.envelopes(of: scenario.parent).first { $0["type"] as? String == "template.pinned" })
        let child = try scenario.report(scenario.child)
        let template = try #require(child["template"] as? [String: Any])
        #expect(template["pinned_at_position"] as? Int == parentPin["position"] as? Int, "\(template)")
        #expect((template["source"] as? String)?.contains("earlier inspection at position") == true)
    }

    @Test func everyEventCarriesItsChainHash() throws {
        let digest = try jqc("digest").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = digest.split(separator: ":")
        let (head, hash) = (Int(parts[1]), String(parts[2]))
        var found = false
        for id in [scenario.parent, scenario.child, scenario.discarded] {
            let timeline = try #require(try scenario.report(id)["timeline"] as? [[String: Any]])
            for entry in timeline {
                let chainHash = try #require(entry["chain_hash"] as? String, "no chain_hash in \(entry)")
                #expect(chainHash.count == 64 && chainHash.allSatisfy(\.isHexDigit))
                if entry["position"] as? Int == head {
                    #expect(chainHash == hash)
                    found = true
                }
            }
        }
        #expect(found, "no report holds the head's event")
        let directory = TemporaryDirectory(prefix: "chain-hash")
        let file = directory.appending("r.html")
        let html = try jqc("audit", scenario.discarded, "--format", "html", "-o", file)
        #expect(html.status == 0, "\(html.stderr)")
        let page = try String(contentsOfFile: file, encoding: .utf8)
        #expect(page.contains("chain hash <code class=\"hash\">\(hash)</code>"))
    }
}
