import Foundation
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LMDB
import LedgerCore
@_spi(RawAppend) import LedgerStore
import LedgerTestSupport
import Testing

/// `jqc log` and `jqc audit` through the built binary, on a ledger made the
/// way an inspector and the sync worker make one, then damaged the way
/// someone with the files would damage it.
@Suite struct AuditCommandTests {
    /// Made once for the suite (about thirty runs of jqc); tests that damage
    /// a ledger damage their own copy of it.
    static let shared = Result { try AuditScenario() }
    let scenario: AuditScenario
    var jqc: JQCRunner { scenario.jqc.reportingKinds }

    init() throws { scenario = try Self.shared.get() }

    /// A copy of the scenario's ledger that this test may damage.
    func damageable() throws -> AuditScenario { try scenario.copy() }

    // MARK: - The timeline

    @Test func theTimelineHoldsEveryEventTypeWithOldAndNewValues() throws {
        let report = try scenario.report(scenario.parent)
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        let types = Set(timeline.compactMap { $0["type"] as? String })
        let discarded = try #require(try scenario.report(scenario.discarded)["timeline"] as? [[String: Any]])
        let allTypes = types.union(discarded.compactMap { $0["type"] as? String })
        // A handover needs a second ledger: HandoverCommandTests audits one; an
        // adoption another device's submission: AdoptSendingEndToEndTests.
        #expect(
            allTypes
                == Set(
                    InspectionEventType.allCases.filter { ![.handedOver, .received, .sendAdopted].contains($0) }.map(
                        \.rawValue)))

