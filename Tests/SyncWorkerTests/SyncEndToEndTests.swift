import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// `jqc sync` (the built binary) against the development server, with its
/// faults: the server's own counts say whether every record arrived exactly once.
///
/// `JQC_SYNC_BACKOFF_SCALE=0` (test-only) makes every retry due at once, so
/// one run carries items through their retries.
@Suite struct SyncEndToEndTests {
    // MARK: - A clean sync

    @Test(arguments: DevServer.Profile.allCases)
    func aCleanSyncSendsEveryRecordOnceWithItsPhotosAndIssues(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let first = try sample.completedInspection(photos: 2, issues: 1, followUp: true)
        try sample.completedInspection(photos: 2, issues: 2, issuePhoto: true)
        try sample.completedInspection(photos: 1, issues: 0)
        let child = try sample.completedReinspection(of: first)

        let sync = try sample.jqc("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        let sent = try JSONValue(parsing: sync.stdout)
        #expect(sent["sent"] == .object(["photo": .integer(7), "inspection": .integer(4), "issue": .integer(3)]))
        #expect(sent["failed"]?.arrayValue?.isEmpty == true, "\(sync.stdout)")
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try server.count("inspections") == 4)
        #expect(try server.count("issues") == 3)
        #expect(try server.count("photos") == 7)
        // The reference backend keeps no keys: it has no idempotency.
        let keys = profile.honoursIdempotency ? 14 : 0
        #expect(try server.count("idempotency_keys") == keys)

        // What the server recorded: upload paths in the form, the parent's link and its follow-up cleared.
        // Found by the server ids the ledger adopted (the reference backend shows no client_id).
        let history = try sample.jqc("--json", "history")
        let page = try JSONValue(parsing: history.stdout)
        let records = try #require(page["inspections"]?.arrayValue)
        let parentRecord = try #require(try record(of: first, in: records, sample))
        let childRecord = try #require(try record(of: child, in: records, sample))
        #expect(childRecord["parent_inspection_id"] == parentRecord["id"])
        #expect(parentRecord["follow_up_required"] == .bool(false))
        #expect(parentRecord["form_data"]?["10"]?.stringValue?.hasPrefix("/uploads/") == true)
        #expect(parentRecord["form_data"]?["11"]?.stringValue?.hasPrefix("/uploads/") == true)

        // A second run has nothing to send.
        let again = try sample.jqc("--json", "sync")
        #expect(again.status == 0)
        #expect(try JSONValue(parsing: again.stdout)["sent_total"]?.integerValue == 0, "\(again.stdout)")
        #expect(try server.count("idempotency_keys") == keys)
        #expect(try server.count("inspections") == 4)
        #expect(
            try JSONValue(parsing: again.stdout)["possibly_sent_twice"] == .array([]), "a clean run flags nothing")
    }

    /// The objects `jqc --json sync --watch` printed so far, one per pass
    /// (each ends with a `}` line; one still being written is left out).
    static func passes(_ stdout: String) throws -> [JSONValue] {
        try stdout.components(separatedBy: "\n}\n").dropLast().map { try JSONValue(parsing: $0 + "\n}") }
    }

    /// The server's history record of `inspection`, by the server id the ledger adopted.
    private func record(of inspection: UUID, in records: [JSONValue], _ sample: SampleLedger) throws -> JSONValue? {
        guard let id = try sample.ledger.state(of: inspection)?.sync.serverID else { return nil }
        return records.first { $0["id"]?.integerValue.map(String.init) == id }
    }

    @Test(arguments: DevServer.Profile.allCases)
    func progressEventsComeOnlyWhenAskedFor(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        try sample.completedInspection(photos: 1, issues: 0)

        let events = try sample.jqc("sync", "--progress", "json", "--concurrency", "2")

        #expect(events.status == 0, "\(events.stderr)")
        let lines = try events.stderr.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let sent = lines.filter { $0["event"] == .string("sent") }
        #expect(sent.count == 5, "2 photos, 2 inspections, 1 issue")
        #expect(Set(sent.compactMap { $0["kind"]?.stringValue }) == ["photo", "inspection", "issue"])
        #expect(lines.contains { $0["event"] == .string("sending") })
        #expect(lines.last?["done"] == .integer(5))
        #expect(lines.last?["total"] == .integer(5))

        // Piped, and not asked for: nothing but the summary.
        try sample.completedInspection(photos: 1, issues: 0)
        let quiet = try sample.jqc("--json", "sync")
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty, "no progress when piped: \(quiet.stderr)")
        let summary = try JSONValue(parsing: quiet.stdout)
        #expect(summary["sent"] == .object(["photo": .integer(1), "inspection": .integer(1), "issue": .integer(0)]))
    }

    @Test(arguments: DevServer.Profile.allCases)
    func aTerminalShowsTheCountsAndTheCurrentItem(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)

        // `script` gives jqc a pseudo-terminal, and copies what it drew.
        let shown = try ProcessRun.run(
            "/usr/bin/script", ["-q", "-e", "-c", Products.executable("jqc") + " sync --concurrency 1", "/dev/null"],
            environment: sample.jqc.environment)

        #expect(shown.status == 0, "\(shown.stdout)")
        #expect(shown.stdout.contains("sync 0/3 (sent 0) · photo "))
        #expect(shown.stdout.contains(": sending"))
        #expect(shown.stdout.contains("sync 2/3 (sent 2) · issue "))
        #expect(shown.stdout.contains("Sent 3 (1 photo, 1 inspection, 1 issue)"))
    }

    // MARK: - Faults

    /// Against a server that honours `Idempotency-Key`, every lost answer is
    /// answered again by the replay: exactly once for everything.
    @Test func aResponseDroppedAfterCommitLeavesExactlyOneRecord() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        try server.faults(.object(["drop_after_commit_rate": .integer(1)]))

        let sync = try sample.jqc("--json", "sync")

        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try server.count("inspections") == 2)
        #expect(try server.count("issues") == 2)
        #expect(try server.count("photos") == 2)
        // Every first answer was lost; every retry by the worker got the
        // remembered one (writes go on a new connection, so libcurl never
        // resends one unseen).
        for route in ["POST /api/v1/photos/upload", "POST /api/v1/inspections", "POST /api/v1/issues"] {
            #expect(try server.requests(route, status: "dropped") == 2, "\(route)")
        }
        for route in ["POST /api/v1/photos/upload", "POST /api/v1/issues"] {
            #expect(try server.requests(route, status: "201") == 2, "\(route)")
        }
        // An inspection whose answer was lost is looked up before it is sent again, and found.
        #expect(try server.requests("POST /api/v1/inspections", status: "201") == 0)
        #expect(try JSONValue(parsing: sync.stdout)["adopted"]?.arrayValue?.count == 2, "\(sync.stdout)")
    }

    /// Against the reference backend (no idempotency, no way to list issues),
    /// a lost answer is worked out for photos (stored by content) and
    /// inspections (looked up in the history, adopted); an issue cannot be
    /// looked up, so it is sent again and flagged, in every view, as possibly
    /// on the server twice. Never silently.
    @Test func onTheReferenceBackendALostIssueAnswerIsSentAgainAndFlagged() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        // No photos: the reference backend has no idempotency for uploads either, and every answer is lost.
        let first = try sample.completedInspection(photos: 0, issues: 1, issuePhoto: false)
        let second = try sample.completedInspection(photos: 0, issues: 1, issuePhoto: false)
        try server.faults(.object(["drop_after_commit_rate": .integer(1)]))

        let lossy = try sample.jqc("--json", "sync")

        #expect(lossy.status == 0, "\(lossy.stderr)")
        #expect(try JSONValue(parsing: lossy.stdout)["adopted"]?.arrayValue?.count == 2, "\(lossy.stdout)")
        #expect(try server.count("inspections") == 2, "both found by the look-up, not sent again")
        // Every answer to POST /issues is lost: the issues wait, their outcome unknown.
        let waiting = try sample.ledger.outbox()
        #expect(waiting.map(\.item.kind) == [.issue, .issue])

        try server.resetFaults()
        let clean = try sample.jqc("--json", "sync")

        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try server.count("inspections") == 2)
        #expect(try server.count("issues") > 2, "the lost sends made records the device could not see")
        let report = try JSONValue(parsing: clean.stdout)
        let flagged = try #require(report["possibly_sent_twice"]?.arrayValue)
        #expect(flagged.count == 2)
        for inspection in [first, second] {
            let shown = try JSONValue(parsing: try sample.jqc("--json", "show", inspection.lowercased).stdout)
            let issue = try #require(shown["issues"]?.arrayValue?.first)
            let issueID = try #require(issue["id"]?.stringValue)
            #expect(issue["possibly_sent_twice"] == .bool(true))
            #expect(issue["server_id"]?.stringValue != nil)
            let note =
                "issue \(issueID.prefix(8)) was sent again after its answer was lost; this server offers no way "
                + "to check, so it may hold it twice"
            #expect(shown["sync"]?["notes"]?.arrayValue?.contains(.string(note)) == true)
            #expect(flagged.contains { $0["id"] == .string(issueID) })
            let text = try sample.jqc("show", inspection.lowercased)
            #expect(text.stdout.contains("  \(note)"))
            let audit = try sample.jqc("audit", inspection.lowercased)
            #expect(audit.stdout.contains(note), "\(audit.stdout)")
            let log = try sample.jqc("log", "--inspection", inspection.lowercased)
            #expect(log.stdout.contains("(sent again after its answer was lost; the server may hold it twice)"))
        }
        let list = try #require(try JSONValue(parsing: try sample.jqc("--json", "inspections").stdout).arrayValue)
        #expect(list.allSatisfy { $0["sync_notes"]?.arrayValue?.count == 1 })
        // `issues` and `status` say it too, not "synced" and "the server has everything" alone.
        let issues = try sample.jqc("issues")
        #expect(issues.stdout.components(separatedBy: "synced (may be held twice)").count == 3, "\(issues.stdout)")
        #expect(issues.stdout.contains("sent again after the server's answer was lost"), "\(issues.stdout)")
        let rows = try #require(try JSONValue(parsing: try sample.jqc("--json", "issues").stdout).arrayValue)
        #expect(rows.count == 2 && rows.allSatisfy { $0["possibly_sent_twice"] == .bool(true) }, "\(rows)")
        let status = try sample.jqc("status")
        for issue in flagged.compactMap({ $0["id"]?.stringValue }) {
            let note =
                "issue \(issue.prefix(8)) was sent again after its answer was lost; this server offers no way "
                + "to check, so it may hold it twice"
            #expect(status.stdout.contains(note), "\(status.stdout)")
        }
    }

    /// A run killed before an issue's request went out leaves nothing that
    /// makes the issue look sent: the next run sends it once, unflagged.
    @Test func anIssueIsNotFlaggedWhenNoEarlierSendWentOut() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let inspection = try sample.completedInspection(photos: 0, issues: 1, issuePhoto: false)
        // Every issue refused with a 500: its send is clearly answered, never ambiguous.
        try server.faults(.object(["fault_rate": .integer(1), "fault_paths": .array([.string("/api/v1/issues")])]))
        let refused = try sample.jqc("sync")
        #expect(refused.status == 0, "\(refused.stderr)")
        #expect(try server.count("issues") == 0)

        try server.resetFaults()
        let clean = try sample.jqc("--json", "sync")

        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(try server.count("issues") == 1)
        #expect(try JSONValue(parsing: clean.stdout)["possibly_sent_twice"]?.arrayValue == [])
        let shown = try JSONValue(parsing: try sample.jqc("--json", "show", inspection.lowercased).stdout)
        #expect(shown["issues"]?.arrayValue?.first?["possibly_sent_twice"] == .bool(false))
    }

    @Test(arguments: DevServer.Profile.allCases)
    func serverErrorsAndLatencyAreRetriedUntilDone(profile: DevServer.Profile) throws {
        let server = try DevServer(["--seed", "7"], profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        for _ in 0..<3 { try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false) }
        try server.faults(
            .object([
                "fault_rate": .number("0.4"), "latency_ms": .integer(20),
                "fault_paths": .array([
                    .string("/api/v1/photos"), .string("/api/v1/inspections"), .string("/api/v1/issues"),
                ]),
            ]))

        let sync = try sample.jqc("sync")

        #expect(sync.status == 0, "\(sync.stdout)\n\(sync.stderr)")
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try server.count("inspections") == 3)
        #expect(try server.count("issues") == 3)
        #expect(try server.count("photos") == 3)
        let failures = try server.stats()["requests"]?["POST /api/v1/inspections"]?["500"]?.integerValue ?? 0
        let uploadFailures = try server.stats()["requests"]?["POST /api/v1/photos/upload"]?["500"]?.integerValue ?? 0
        #expect(failures + uploadFailures > 0, "the faults were injected")
    }

    @Test(arguments: DevServer.Profile.allCases)
    func anOutageStallsItemsWithoutGivingUpAndTheNextSyncRecovers(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        try server.faults(
            .object(["fault_rate": .integer(1), "fault_paths": .array([.string("/api/v1/inspections")])]))

        let stalled = try sample.jqc("--json", "sync")

        #expect(stalled.status == 0, "waiting out an outage is not a failure: \(stalled.stderr)")
        let report = try JSONValue(parsing: stalled.stdout)
        #expect(report["failed"]?.arrayValue?.isEmpty == true, "\(stalled.stdout)")
        let retrying = try #require(report["retrying"]?.arrayValue)
        #expect(retrying.count == 1, "\(stalled.stdout)")
        #expect(retrying.first?["kind"]?.stringValue == "inspection" && retrying.first?["stalled"] == .bool(true))
        #expect(retrying.first?["attempts"]?.integerValue == 8, "\(stalled.stdout)")
        let rows = try sample.ledger.outbox()
        let inspection = try #require(rows.first { $0.item.kind == .inspection })
        #expect(inspection.state == .stalled)
        #expect(inspection.lastHTTPStatus == 500)
        let issue = try #require(rows.first { $0.item.kind == .issue })
        #expect(issue.state == .pending)
        #expect(try server.count("issues") == 0)
        let outbox = try #require(try JSONValue(parsing: sample.jqc("--json", "outbox").stdout).arrayValue)
        let listed = outbox.first { $0["kind"]?.stringValue == "inspection" }
        #expect(listed?["state"]?.stringValue == "stalled", "\(outbox)")
        let waitingIssue = outbox.first { $0["kind"]?.stringValue == "issue" }
        #expect(waitingIssue?["detail"]?.stringValue?.contains("waiting for its inspection") == true, "\(outbox)")
        #expect(try sample.eventTypes().contains("sync.gave_up") == false)

        // `sync retry` makes a stalled item due at once, attempts from zero.
        let retry = try sample.jqc("--json", "sync", "retry", String(id.lowercased.prefix(8)))
        #expect(retry.status == 0, "\(retry.stderr)")
        let queued = try #require(try JSONValue(parsing: retry.stdout).arrayValue)
        #expect(queued.map { $0["kind"]?.stringValue } == ["inspection"], "\(retry.stdout)")
        #expect(queued.first?["id"]?.stringValue == id.lowercased, "\(retry.stdout)")

        try server.resetFaults()
        let recovered = try sample.jqc("sync")
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)

        let nothingLeft = try sample.jqc("sync", "retry", String(id.lowercased.prefix(8)))
        #expect(nothingLeft.status == 1)
    }

    @Test(arguments: DevServer.Profile.allCases)
    func aPhotoWhoseFileIsGoneIsLeftOutAndEveryViewSaysSo(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 1, issues: 0)
        let photo = try #require(try sample.ledger.state(of: id)?.photos.first).photo
        try FileManager.default.removeItem(atPath: sample.ledger.photos.directory + "/" + photo.sha256.hex)
        let prefix = String(photo.photoID.lowercased.prefix(8))

        let sync = try sample.jqc("--json", "sync")

        #expect(sync.status == 1, "a photo lost for good needs a person")
        let failed = try #require(try JSONValue(parsing: sync.stdout)["failed"]?.arrayValue)
        #expect(failed.map { $0["kind"]?.stringValue } == ["photo"], "\(sync.stdout)")
        #expect(failed.first?["id"]?.stringValue == photo.photoID.lowercased, "\(sync.stdout)")
        #expect(failed.first?["inspection_id"]?.stringValue == id.lowercased, "\(sync.stdout)")
        #expect(failed.first?["http_status"] == .null, "no server refused it: \(sync.stdout)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("photos") == 0)

        let shown = try JSONValue(parsing: try sample.jqc("--json", "show", String(id.lowercased.prefix(8))).stdout)
        #expect(shown["sync"]?["state"] == .string("synced-without-photos"), "\(shown)")
        #expect(shown["sync"]?["server_id"]?.stringValue != nil, "\(shown)")
        let show = try sample.jqc("show", String(id.lowercased.prefix(8)))
        #expect(show.stdout.contains("  inspection synced without photo \(prefix): The photo's file photos/"))
        let list = try #require(try JSONValue(parsing: try sample.jqc("--json", "inspections").stdout).arrayValue)
        #expect(list.first?["sync"] == .string("synced-without-photos"))
        #expect(
            list.first?["sync_notes"]?.arrayValue?.first?.stringValue?.hasPrefix(
                "inspection synced without photo \(prefix): ") == true)
        let outbox = try #require(try JSONValue(parsing: try sample.jqc("--json", "outbox").stdout).arrayValue)
        #expect(outbox.first?["state"] == .string("failed"))
        #expect(
            outbox.first?["detail"]
                == .string("its inspection went to the server without it; it is not uploaded on its own"))

        #expect(outbox.first?["left_out"] == .bool(true))
        // Later syncs say so, and need nobody: nothing can be retried.
        let later = try sample.jqc("--json", "sync")
        #expect(later.status == 0, "\(later.stderr)")
        let earlier = try #require(try JSONValue(parsing: later.stdout)["left_out"]?.arrayValue)
        #expect(earlier.map { $0["id"]?.stringValue } == [photo.photoID.lowercased], "\(later.stdout)")
        #expect(earlier.first?["kind"]?.stringValue == "photo", "\(later.stdout)")

        // Asked to send it anyway, jqc says why not instead of uploading a dangling file.
        let retry = try sample.jqc.reportingKinds("sync", "retry", prefix)
        #expect(retry.status == 1)
        #expect(retry.errorKind == "SyncRetry.Refusal.onlyLeftOut", "\(retry.stderr)")
        #expect(retry.stderr.contains("photo \(prefix) of inspection \(id.lowercased.prefix(8))"), "\(retry.stderr)")
        #expect(try server.count("photos") == 0)
    }

    @Test(arguments: DevServer.Profile.allCases)
    func aRefusalFailsAtOnceWithTheServersMessage(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        // A facility this device knows but the server does not: the server refuses with 422.
        var reference = try JSONValue(
            parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
        if case .object(var members) = reference, let index = members.firstIndex(where: { $0.key == "facilities" }),
            case .array(var facilities) = members[index].value
        {
            facilities.append(
                .object([
                    "id": .integer(999), "name": .string("Closed Annex"), "address": .string("1 Gone St"),
                    "project_name": .string("Old"), "areas": .array([]),
                ]))
            members[index].value = .array(facilities)
            reference = .object(members)
        }
        let sample = try SampleLedger(serverURL: server.baseURL, reference: reference)
        try sample.login()
        try sample.completedInspection(photos: 0, issues: 1, issuePhoto: false, facility: "999", area: nil)

        let sync = try sample.jqc("--json", "sync")

        #expect(sync.status == 1)
        let rows = try sample.ledger.outbox()
        let inspection = try #require(rows.first { $0.item.kind == .inspection })
        #expect(inspection.state == .failed)
        #expect(inspection.attempts == 1)
        #expect(inspection.lastHTTPStatus == 422)
        #expect(inspection.lastError?.contains("facility_id: facility 999 does not exist") == true)
        #expect(try server.requests("POST /api/v1/inspections", status: "422") == 1)
        let report = try JSONValue(parsing: sync.stdout)
        #expect(report["failed"]?.arrayValue?.count == 2)
    }

    // MARK: - The session

    @Test(arguments: DevServer.Profile.allCases)
    func anExpiredTokenIsRefreshedAndNoTokenEverLeaks(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        var outputs: [String] = []
        func jqc(_ arguments: String..., input: Data? = nil) throws -> ProcessResult {
            let result = try sample.jqc.run(arguments, input: input)
            outputs += [result.stdout, result.stderr]
            return result
        }
        let login = try jqc(
            "login", "--username", "inspector", "--password-stdin", input: Data("inspector-pass\n".utf8))
        #expect(login.status == 0)
        let before = try sample.session().tokens
        try sample.completedInspection(photos: 1, issues: 1)
        try server.faults(.object(["expire_tokens_now": .bool(true)]))

        let sync = try jqc("sync")

        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try server.requests("POST /api/v1/auth/refresh", status: "200") == 1)
        let after = try sample.session().tokens
        #expect(after.accessToken != before.accessToken)
        #expect(after.refreshToken != before.refreshToken)

        // Everything a user can run, and its output; then the store's bytes.
        for arguments in [["whoami"], ["whoami", "--check"], ["--json", "whoami"], ["history"], ["pull"], ["outbox"]] {
            let result = try sample.jqc.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            outputs += [result.stdout, result.stderr]
        }
        try server.faults(.object(["expire_tokens_now": .bool(true), "refuse_refresh": .bool(true)]))
        try sample.completedInspection(photos: 0, issues: 0)
        outputs += [try jqc("sync").stderr, try jqc("whoami", "--check").stderr]
        try server.resetFaults()
        let store = try sample.storeBytes()
        for token in [before.accessToken, before.refreshToken, after.accessToken, after.refreshToken] {
            #expect(!outputs.contains { $0.contains(token) }, "a token was printed")
            #expect(!store.contains(bytes: token), "a token is in the event log")
            #expect(!store.contains(bytes: String(token.suffix(24))), "a piece of a token is in the event log")
        }
        let logout = try jqc("logout")
        #expect(logout.status == 0)
        #expect(!outputs.contains { text in [after.accessToken, after.refreshToken].contains { text.contains($0) } })
    }

    /// A `kill -9` while the refresh is on the server: the server rotates the
    /// pair, the new pair never reaches the device. The next sync presents
    /// the spent refresh token within the server's grace period, gets the
    /// same new pair, and carries on: no one logs in.
    @Test(arguments: DevServer.Profile.allCases)
    func aSyncKilledMidRefreshNeedsNoLoginNextTime(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        let spent = try sample.session().tokens
        // The refresh is held on the server long enough to be killed under it.
        try server.faults(
            .object([
                "expire_tokens_now": .bool(true), "latency_ms": .integer(5000),
                "fault_paths": .array([.string("/api/v1/auth/refresh")]),
            ]))

        let running = try BackgroundJQC(sample.jqc, ["sync", "--concurrency", "1"])
        // Refused with 401 once, and a request (the refresh) in the server since.
        #expect(
            try eventually {
                try server.requests("POST /api/v1/photos/upload", status: "401") == 1
                    && (try server.stats()["in_flight"]?.integerValue ?? 0) >= 1
            })
        running.send(SIGKILL)
        #expect(try running.wait() != 0)
        // The server went on and rotated the pair; the device never got it.
        #expect(try eventually { try server.requests("POST /api/v1/auth/refresh", status: "200") == 1 })
        #expect(try sample.session().tokens.refreshToken == spent.refreshToken)
        #expect(try server.count("photos") == 0, "nothing was sent with the new pair")

        try server.resetFaults()
        let next = try sample.jqc("sync")

        #expect(next.status == 0, "no login needed: \(next.stdout)\n\(next.stderr)")
        #expect(!next.stderr.contains("jqc login"))
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)
        // The spent token, within the grace period, was answered with the same new pair.
        #expect(try server.requests("POST /api/v1/auth/refresh", status: "200") == 2)
        #expect(try server.requests("POST /api/v1/auth/refresh", status: "401") == 0)
        #expect(try sample.session().tokens.refreshToken != spent.refreshToken)
    }

    @Test(arguments: DevServer.Profile.allCases)
    func aRefusedRefreshStopsTheSyncWithoutCountingAnAttempt(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        try sample.completedInspection(photos: 1, issues: 1)
        let eventsBefore = try sample.eventTypes().count
        try server.faults(.object(["expire_tokens_now": .bool(true), "refuse_refresh": .bool(true)]))

        let sync = try sample.jqc("--json", "sync")

        #expect(sync.status == 1)
        #expect(
            try JSONValue(parsing: sync.stdout)["stopped"]?["reason"] == .string("login_required"), "\(sync.stdout)")
        #expect(try sample.eventTypes().count == eventsBefore, "no failure was recorded")
        #expect(try sample.ledger.outbox().allSatisfy { $0.state == .pending && $0.attempts == 0 })
        #expect(try server.count("photos") == 0)
        // It stopped at once: only the two uploads already in flight in parallel were refused.
        #expect((1...2).contains(try server.requests("POST /api/v1/photos/upload", status: "401")))
        // The identity is kept: recording still works offline from the saved session.
        #expect(FileManager.default.fileExists(atPath: sample.credentialsPath))
    }

    // MARK: - Concurrency

    @Test(arguments: DevServer.Profile.allCases)
    func inspectorsRecordWhileASyncRunsAndASecondSyncIsRefused(profile: DevServer.Profile) throws {
        // Each answer a second late: the sync outlasts any recording by seconds, so a recording
        // that waited for it would find it ended (no clock read here: these machines are shared).
        let server = try DevServer(["--latency-ms", "1000"], profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        for _ in 0..<3 { try sample.completedInspection(photos: 2, issues: 1, issuePhoto: false) }
        let draft = try sample.draft()

        let running = try BackgroundJQC(sample.jqc, ["sync"])
        #expect(try eventually { try server.count("photos") >= 1 })

        let set = try sample.jqc("set", String(draft.lowercased.prefix(8)), "Notes", "recorded during a sync")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(running.isRunning, "the recording returned while the sync was still running: it did not wait for it")

        let second = try sample.jqc.reportingKinds("sync")
        #expect(second.status == 1)
        #expect(second.errorKind == "SyncLock.Failure.held", "\(second.stderr)")

        #expect(try running.wait() == 0, "\(running.stderr)")
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try server.count("inspections") == 3)
        #expect(try sample.ledger.state(of: draft)?.values["9"] == .text("recorded during a sync"))
    }

    @Test(arguments: DevServer.Profile.allCases)
    func killNineMidSyncThenARerunLeavesEveryRecordOnce(profile: DevServer.Profile) throws {
        let server = try DevServer(["--latency-ms", "80"], profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        for _ in 0..<4 { try sample.completedInspection(photos: 2, issues: 1, issuePhoto: true) }

        let running = try BackgroundJQC(sample.jqc, ["sync"])
        #expect(try eventually { try server.count("photos") >= 7 })
        running.send(SIGKILL)
        #expect(try running.wait() != 0)
        #expect(try server.count("issues") < 4, "it was killed in the middle")

        let rerun = try sample.jqc("--json", "sync")

        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try sample.ledger.outbox().isEmpty)
        // The reference backend keeps an upload record per upload (no idempotency), a file per content.
        #expect(try server.count(profile.honoursIdempotency ? "photos" : "photo_files") == 12)
        #expect(try server.count("inspections") == 4)
        if profile.honoursIdempotency {
            #expect(try server.count("issues") == 4)
            #expect(try server.count("idempotency_keys") == 20)
        } else {
            // An issue whose request the kill cut short may be there twice, and then it is flagged.
            let flagged = try JSONValue(parsing: rerun.stdout)["possibly_sent_twice"]?.arrayValue?.count ?? 0
            #expect((4...(4 + flagged)).contains(try server.count("issues")))
        }
        let verify = try sample.jqc("verify")
        #expect(verify.status == 0, "\(verify.stderr)")
    }

    @Test(arguments: DevServer.Profile.allCases)
    func watchSyncsWhenTheServerIsBackAndStopsOnSIGTERM(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        server.stop()
        try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)

        let watching = try BackgroundJQC(sample.jqc, ["--json", "sync", "--watch", "--interval", "1"])
        #expect(
            try eventually {
                try Self.passes(watching.stdout).contains { $0["stopped"]?["reason"] == .string("server_unreachable") }
            }, "\(watching.stdout)\(watching.stderr)")
        #expect(try sample.ledger.outbox().allSatisfy { $0.attempts == 0 }, "waiting for the network is no attempt")
        try server.start()
        #expect(try eventually { try sample.ledger.outbox().isEmpty }, "\(watching.stdout)\n\(watching.stderr)")
        #expect(watching.isRunning)

        // Let the run that just finished print its summary before stopping.
        usleep(200_000)
        watching.send(SIGTERM)
        #expect(try watching.wait() == 0, "\(watching.stderr)")
        #expect(watching.stderr.contains("sync stopped"))
        #expect(try Self.passes(watching.stdout).contains { $0["sent_total"] == .integer(3) }, "\(watching.stdout)")
        #expect(try server.count("inspections") == 1)
    }
}
