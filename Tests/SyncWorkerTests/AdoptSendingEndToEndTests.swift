import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// A lost submitter does not strand its submission: a device holding the
/// submitted copy lists it as another device's, adopts its sending
/// (`jqc sync adopt`), and the server gets it exactly once, also when the
/// submitter sent it after all. Through the built `jqc`, against the
/// development server's reference profile (no idempotency, no `client_id`).
@Suite struct AdoptSendingEndToEndTests {
    /// Shares `id` from `from` and receives the file on `to`: what `receive` said.
    @discardableResult
    static func share(_ id: UUID, from: SampleLedger, to: SampleLedger, name: String) throws -> String {
        try MergeTruthEndToEndTests.exchange(id, from: from, to: to, name: name)
    }

    static func json(_ ledger: SampleLedger, _ arguments: String...) throws -> JSONValue {
        let run = try ledger.jqc.run(["--json"] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        return try JSONValue(parsing: run.stdout)
    }

    /// B submits an inspection with two photos and an issue with a photo and
    /// shares it to A; B is then lost (it never syncs).
    static func submittedOnB(_ server: DevServer) throws -> (a: SampleLedger, b: SampleLedger, id: UUID) {
        let a = try SampleLedger(serverURL: server.baseURL)
        let b = try SampleLedger(serverURL: server.baseURL)
        try a.login()
        try b.login()
        let id = try b.completedInspection()
        try share(id, from: b, to: a, name: "b1")
        return (a, b, id)
    }

    @Test func aLostSubmittersCopyIsListedAdoptedAndSentExactlyOnce() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.submittedOnB(server)
        let short = String(id.lowercased.prefix(8))
        let listed = "submitted on device \(b.device.lowercased), not yet reported sent"

        // A lists it as B's, apart from what A itself sends.
        let outbox = try a.jqc("outbox")
        #expect(outbox.status == 0, "\(outbox.stderr)")
        #expect(outbox.stdout.contains("'jqc sync adopt ID'"), "\(outbox.stdout)")
        let outboxJSON = try a.jqc("--json", "outbox")
        #expect(try JSONSchemaCheck.validate("outbox", outboxJSON.stdout).status == 0, "\(outboxJSON.stdout)")
        let entries = try #require(try JSONValue(parsing: outboxJSON.stdout).arrayValue)
        #expect(entries.count == 1)
        // Nothing for this device to send: its one entry is the inspection B is expected to send.
        #expect(entries.first?["kind"]?.stringValue == "inspection", "\(outboxJSON.stdout)")
        #expect(entries.first?["id"]?.stringValue == id.lowercased, "\(outboxJSON.stdout)")
        #expect(entries.first?["detail"]?.stringValue?.hasPrefix(listed) == true, "\(outboxJSON.stdout)")
        #expect(entries.first?["state"]?.stringValue == "expected_elsewhere")
        #expect(entries.first?["submitted_on_device"]?.stringValue == b.device.lowercased)
        #expect(entries.first?["expected_sender"]?.stringValue == b.device.lowercased)
        let statusJSON = try Self.json(a, "status")
        let expected = try #require(statusJSON["not_on_server"]?["expected_from_other_devices"]?.arrayValue)
        #expect(expected.count == 1)
        #expect(expected.first?["inspection_id"]?.stringValue == id.lowercased, "\(statusJSON)")
        #expect(expected.first?["note"]?.stringValue?.hasPrefix(listed) == true, "\(statusJSON)")
        #expect(statusJSON["not_on_server"]?["server_has_everything"] == .bool(false), "\(statusJSON)")
        let retry = try a.jqc("sync", "retry", short)
        #expect(retry.status == 1)
        #expect(
            retry.stderr.contains("is not in this device's outbox: \(listed)")
                && retry.stderr.contains("'jqc sync adopt \(short)' makes this device its sender"), "\(retry.stderr)")