        let summaries = timeline.compactMap { $0["summary"] as? String }
        for expected in [
            "set Floors (2): (unanswered) → 3", "set Floors (2): 3 → 4",
            #"cleared Notes (9): "Tap drips" → (unanswered)"#,
            "high: Leaking tap", "submitted the inspection: score", "follow-up required",
            "failed (HTTP 503): Service Unavailable, retry at", "sync gave up on issue", "retry requested for issue",
            "failed for good, from the outbox: sent by hand",
            "uploaded photo", "→ /uploads/", "the server accepted the inspection as 481",
        ] {
            #expect(summaries.contains { $0.contains(expected) }, "no timeline entry says \(expected)")
        }
        let positions = timeline.compactMap { $0["position"] as? Int }
        #expect(positions == positions.sorted())
        let change = try #require(
            timeline.first { ($0["summary"] as? String) == "set Floors (2): 3 → 4" }?["changes"] as? [[String: Any]])
        #expect(change.first?["old"] as? Int == 3 && change.first?["new"] as? Int == 4)
        let envelope = try #require(timeline.first?["event"] as? [String: Any])
        #expect(envelope["type"] as? String == "template.pinned")

        #expect((report["result"] as? [String: Any])?["headline"] as? String == "INTACT")
        let template = try #require(report["template"] as? [String: Any])
        #expect(template["name"] as? String == "Restroom QC" && template["version"] as? Int == 3)
        #expect(template["hash_matches"] as? Bool == true)
        let children = try #require(report["children"] as? [[String: Any]])
        #expect(children.map { $0["id"] as? String } == [scenario.child])
        let child = try scenario.report(scenario.child)
        #expect((child["parent"] as? [String: Any])?["id"] as? String == scenario.parent)
        let form = try #require(report["form"] as? [String: Any])
        #expect(form["follow_up_resolved_by"] as? String == scenario.child)
        let photos = try #require(report["photos"] as? [[String: Any]])
        #expect(photos.count == 3)
        #expect(photos.allSatisfy { ($0["file"] as? [String: Any])?["status"] as? String == "matches" })
        let sync = try #require(report["sync"] as? [String: Any])
        #expect(sync["state"] as? String == "synced")
        #expect((sync["outcomes"] as? [Any])?.count == 9, "the dismissal is one of them")

        let text = try jqc("audit", String(scenario.parent.prefix(8)))
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines[1] == "RESULT: INTACT")
        #expect(text.stdout.contains("Re-inspections  \(scenario.child) [completed]"))
        #expect(text.stdout.contains("photos: all 3 stored files match their recorded SHA-256"))
    }

    @Test func theLogListsEveryEventOneLineEachAndExportsValidJSON() throws {
        let text = try jqc("log")
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == scenario.eventCount)
        let events = try scenario.events()
        #expect(events.count == scenario.eventCount)
        let set = events.filter { ($0["payload"] as? [String: Any])?["field_id"] as? String == "2" }
        #expect(
            set.contains {
                ($0["payload"] as? [String: Any])?["value"] as? Int == 4 && AuditScenario.actor($0) == "dana"
                    && ($0["actor"] as? [String: Any])?["verified"] as? Bool == false
            }, "dana (unverified): set Floors (2) = 4")
        #expect(
            events.contains {
                $0["type"] as? String == "sync.photo_uploaded" && AuditScenario.actor($0) == "sync-worker"
            })
        #expect(
            events.contains {
                $0["type"] as? String == "inspection.discarded"
                    && ($0["payload"] as? [String: Any])?["reason"] as? String == "wrong facility"
            })

        let json = try jqc("log", "--json")
        let file = scenario.directory.appending("log.jsonl")
        try json.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let validated = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + [Products.repositoryFile("Tools/validate-events"), file])
        #expect(validated.status == 0, "\(validated.stderr)")
        #expect(validated.stdout.contains("ok: \(scenario.eventCount) events valid"))
    }

    static let filters: [([String], @Sendable (Int, String?) -> Bool, String)] = [
        (["--type", "sync"], { _, line in line?.contains("sync-worker") == true }, "only sync outcomes"),
        (["--actor", "DANA", "--limit", "3"], { count, _ in count == 3 }, "three of dana's"),
        (["--since", "5", "--until", "7"], { count, _ in count == 3 }, "positions 5 to 7"),
        (["--type", "inspection.discarded"], { count, line in count == 1 && line?.contains("wrong") == true }, "one"),
        (["--until", "2000-01-01"], { count, line in count == 1 && line == "No events match." }, "nothing"),
    ]

    @Test(arguments: filters)
    func logFilters(arguments: [String], check: @Sendable (Int, String?) -> Bool, name: String) throws {
        let result = try jqc.run(["log"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(check(lines.count, lines.first), "\(name): \(result.stdout)")
        for line in lines where arguments.contains("sync") { #expect(line.contains("sync-worker"), "\(line)") }
    }

    @Test func theLogOfOneInspectionAndATimeWindow() throws {
        let envelopes = try scenario.envelopes(of: scenario.parent)
        let first = try #require(envelopes.first?["recorded_at"] as? String)
        let fourth = try #require(envelopes[3]["recorded_at"] as? String)
        let result = try jqc(
            "log", "--inspection", String(scenario.parent.prefix(6)), "--since", first, "--until", fourth)
        #expect(result.stdout.split(separator: "\n").count == 4, "\(result.stdout)")
        let today = String(first.prefix(10))
        let day = try jqc("log", "--inspection", scenario.parent, "--since", today, "--until", today)
        #expect(day.stdout.split(separator: "\n").count == envelopes.count)
    }

    // MARK: - The form at any moment

    @Test func asOfAPositionOrATimeTheFormIsWhatShowPrintedThen() throws {
        #expect(scenario.snapshots.count >= 5)
        for snapshot in scenario.snapshots {
            let report = try scenario.report(scenario.parent, "--as-of", String(snapshot.position))
            let form = try #require(report["form"] as? [String: Any])
            for (key, value) in snapshot.show {
                #expect(
                    JSONComparison.holds(value, in: form[key]),
                    "as of \(snapshot.position), \(key) is \(String(describing: form[key])), show printed \(value)")
            }
            // The same moment named by the time of the event at that position gives the same form.
            let atPosition = try scenario.run("log", "--since", String(snapshot.position), "--limit", "1", "--json")
            let event = try JSONSerialization.jsonObject(with: Data(atPosition.stdout.utf8)) as? [String: Any]
            let time = try #require(event?["recorded_at"] as? String)
            let byTime = try scenario.report(scenario.parent, "--as-of", time)
            #expect(JSONComparison.equal(byTime["form"], report["form"]), "as of \(time)")
            // In text, the form exactly as 'jqc show' printed it.
            let text = try jqc("audit", scenario.parent, "--as-of", String(snapshot.position))
            #expect(text.stdout.contains(snapshot.text), "as of \(snapshot.position):\n\(text.stdout)")
        }
    }

    @Test func asOfAMomentBeforeTheInspectionIsRefused() throws {
        let result = try jqc("audit", scenario.child, "--as-of", "1")
        #expect(result.status == 1)
        #expect(result.errorKind == "AuditAssemblyError.nothingAsOf", "\(result.stderr)")
    }

    // MARK: - Discarded drafts

    @Test func discardedDraftsAreVisibleToTheAuditorAndToNobodyElse() throws {
        for listing in ["inspections", "drafts"] {
            let listed = try jqc(listing, "--json")
            #expect(listed.status == 0)
            #expect(!listed.stdout.contains(scenario.discarded), "\(listing) lists the discarded draft")
        }
        let audit = try jqc("audit", String(scenario.discarded.prefix(8)))
        #expect(audit.status == 0, "\(audit.stderr)")
        let report = try scenario.report(String(scenario.discarded.prefix(8)))
        let inspection = try #require(report["inspection"] as? [String: Any])
        #expect(
            inspection["status"] as? String == "discarded"
                && inspection["discard_reason"] as? String == "wrong facility")
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        let discarding = timeline.first { $0["type"] as? String == "inspection.discarded" }
        #expect(((discarding?["actor"] as? [String: Any])?["name"] as? String) == "dana")
        #expect(((discarding?["actor"] as? [String: Any])?["verified"] as? Bool) == false)
        #expect(audit.stdout.contains(#"set Supervisor on site (2): (unanswered) → "Ann Lee""#))
        #expect(try scenario.envelopes(of: scenario.discarded).last?["type"] as? String == "inspection.discarded")
    }

    // MARK: - Tampering

    @Test func aChangedEventIsFoundAtItsPosition() throws {
        let scenario = try damageable()
        let jqc = scenario.jqc.reportingKinds
        let position = try scenario.position(of: scenario.parent, where: "set Floors (2) = 4")
        try scenario.tamper { txn, events in
            var value = try #require(try txn.get(events, BigEndian.bytes(position)))
            // The actor's name "dana" becomes "dina": the kind of edit a forger makes.
            let index = try #require(AuditScenario.find(Array("dana".utf8), in: value))
            value[index + 1] = UInt8(ascii: "i")
            try txn.put(events, BigEndian.bytes(position), value)
        }
        // The default audit proves the inspection's records through the Merkle tree: the changed one is
        // not the leaf the tree holds at its position.
        let result = try jqc("audit", scenario.parent)
        #expect(result.status == 1)
        let proven = try scenario.report(scenario.parent, expectingStatus: 1)
        let verification = proven["verification"] as? [String: Any]
        #expect(verification?["method"] as? String == "proofs", "the Merkle tree's proofs")
        let proofFinding = verification?["finding"] as? [String: Any]
        #expect(
            proofFinding?["kind"] as? String == "changed" && proofFinding?["position"] as? Int == Int(position),
            "record \(position) was changed after it was written: \(result.stdout)")
        #expect(result.stdout.contains("FAILS THE CHAIN CHECK"))
        // The full walk finds it by its chain hash.
        let walked = try jqc("audit", scenario.parent, "--full")
        #expect(walked.status == 1)
        let walkedFinding = try #require(
            (try scenario.report(scenario.parent, "--full", expectingStatus: 1)["verification"] as? [String: Any])?[
                "finding"] as? [String: Any])
        #expect(walkedFinding["kind"] as? String == "changed" && walkedFinding["position"] as? Int == Int(position))
        #expect(result.errorKind == "AuditFailure", "NOT INTACT: \(result.stderr)")
        let report = try scenario.report(scenario.parent, expectingStatus: 1)
        let finding = try #require((report["verification"] as? [String: Any])?["finding"] as? [String: Any])
        #expect(finding["kind"] as? String == "changed" && finding["position"] as? Int == Int(position))
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        let entry = try #require(timeline.first { $0["position"] as? Int == Int(position) })
        #expect(entry["chain"] as? String == "failed")
        #expect(timeline.first?["chain"] as? String == "verified")
        try scenario.validate(report: scenario.reportText(scenario.parent, expectingStatus: 1))
    }

    @Test func aDeletedEventIsFound() throws {
        let scenario = try damageable()
        let jqc = scenario.jqc.reportingKinds
        let position = try scenario.position(of: scenario.parent, where: "cleared Notes (9)")
        try scenario.tamper { txn, events in _ = try txn.delete(events, BigEndian.bytes(position)) }
        let result = try jqc("audit", scenario.parent)
        #expect(result.status == 1)
        let removed = try #require(
            (try scenario.report(scenario.parent, expectingStatus: 1)["verification"] as? [String: Any])?["finding"]
                as? [String: Any])
        #expect(removed["kind"] as? String == "missing" && removed["position"] as? Int == Int(position), "\(removed)")
        #expect(
            result.stdout.contains(
                "position \(position): the stream index names position \(position) as version 6 of this inspection, "
                    + "but the log holds no record there: it was removed"))
        let timeline = try #require(
            try scenario.report(scenario.parent, expectingStatus: 1)["timeline"] as? [[String: Any]])
        let hole = try #require(timeline.first { $0["position"] as? Int == Int(position) })
        #expect(hole["event"] is NSNull && hole["summary"] as? String == "(no record)")
        let log = try jqc("log")
        #expect(log.stdout.contains("  (no record: position \(position) is missing from the log)"))
        let stream = try jqc("log", "--inspection", scenario.parent)
        #expect(stream.stdout.contains("  (version 6 of \(scenario.parent.prefix(8))… is indexed here, but the log"))
    }

    @Test func aReplacedOrMissingPhotoFileIsFound() throws {
        let scenario = try damageable()
        let jqc = scenario.jqc.reportingKinds
        let photos = try #require(try scenario.report(scenario.parent)["photos"] as? [[String: Any]])
        let replaced = try #require(photos[0]["sha256"] as? String)
        let removed = try #require(photos[1]["sha256"] as? String)
        let forged = SampleReference.png(red: 1)
        try forged.write(to: URL(fileURLWithPath: scenario.home + "/photos/" + replaced))
        try FileManager.default.removeItem(atPath: scenario.home + "/photos/" + removed)

        let result = try jqc("audit", scenario.parent)
        #expect(result.status == 1)
        let actual = SHA256Hasher().digest([UInt8](forged)).hex
        let report = try scenario.report(scenario.parent, expectingStatus: 1)
        let verdict = try #require(report["result"] as? [String: Any])
        #expect(verdict["verdict"] as? String == "PROBLEMS" && (verdict["problems"] as? [Any])?.count == 2)
        #expect((report["verification"] as? [String: Any])?["intact"] as? Bool == true, "an intact chain")
        let statuses = (report["photos"] as? [[String: Any]])?.map {
            ($0["file"] as? [String: Any])?["status"] as? String
        }
        #expect(statuses == ["altered", "missing", "matches"], "2 of 3 stored files missing or altered")
        let checked = try #require(report["photos"] as? [[String: Any]])
        #expect((checked[0]["file"] as? [String: Any])?["actual_sha256"] as? String == actual)
        #expect((checked[1]["file"] as? [String: Any])?["status"] as? String == "missing")
    }

    @Test func aTruncatedLogIsFound() throws {
        let scenario = try damageable()
        let jqc = scenario.jqc.reportingKinds
        let count = UInt64(scenario.eventCount)
        try scenario.tamper { txn, events in
            for position in (count - 2)...count { _ = try txn.delete(events, BigEndian.bytes(position)) }
        }
        // The discarded draft was recorded last: its stream lost its end.
        // The proofs name the stream's first lost record; the full walk names the truncation.
        let proven = try jqc("audit", scenario.discarded)
        #expect(proven.status == 1)
        let lost = try #require(
            (try scenario.report(scenario.discarded, expectingStatus: 1)["verification"] as? [String: Any])?["finding"]
                as? [String: Any])
        #expect(lost["kind"] as? String == "missing" && lost["position"] as? Int == Int(count - 2), "\(lost)")
        let result = try jqc("audit", scenario.discarded, "--full")
        #expect(result.status == 1)
        let truncated = try #require(
            (try scenario.report(scenario.discarded, "--full", expectingStatus: 1)["verification"] as? [String: Any])?[
                "finding"] as? [String: Any])
        #expect(truncated["kind"] as? String == "truncated", "\(truncated)")
        #expect(truncated["position"] as? Int == Int(count - 2), "it had \(count) records, now it ends at \(count - 3)")
        #expect(result.stdout.contains("position \(count): the stream index names position \(count)"))
        let verify = try jqc("verify")
        #expect(verify.status == 1 && verify.stderr.contains("truncated"))
    }

    // MARK: - Digests and skipping the walk

    @Test func aDigestHandedOutEarlierIsCheckedAndStated() throws {
        let digest = scenario.digestAfterSubmit
        let result = try jqc("audit", scenario.parent, "--digest", digest)
        #expect(result.status == 0, "\(result.stderr)")
        let report = try scenario.report(scenario.parent, "--digest", digest)
        #expect((report["verification"] as? [String: Any])?["digest"] as? String == digest)
        #expect((report["verification"] as? [String: Any])?["intact"] as? Bool == true, "the log extends the digest")

        let forged = String(digest.dropLast()) + (digest.hasSuffix("0") ? "1" : "0")
        let mismatch = try jqc("audit", scenario.parent, "--digest", forged)
        #expect(mismatch.status == 1)
        let mismatched = try scenario.report(scenario.parent, "--digest", forged, expectingStatus: 1)
        let finding = (mismatched["verification"] as? [String: Any])?["finding"] as? [String: Any]
        #expect(finding?["kind"] as? String == "digest_mismatch", "the log no longer extends the digest: \(mismatched)")
    }

    @Test func noVerifySkipsTheWalkAndSaysSo() throws {
        let result = try jqc("audit", scenario.parent, "--no-verify")
        #expect(result.status == 0)
        let report = try scenario.report(scenario.parent, "--no-verify")
        #expect((report["result"] as? [String: Any])?["verdict"] as? String == "NOT VERIFIED")
        #expect((report["verification"] as? [String: Any])?["intact"] is NSNull)
    }

    static let mistakes: [([String], String)] = [
        (["audit"], "missing argument ID"),
        (["audit", "abc", "--as-of", "yesterday"], "expected a position (a whole number such as 42) or a time"),
        (["audit", "abc", "--format", "pdf"], "expected text, json or html"),
        (
            ["audit", "abc", "--no-verify", "--digest", "jqc-digest-v1:1:" + String(repeating: "0", count: 64)],
            "--digest with --no-verify"
        ),
        (["audit", "abc", "--digest", "nope"], "expected jqc-digest-v1"),
        (["log", "--since", "soon"], "invalid value 'soon' for '--since'"),
        (["log", "--limit", "-1"], "0 or more"),
    ]

    @Test(arguments: mistakes)
    func usageMistakesExitWithStatusTwo(arguments: [String], message: String) throws {
        let result = try jqc.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    // MARK: - The JSON report and its schema

    @Test func theJSONReportMatchesItsSchema() throws {
        try scenario.validate(report: scenario.reportText(scenario.parent))
        try scenario.validate(report: scenario.reportText(scenario.discarded))
        try scenario.validate(report: scenario.reportText(scenario.child, "--as-of", String(scenario.eventCount - 4)))
        let file = scenario.directory.appending("written.json")
        let written = try jqc("audit", scenario.parent, "--format", "json", "--output", file)
        #expect(written.stdout == "Wrote the json audit report to \(file): INTACT\n")
        try scenario.validate(report: String(contentsOfFile: file, encoding: .utf8))
        // The check bites: a report without its verification is refused.
        var broken = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        broken["verification"] = nil
        let text = String(decoding: try JSONSerialization.data(withJSONObject: broken), as: UTF8.self)
        #expect(throws: AuditScenario.Invalid.self) { try scenario.validate(report: text) }
    }

    // MARK: - The HTML report in a browser

    @Test func theHTMLReportOpensInABrowserWithItsTimelineAndPhotos() throws {
        let file = scenario.directory.appending("report.html")
        let written = try jqc(
            "audit", scenario.parent, "--format", "html", "-o", file, "--digest", scenario.digestAfterSubmit)
        #expect(written.status == 0, "\(written.stderr)")
        let chromium = try #require(
            ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            },
            "chromium is not installed: run Tools/setup (it installs Debian's chromium)")
        let profile = scenario.directory.appending("chromium-profile")
        let result = try ProcessRun.run(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile)",
                "--enable-logging=stderr", "--v=0", "--dump-dom", "file://\(file)",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let dom = result.stdout
        #expect(dom.contains("<h1>INTACT</h1>"))
        #expect(dom.contains(scenario.digestAfterSubmit))
        let positions = try scenario.envelopes(of: scenario.parent).compactMap { $0["position"] as? Int }
        for position in positions { #expect(dom.contains("id=\"event-\(position)\""), "no timeline row \(position)") }
        #expect(dom.contains("set Floors (2): 3 → 4"))
        let images = dom.components(separatedBy: "<img src=\"data:image/png;base64,").count - 1
        #expect(images == 3)
        #expect(dom.contains("grid-column: 7 / span 6; grid-row: 6 / span 1"))
        // Console messages (an error, a blocked fetch) are logged with CONSOLE.
        for marker in ["CONSOLE", "Uncaught", "Refused to"] {
            #expect(!result.stderr.contains(marker), "the browser reported: \(result.stderr)")
        }
    }

    // MARK: - Read-only copies

    @Test func auditorsWorkOnAReadOnlyCopyWithoutASession() throws {
        let own = TemporaryDirectory(prefix: "audit-copy")
        let copy = own.appending("copy")
        try FileManager.default.copyItem(atPath: scenario.home, toPath: copy)
        #expect(!FileManager.default.fileExists(atPath: copy + "/credentials.json"))
        let before = try AuditScenario.listing(copy)
        let asRoot = getuid() == 0
        // Root ignores permissions; the copy is read by an ordinary user then.
        try AuditScenario.chmod(copy, "a+rX,a-w")
        if asRoot { try AuditScenario.chmod(own.path, "a+rX") }
        let output = own.appending("out")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        try AuditScenario.chmod(output, "a+rwx")
        defer {
            // Writable again, so the directory can be removed (the directory lives until then).
            _ = try? AuditScenario.chmod(copy, "u+w")
            withExtendedLifetime(own) {}
        }

        func run(_ arguments: String...) throws -> ProcessResult {
            let command =
                asRoot
                ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", Products.executable("jqc")]
                : [Products.executable("jqc")]
            return try ProcessRun.run(
                "/usr/bin/env", command + arguments, environment: ["JQC_HOME": copy, "NO_COLOR": "1", "HOME": output])
        }
        let verify = try run("--json", "verify")
        #expect(verify.status == 0, "\(verify.stderr)")
        let verified = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
        #expect(verified?["intact"] as? Bool == true && verified?["checked"] as? Int == scenario.eventCount)
        let digest = try run("digest")
        #expect(digest.stdout.hasPrefix("jqc-digest-v1:\(scenario.eventCount):"))
        let log = try run("log", "--inspection", scenario.parent)
        #expect(log.status == 0, "\(log.stderr)")
        let audit = try run("audit", scenario.parent)
        #expect(audit.status == 0, "\(audit.stderr)")
        let report = try JSONSerialization.jsonObject(
            with: Data(try run("--json", "audit", scenario.parent).stdout.utf8))
        #expect(((report as? [String: Any])?["result"] as? [String: Any])?["verdict"] as? String == "INTACT")
        if asRoot { #expect(audit.stdout.contains("opened without LMDB's lock file")) }
        let html = try run("audit", scenario.parent, "--format", "html", "-o", output + "/r.html")
        #expect(html.status == 0, "\(html.stderr)")
        // Nothing in the copy was written, created or removed.
        #expect(try AuditScenario.listing(copy) == before)
    }
}

// MARK: - The scenario

/// A ledger with an inspection (photos, an issue, a signature, a follow-up,
/// every kind of sync outcome), its re-inspection and a discarded draft,
/// and `jqc show` as it printed the inspection at several moments.
final class AuditScenario: @unchecked Sendable {
    let directory: TemporaryDirectory
    let jqc: JQCRunner
    var home: String { jqc.ledger }
    private(set) var parent = ""
    private(set) var child = ""
    private(set) var discarded = ""
    private(set) var digestAfterSubmit = ""
    /// `jqc show ID --json` and its text, with the log's head when printed.
    private(set) var snapshots: [(position: UInt64, show: [String: Any], text: String)] = []
    private(set) var eventCount = 0

    /// A copy of `other`'s ledger in a directory of its own.
    private init(copying other: AuditScenario) throws {
        directory = TemporaryDirectory(prefix: "audit-test")
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try FileManager.default.copyItem(atPath: other.home, toPath: home)
        (parent, child, discarded) = (other.parent, other.child, other.discarded)
        (digestAfterSubmit, snapshots, eventCount) = (other.digestAfterSubmit, other.snapshots, other.eventCount)
    }

    func copy() throws -> AuditScenario { try AuditScenario(copying: self) }

    init() throws {
        // The shared scenario lives as long as the test process; removed on the way out.
        directory = TemporaryDirectory(prefix: "audit-scenario")
        ExitCleanup.remove(atExit: directory.path)
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        try run("init")
        try run("pull", "--from", SampleReference.path)
        let photo = try SampleReference.writePNG(in: directory.path, name: "area.png", red: 30)
        let leak = try SampleReference.writePNG(in: directory.path, name: "leak.png", red: 90)
        let signature = try SampleReference.writePNG(in: directory.path, name: "sig.png", red: 250)

        parent = try id(of: try run("--as", "dana", "start", "-t", "11", "-f", "101", "-a", "1001", "--json"))
        try snapshot()
        for (field, value) in [("Floors", "3"), ("2", "4"), ("Notes", "Tap drips")] {
            try run("--as", "dana", "set", parent, field, value)
        }
        try run("--as", "dana", "clear", parent, "Notes")
        try snapshot()
        try run("--as", "dana", "photo", parent, "10", photo)
        try run("--as", "dana", "flag", parent, "-s", "high", "-d", "Leaking tap", "--photo", leak)
        try run("--as", "dana", "sign", parent, "11", signature)
        try run("--as", "dana", "set", parent, "5", "pass")
        try run("--as", "dana", "set", parent, "3", "5")
        try snapshot()
        try run("--as", "dana", "submit", parent, "--follow-up")
        try snapshot()
        digestAfterSubmit = try run("digest").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try recordSyncOutcomes()
        try snapshot()

        child = try id(of: try run("--as", "dana", "start", "--reinspect", parent, "--json"))
        for (field, value) in [("2", "5"), ("3", "5"), ("5", "pass")] {
            try run("--as", "dana", "set", child, field, value)
        }
        try run("--as", "dana", "submit", child)
        try snapshot()

        discarded = try id(of: try run("--as", "dana", "start", "-t", "22", "-f", "102", "--json"))
        try run("--as", "dana", "set", discarded, "2", "Ann Lee")
        try run("--as", "dana", "discard", discarded, "--reason", "wrong facility")
        eventCount = try run("log").stdout.split(separator: "\n").count
    }