        // A adopts it: its outbox holds every item, and the adoption is worded.
        let adopted = try a.jqc("--json", "sync", "adopt", short)
        #expect(adopted.status == 0, "\(adopted.stderr)")
        #expect(try JSONSchemaCheck.validate("sync_adopt", adopted.stdout).status == 0, "\(adopted.stdout)")
        let adoption = try JSONValue(parsing: adopted.stdout)
        #expect(adoption["submitted_on_device"]?.stringValue == b.device.lowercased)
        #expect(adoption["outbox"]?.arrayValue?.count == 5, "3 photos, the inspection, 1 issue")
        let own = try #require(try JSONValue(parsing: try a.jqc("--json", "outbox").stdout).arrayValue)
        #expect(own.map { $0["state"]?.stringValue } == Array(repeating: "pending", count: 5))
        #expect(own.allSatisfy { $0["submitted_on_device"]?.stringValue == b.device.lowercased })
        #expect(try a.jqc("outbox").stdout.contains("adopted from device \(b.device.lowercased)"))
        #expect(
            try Self.json(a, "status")["not_on_server"]?["expected_from_other_devices"]?.arrayValue?.isEmpty == true)
        let again = try a.jqc("sync", "adopt", short)
        #expect(again.status == 1)
        #expect(again.stderr.contains("this device adopted it already"), "\(again.stderr)")

        let sync = try a.jqc("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try JSONValue(parsing: sync.stdout)
        #expect(
            report["sent"]
                == .object([.init("photo", .integer(3)), .init("inspection", .integer(1)), .init("issue", .integer(1))]),
            "\(sync.stdout)")
        #expect(report["failed"]?.arrayValue?.isEmpty == true, "\(sync.stdout)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)
        #expect(try server.count("photos") == 3)
        let record = try #require(try Self.json(a, "history")["inspections"]?.arrayValue?.first)
        #expect(record["form_data"]?["10"]?.stringValue?.hasPrefix("/uploads/") == true)
        // A second sync adds nothing.
        #expect(try a.jqc("sync").status == 0)
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)
        #expect(try server.count("photos") == 3)
        #expect(try Self.json(a, "outbox").arrayValue?.isEmpty == true)

        // Who adopted whose submission, and when, in the log and the audit.
        let words = "adopted the sending of the submission recorded on device \(b.device.lowercased)"
        let audit = try a.jqc("audit", short)
        #expect(audit.stdout.contains(words), "\(audit.stdout)")
        let log = try a.jqc("log", "--inspection", short)
        #expect(log.stdout.contains(words) && log.stdout.contains(a.actor.name), "\(log.stdout)")
        let lines = try a.jqc("--json", "log", "--inspection", short)
        #expect(try JSONSchemaCheck.validate("log_line", lines.stdout, lines: true).status == 0)
        #expect(lines.stdout.contains("\"inspection.send_adopted\""))
    }

    /// B sends after all, before A hears of it: A's look-up finds B's
    /// record, so the server keeps one; A's issue may be there twice, and says so.
    @Test func whenTheSubmitterSentAfterAllTheServerStillHoldsOneRecord() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.submittedOnB(server)
        #expect(try b.jqc("sync").status == 0)
        #expect(try server.count("inspections") == 1)
        let sentPhotos = try server.count("photos")
        #expect(sentPhotos == 3, "B's 2 field photos and its issue's photo")
        let sent = try #require(try Self.json(b, "show", id.lowercased)["sync"]?["server_id"]?.stringValue)

        #expect(try a.jqc("sync", "adopt", id.lowercased).status == 0)
        let sync = try a.jqc("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        let found = try #require(try JSONValue(parsing: sync.stdout)["adopted"]?.arrayValue)
        #expect(try server.count("inspections") == 1)
        #expect(try Self.json(a, "show", id.lowercased)["sync"]?["server_id"]?.stringValue == sent)
        let issues = try #require(try Self.json(a, "issues").arrayValue)
        #expect(issues.map { $0["possibly_sent_twice"]?.boolValue } == [true], "no endpoint lists issues")
        // A's look-up came before its uploads: B's field photos are not
        // uploaded again; only the issue sent again (flagged) takes its photo.
        #expect(try server.count("photos") == sentPhotos + 1, "\(sync.stdout)")
        #expect(
            found.compactMap { $0["kind"]?.stringValue }.sorted() == ["inspection", "photo", "photo"], "\(sync.stdout)")
        #expect(found.contains { $0["id"]?.stringValue == id.lowercased }, "\(sync.stdout)")
        // Its field photos are synced at the submitter's paths, never "synced without photo".
        let shown = try Self.json(a, "show", id.lowercased)
        #expect(shown["sync"]?["state"] == .string("synced"), "\(shown)")
        #expect(try a.jqc("sync").status == 0)
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("photos") == sentPhotos + 1)
        // B learns that A adopted it (`receive --json` lists the adoption);
        // neither sends it again.
        let file = a.directory.appending("a1.json")
        #expect(try a.jqc("handover", id.lowercased, "--share", "-o", file).status == 0)
        let received = try b.jqc("--json", "receive", file)
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try JSONSchemaCheck.validate("receive", received.stdout).status == 0, "\(received.stdout)")
        let adoptions = try JSONValue(parsing: received.stdout)["changes"]?["adoptions"]?.arrayValue
        #expect(adoptions?.map { $0["device"]?.stringValue } == [a.device.lowercased], "\(received.stdout)")
        #expect(try b.jqc("sync").status == 0)
        #expect(try server.count("inspections") == 1)
    }

    /// A and C both adopt B's submission before they exchange: whichever
    /// syncs second finds the first's record. Once C holds A's adoption, a
    /// new adoption elsewhere is refused.
    @Test func twoAdoptionsBeforeAnExchangeKeepOneRecordAndAfterItOnlyOneDeviceSends() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.submittedOnB(server)
        let c = try SampleLedger(serverURL: server.baseURL)
        let d = try SampleLedger(serverURL: server.baseURL)
        try c.login()
        try d.login()
        try Self.share(id, from: b, to: c, name: "b2")
        try Self.share(id, from: b, to: d, name: "b3")
        for ledger in [a, c] { #expect(try ledger.jqc("sync", "adopt", id.lowercased).status == 0) }
        for ledger in [a, c] { #expect(try ledger.jqc("sync").status == 0) }
        #expect(try server.count("inspections") == 1)
        try Self.share(id, from: a, to: c, name: "a1")
        try Self.share(id, from: c, to: a, name: "c1")
        let ids = try [a, c].map { try Self.json($0, "show", id.lowercased)["sync"]?["server_id"]?.stringValue }
        #expect(ids[0] != nil && ids[0] == ids[1], "one record, named alike on both")

        // D receives A's copy, which holds the record: there is nothing to adopt.
        let file = a.directory.appending("to-d.json")
        #expect(try a.jqc("handover", id.lowercased, "--share", "-o", file).status == 0)
        let onD = try d.jqc("receive", file)
        #expect(onD.status == 0, "\(onD.stderr)")
        let refused = try d.jqc("sync", "adopt", id.lowercased)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("reported it sent"), "\(refused.stderr)")
        withExtendedLifetime(b) {}
    }

    /// Refusals through the built `jqc`: a draft, the submitter's own, an
    /// adoption already held from another device, usage errors and help.
    @Test func adoptionIsRefusedWithWhatToDo() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.submittedOnB(server)
        let c = try SampleLedger(serverURL: server.baseURL)
        try c.login()
        try Self.share(id, from: b, to: c, name: "b2")
        let draft = try a.draft()
        let cases: [(SampleLedger, String, String)] = [
            (a, draft.lowercased, "it is draft, not submitted"),
            (b, id.lowercased, "it was submitted on this device, which sends it already"),
            (a, "ffffffff", "ffffffff"),
        ]
        for (ledger, reference, message) in cases {
            let refused = try ledger.jqc("sync", "adopt", reference)
            #expect(refused.status == 1, "\(reference)")
            #expect(refused.stderr.contains(message), "\(refused.stderr)")
        }
        // C holds A's adoption (not yet sent): only one device sends.
        #expect(try a.jqc("sync", "adopt", id.lowercased).status == 0)
        let arrived = try MergeTruthEndToEndTests.exchangeJSON(id, from: a, to: c, name: "a1")
        #expect(
            arrived["changes"]?["adoptions"]
                == .array([MergeTruthEndToEndTests.arrival(a.actor.name, a.device, reason: nil, closes: true)]),
            "it stands: that device sends it: \(arrived)")
        let refused = try c.jqc("sync", "adopt", id.lowercased)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("only one device sends; device \(a.device.lowercased) adopted it at"),
            "\(refused.stderr)")
        let listed = try #require(try Self.json(c, "outbox").arrayValue)
        #expect(listed.map { $0["state"]?.stringValue } == ["expected_elsewhere"], "\(listed)")
        #expect(listed.first?["expected_sender"]?.stringValue == a.device.lowercased, "\(listed)")
        // B, the submitter, learns of it: it no longer sends it.
        try Self.share(id, from: a, to: b, name: "a2")
        let onB = try #require(try Self.json(b, "outbox").arrayValue)
        #expect(onB.map { $0["state"]?.stringValue } == ["expected_elsewhere"], "B sends nothing of it now")
        #expect(onB.first?["expected_sender"]?.stringValue == a.device.lowercased)
        let usage = try a.jqc("sync", "adopt")
        #expect(usage.status == 2, "\(usage.stderr)")
        let help = try a.jqc("sync", "adopt", "--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("Make this device the sender of a submission"), "\(help.stdout)")
    }
}