    @discardableResult
    func run(_ arguments: String...) throws -> ProcessResult {
        let result = try jqc.run(arguments)
        guard result.status == 0 else { throw Failure("jqc \(arguments) failed: \(result.stderr)") }
        return result
    }

    func id(of result: ProcessResult) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        guard let id = object?["id"] as? String else { throw Failure("no id in \(result.stdout)") }
        return id
    }

    /// Records what `jqc show` prints now, with the head it printed it at.
    func snapshot() throws {
        let digest = try run("digest", "--json").stdout
        let head = try JSONSerialization.jsonObject(with: Data(digest.utf8)) as? [String: Any]
        let show = try JSONSerialization.jsonObject(with: Data(try run("show", parent, "--json").stdout.utf8))
        let text = try run("show", parent).stdout.trimmingCharacters(in: .newlines)
        guard let position = head?["position"] as? Int, let object = show as? [String: Any] else {
            throw Failure("unexpected digest or show output")
        }
        snapshots.append((UInt64(position), object, text))
    }

    /// Every kind of sync outcome, recorded as the sync worker records them.
    func recordSyncOutcomes() throws {
        let config =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: home + "/config.json"))) as? [String: Any]
        guard let deviceText = config?["device_id"] as? String, let device = UUID(uuidString: deviceText),
            let stream = UUID(uuidString: parent)
        else { throw Failure("no device id") }
        let ledger = try InspectionLedger(storePath: home + "/store", photosPath: home + "/photos")
        defer { ledger.close() }
        guard let state = try ledger.state(of: stream), let issue = state.issues.first?.id else {
            throw Failure("the inspection has no issue")
        }
        let worker = Actor(id: "7", name: "sync-worker", verified: true)
        let photo = state.photos[0].photo.photoID
        let later = Timestamp(microsecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1_000_000) + 30_000_000)
        var events: [InspectionEvent] = [
            .syncAttemptFailed(
                SyncAttemptFailed(
                    item: SyncItem(kind: .photo, id: photo), attempt: 1, error: "Service Unavailable", httpStatus: 503,
                    willRetry: true, nextAttemptAt: later)),
            .syncGaveUp(
                SyncGaveUp(item: SyncItem(kind: .issue, id: issue), error: "validation: description too short")),
            .syncDismissed(SyncDismissed(item: SyncItem(kind: .issue, id: issue), reason: "sent by hand")),
            .syncRetryRequested(SyncRetryRequested(item: SyncItem(kind: .issue, id: issue))),
        ]
        for captured in state.photos {
            events.append(
                .photoUploaded(
                    PhotoUploaded(
                        photoID: captured.photo.photoID, serverPath: "/uploads/\(captured.photo.sha256.hex).png")))
        }
        events += [
            .inspectionAccepted(InspectionAccepted(serverID: "481")),
            .issueAccepted(IssueAccepted(issueID: issue, serverID: "77")),
        ]
        for event in events {
            let now = Timestamp(microsecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1_000_000))
            try ledger.append([event.pending(stream: stream, actor: worker, device: device, recordedAt: now)])
        }
    }

    // MARK: - Reading reports

    func reportText(_ id: String, _ arguments: String..., expectingStatus status: Int32 = 0) throws -> String {
        let result = try jqc.run(["audit", id, "--json"] + arguments)
        guard result.status == status else {
            throw Failure("audit \(arguments) exited \(result.status), not \(status): \(result.stderr)")
        }
        return result.stdout
    }

    func report(_ id: String, _ arguments: String..., expectingStatus status: Int32 = 0) throws -> [String: Any] {
        let result = try jqc.run(["audit", id, "--json"] + arguments)
        guard result.status == status else {
            throw Failure("audit \(arguments) exited \(result.status), not \(status): \(result.stderr)")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw Failure("the report is not an object")
        }
        return object
    }

    /// Every event of the log, as `jqc log --json` exports them.
    func events() throws -> [[String: Any]] {
        try run("log", "--json").stdout.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw Failure("not an object: \(line)")
            }
            return object
        }
    }

    /// The name of the actor an exported event records.
    static func actor(_ event: [String: Any]) -> String? { (event["actor"] as? [String: Any])?["name"] as? String }

    func envelopes(of id: String) throws -> [[String: Any]] {
        try run("log", "--inspection", id, "--json").stdout.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw Failure("not an object: \(line)")
            }
            return object
        }
    }

    /// The position of the inspection's event whose log line contains `words`.
    func position(of id: String, where words: String) throws -> UInt64 {
        let line = try run("log", "--inspection", id).stdout.split(separator: "\n").first { $0.contains(words) }
        guard let line, let position = UInt64(line.split(separator: " ").first ?? "") else {
            throw Failure("no event says \(words)")
        }
        return position
    }

    /// Writes to the `events` table behind the log's back, as someone with
    /// the file would.
    func tamper(_ body: (Transaction, Table) throws -> Void) throws {
        let environment = try Environment(directory: home + "/store")
        defer { environment.close() }
        guard let events = try environment.table("events") else { throw Failure("no events table") }
        try environment.write { txn in try body(txn, events) }
        // A forger who edits the store also removes the device's record of its
        // head (`store-head`), which would refuse a shortened log at once: the
        // audit's own checks must find the edit without it.
        unlink(home + "/store-head")
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    // MARK: - The schema

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// Checks a report against Schemas/audit-report.schema.json with Python's
    /// jsonschema (sharing no code with the Swift that wrote it).
    func validate(report text: String) throws {
        let file = directory.appending("report-\(UUID().uuidString.prefix(8)).json")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let script = """
            import json, pathlib, sys
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import best_match
            from referencing import Registry, Resource
            root = pathlib.Path(sys.argv[1])
            schemas = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.schema.json"))]
            registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
            schema = json.loads((root / "audit-report.schema.json").read_text(encoding="utf-8"))
            Draft202012Validator.check_schema(schema)
            validator = Draft202012Validator(schema, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER)
            error = best_match(validator.iter_errors(json.loads(pathlib.Path(sys.argv[2]).read_text(encoding="utf-8"))))
            if error is not None:
                sys.exit("invalid at /" + "/".join(map(str, error.absolute_path)) + ": " + error.message)
            """
        let result = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + ["-c", script, Products.repositoryFile("Schemas"), file])
        guard result.status == 0 else { throw Invalid(description: result.stderr) }
    }

    // MARK: - Files

    static func chmod(_ path: String, _ mode: String) throws {
        let result = try ProcessRun.run("/bin/chmod", ["-R", mode, path])
        guard result.status == 0 else { throw Failure("chmod \(mode) \(path): \(result.stderr)") }
    }

    /// Every file under `path` with its size and SHA-256.
    static func listing(_ path: String) throws -> [String: String] {
        var found: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: path) else { throw Failure("cannot list \(path)") }
        for case let name as String in walker {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory) else {
                throw Failure("\(name) vanished while \(path) was listed")
            }
            if isDirectory.boolValue {
                found[name] = "directory"
            } else {
                let data = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
                found[name] = "\(data.count) \(SHA256Hasher().digest([UInt8](data)).hex)"
            }
        }
        return found
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// Compares values decoded by `JSONSerialization`, numbers by value.
enum JSONComparison {
    /// Whether `big` has everything `small` has: every member of an object
    /// (it may have more), every item of an array in order, equal scalars.
    static func holds(_ small: Any?, in big: Any?) -> Bool {
        switch (small, big) {
        case (let x as [String: Any], let y as [String: Any]):
            return x.allSatisfy { holds($0.value, in: y[$0.key]) }
        case (let x as [Any], let y as [Any]):
            return x.count == y.count && zip(x, y).allSatisfy { holds($0, in: $1) }
        default:
            return equal(small, big)
        }
    }

    static func equal(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (is NSNull, is NSNull): return true
        case (let x as [String: Any], let y as [String: Any]):
            return x.count == y.count && x.allSatisfy { equal($0.value, y[$0.key]) }
        case (let x as [Any], let y as [Any]):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (let x as String, let y as String): return x == y
        case (let x as Bool, let y as Bool): return x == y
        case (let x as NSNumber, let y as NSNumber): return x == y
        default: return false
        }
    }
}