extension AdoptSendingEndToEndTests {
    /// Which device syncs last and finds the record the other sent.
    enum Finder: String, CaseIterable, CustomStringConvertible {
        /// A adopted B's submission; B sent it after all.
        case adopter
        /// B shared its submission; A adopted it and sent it.
        case submitter

        var description: String { rawValue }
    }

    /// The record another device sent is said to be that device's, never
    /// "an earlier answer was lost" (this device sent nothing): the
    /// adopter names the submitter, the submitter says another device
    /// adopted its shared submission. The inspection and its 2 field photos.
    @Test(arguments: Finder.allCases)
    func aRecordAnotherDeviceSentIsSaidToBeThatDevices(finder: Finder) throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.submittedOnB(server)
        let (first, last) = finder == .adopter ? (b, a) : (a, b)
        #expect(try a.jqc("sync", "adopt", id.lowercased).status == 0)
        #expect(try first.jqc("sync").status == 0)
        let sync = try last.jqc("sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try server.count("inspections") == 1)
        let by =
            finder == .adopter
            ? "device \(b.device.lowercased) (its submitter; this device had adopted the sending)"
            : "another device, which adopted the sending of this device's shared submission"
        #expect(
            sync.stdout.contains("  3 already on the server, sent by \(by), not sent again: inspection "),
            "\(sync.stdout)")
        #expect(!sync.stdout.contains("an earlier answer was lost"), "\(sync.stdout)")
    }

    /// A submitter that shared its submitted copy looks the inspection up
    /// once per sync run (before its photos), not again before sending it;
    /// one that did not share sends without looking. Counted on the server.
    @Test(arguments: [(shared: true, lookUps: 1), (shared: false, lookUps: 0)])
    func aSharedSubmissionIsLookedUpOncePerRun(shared: Bool, lookUps: Int) throws {
        let server = try DevServer(profile: .reference)
        let a = try SampleLedger(serverURL: server.baseURL)
        let b = try SampleLedger(serverURL: server.baseURL)
        try a.login()
        try b.login()
        let id = try b.completedInspection()
        if shared { try Self.share(id, from: b, to: a, name: "b1") }
        let before = try server.requests("GET /api/v1/inspections", status: "200")
        let sync = try b.jqc("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(
            try JSONValue(parsing: sync.stdout)["sent"]
                == .object([.init("photo", .integer(3)), .init("inspection", .integer(1)), .init("issue", .integer(1))]),
            "\(sync.stdout)")
        #expect(try server.requests("GET /api/v1/inspections", status: "200") - before == lookUps)
        #expect(try server.count("inspections") == 1)
    }

    /// The submitter's record went without its field-10 photo (its file was
    /// lost on B): A's look-up before the photos finds a record whose
    /// `form_data` has no path for field 10, so A does not upload it (nothing
    /// there would point to it) and gives it up as gone without it; field
    /// 11's photo is taken as at B's path.
    @Test func aFieldPhotoTheFoundRecordLacksIsGivenUpAsGoneWithoutIt() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.submittedOnB(server)
        let state = try #require(try b.ledger.state(of: id))
        let lost = try #require(state.photos.first { $0.fieldID?.rawValue == "10" })
        try FileManager.default.removeItem(atPath: b.directory.appending("ledger/photos/\(lost.photo.sha256.hex)"))
        // Exit 1: the lost file's photo failed for good (its record went without it).
        #expect(try b.jqc("sync").status == 1)
        #expect(try server.count("photos") == 2, "field 11's and the issue's")
        let record = try #require(try Self.json(b, "history")["inspections"]?.arrayValue?.first)
        #expect(record["form_data"]?["10"]?.stringValue == "", "\(record)")

        #expect(try a.jqc("sync", "adopt", id.lowercased).status == 0)
        let sync = try a.jqc("--json", "sync")
        #expect(sync.status == 1, "the photo failed for good: \(sync.stderr)")
        let failed = try #require(try JSONValue(parsing: sync.stdout)["failed"]?.arrayValue)
        #expect(failed.map { $0["id"]?.stringValue } == [lost.photo.photoID.lowercased], "\(sync.stdout)")
        #expect(failed.first?["inspection_id"]?.stringValue == id.lowercased, "\(sync.stdout)")
        #expect(failed.first?["http_status"] == .null, "not uploaded, so no server refused it: \(sync.stdout)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("photos") == 3, "only the issue sent again takes its photo")
        let shown = try Self.json(a, "show", id.lowercased)
        #expect(shown["sync"]?["state"] == .string("synced-without-photos"), "\(shown)")
        let short = lost.photo.photoID.lowercased.prefix(8)
        #expect(
            shown["sync"]?["notes"]?.arrayValue?.contains { $0.stringValue?.contains(short) == true } == true,
            "\(shown)")
        // A second sync neither uploads it nor sends anything again.
        #expect(try a.jqc("sync").status == 0)
        #expect(try server.count("photos") == 3)
        #expect(try server.count("inspections") == 1)
    }
}
