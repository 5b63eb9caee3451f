import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// What the merge of shared copies decides and says, through the built
/// `jqc` against the development server's reference profile (no
/// idempotency, no `client_id`): a discard closes only what it saw, two
/// submits each name their own server record and say the server holds two,
/// and `receive` says what each file changed.
@Suite struct MergeTruthEndToEndTests {
    /// Shares `id` from `from`, receives it on `to`, and answers `receive`'s output
    /// (most callers only need the exchange done).
    @discardableResult
    static func exchange(_ id: UUID, from: SampleLedger, to: SampleLedger, name: String) throws -> String {
        let file = from.directory.appending("\(name).json")
        let shared = try from.jqc("handover", id.lowercased, "--share", "-o", file)
        #expect(shared.status == 0, "\(shared.stderr)")
        let received = try to.jqc("receive", file)
        #expect(received.status == 0, "\(received.stderr)")
        return received.stdout
    }

    /// As `exchange`, with `receive --json`: the reception (checked against the schema).
    static func exchangeJSON(_ id: UUID, from: SampleLedger, to: SampleLedger, name: String) throws -> JSONValue {
        let file = from.directory.appending("\(name).json")
        let shared = try from.jqc("handover", id.lowercased, "--share", "-o", file)
        #expect(shared.status == 0, "\(shared.stderr)")
        let received = try to.jqc("--json", "receive", file)
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try JSONSchemaCheck.validate("receive", received.stdout).status == 0, "\(received.stdout)")
        return try JSONValue(parsing: received.stdout)
    }

    /// What a file's arrival decided of one submit, discard or adoption (`receive --json`'s `changes`).
    static func arrival(_ actor: String, _ device: UUID, reason: String?, closes: Bool) -> JSONValue {
        .object([
            "actor": .string(actor), "device": .string(device.lowercased), "reason": .optional(reason),
            "closes": .bool(closes),
        ])
    }

    static func json(_ ledger: SampleLedger, _ arguments: String...) throws -> JSONValue {
        let run = try ledger.jqc.run(["--json"] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        return try JSONValue(parsing: run.stdout)
    }

    /// A draft of A with the required answers, shared to B (file 1).
    static func sharedDraft(_ server: DevServer) throws -> (a: SampleLedger, b: SampleLedger, id: UUID) {
        let a = try SampleLedger(serverURL: server.baseURL)
        let b = try SampleLedger(serverURL: server.baseURL)
        try a.login()
        try b.login()
        let id = try a.draft()
        try a.answer(id)
        let first = try exchangeJSON(id, from: a, to: b, name: "a1")
        #expect(first["inspection"] == .string(id.lowercased) && first["recorded"] == .bool(true), "\(first)")
        return (a, b, id)
    }

    /// B saw only file 1 and discards; A recorded more meanwhile: the
    /// discard arrives overtaken, A's work stands, A submits, and the server
    /// gets one record with A's later answer.
    @Test func aStaleDiscardLeavesTheLaterWorkOpenAndSubmittable() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.sharedDraft(server)
        #expect(try a.jqc("set", id.lowercased, "9=Stall 3 fixed after all").status == 0)
        let discarded = try b.jqc("discard", id.lowercased, "--reason", "wrong room")
        #expect(discarded.status == 0, "\(discarded.stderr)")

        let received = try Self.exchangeJSON(id, from: b, to: a, name: "b1")
        #expect(
            received["changes"]?["discards"]
                == .array([Self.arrival(b.actor.name, b.device, reason: "wrong room", closes: false)]), "\(received)")
        let shown = try a.jqc("show", id.lowercased)
        #expect(shown.stdout.contains("Discard overtaken: discarded by \(b.actor.name) on device"), "\(shown.stdout)")
        #expect(shown.stdout.contains("reason: wrong room; that device had not seen 1 later record"), "\(shown.stdout)")
        let form = try Self.json(a, "show", id.lowercased)
        #expect(form["status"]?.stringValue == "draft")
        let overtaken = try #require(form["merge"]?["overtaken_discards"]?.arrayValue)
        #expect(overtaken.map { $0["reason"]?.stringValue } == ["wrong room"])
        #expect(overtaken.first?["device"]?.stringValue == b.device.lowercased)
        let check = try JSONSchemaCheck.validate("show", try a.jqc("--json", "show", id.lowercased).stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let audit = try a.jqc("audit", id.lowercased)
        #expect(audit.stdout.contains("Discard overtaken: discarded by"), "\(audit.stdout)")

        // B, whose discard was overtaken, gets A's later work: open there
        // too, and its views rebuilt agree with a fresh fold (the drafts
        // view folds a merged stream instead of reading record types).
        let later = try #require(try Self.exchangeJSON(id, from: a, to: b, name: "a1b")["changes"])
        #expect(later["answers"] == .array([.string("9")]), "\(later)")
        #expect(later["status_before"] == .string("discarded") && later["status_after"] == .string("draft"), "\(later)")
        #expect(try Self.json(b, "show", id.lowercased)["status"]?.stringValue == "draft")
        #expect(try b.jqc("rebuild").status == 0)
        let checked = try b.jqc("views", "--check")
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        #expect(try Self.json(b, "status")["not_on_server"]?["drafts"] == .integer(1), "the drafts view lists it")

        // The copy is still A's to finish: it submits, and the server gets one record.
        #expect(try a.jqc("set", id.lowercased, "4=3").status == 0)
        let submitted = try a.jqc("submit", id.lowercased)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        // B learns of it before A syncs: the submit wins on every device; B
        // sends nothing and says another device is expected to send it.
        let back = try Self.exchangeJSON(id, from: a, to: b, name: "a2")
        let submits = try #require(back["changes"]?["submits"]?.arrayValue)
        #expect(submits.map { $0["actor"]?.stringValue } == [a.actor.name], "\(back)")
        #expect(submits.first?["device"] == .string(a.device.lowercased), "\(back)")
        #expect(try Self.json(b, "show", id.lowercased)["status"]?.stringValue == "completed")
        let waiting = try b.jqc("status")
        #expect(!waiting.stdout.contains("the server has everything"), "\(waiting.stdout)")
        let waitingJSON = try Self.json(b, "status")
        #expect(waitingJSON["not_on_server"]?["server_has_everything"] == .bool(false))
        let expected = try #require(waitingJSON["not_on_server"]?["expected_from_other_devices"]?.arrayValue)
        #expect(expected.count == 1)
        #expect(expected.first?["inspection_id"] == .string(id.lowercased), "another device sends it: \(expected)")
        #expect(try b.jqc("sync").status == 0)
        #expect(try server.count("inspections") == 0)
        let sync = try a.jqc("sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try server.count("inspections") == 1)
        let history = try Self.json(a, "history")
        let record = try #require(history["inspections"]?.arrayValue?.first)
        #expect(record["form_data"]?["9"]?.stringValue == "Stall 3 fixed after all")
        #expect(record["form_data"]?["4"] != nil)
        #expect(try b.jqc("sync").status == 0)
        #expect(try server.count("inspections") == 1)
    }

    /// A discard made after B saw everything closes the copy on A too.
    @Test func aDiscardThatSawEverythingCloses() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.sharedDraft(server)
        #expect(try b.jqc("discard", id.lowercased, "--reason", "wrong room").status == 0)
        let received = try Self.exchangeJSON(id, from: b, to: a, name: "b1")
        #expect(
            received["changes"]?["discards"]
                == .array([Self.arrival(b.actor.name, b.device, reason: "wrong room", closes: true)]), "\(received)")
        let form = try Self.json(a, "show", id.lowercased)
        #expect(form["status"]?.stringValue == "discarded")
        #expect(form["merge"]?["overtaken_discards"]?.arrayValue?.isEmpty == true)
        let refused = try a.jqc("set", id.lowercased, "4=3")
        #expect(refused.status != 0)
        #expect(try a.jqc("sync").status == 0)
        #expect(try server.count("inspections") == 0)
    }

    /// A and B both submit and sync before they exchange: two server
    /// records. Afterwards each names its own as its own, and `show`,
    /// `status` and `audit` (text, JSON, HTML) say the server holds two,
    /// which stands and which to remove; the same on both devices.
    @Test func twoSubmitsEachNameTheirOwnRecordAndSayTheServerHoldsTwo() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.sharedDraft(server)
        var own: [String] = []
        for ledger in [a, b] {
            #expect(try ledger.jqc("submit", id.lowercased).status == 0)
            #expect(try ledger.jqc("sync").status == 0)
            own.append(try #require(try Self.json(ledger, "show", id.lowercased)["sync"]?["server_id"]?.stringValue))
        }
        #expect(try server.count("inspections") == 2)
        #expect(own[0] != own[1])
        _ = try Self.exchange(id, from: a, to: b, name: "a2")
        _ = try Self.exchange(id, from: b, to: a, name: "b2")

        var standing: Set<String> = []
        for (index, ledger) in [a, b].enumerated() {
            let form = try Self.json(ledger, "show", id.lowercased)
            #expect(form["sync"]?["server_id"]?.stringValue == own[index], "each device names its own record")
            let records = try #require(form["merge"]?["server_records"]?.arrayValue)
            #expect(Set(records.compactMap { $0["server_id"]?.stringValue }) == Set(own))
            #expect(
                records.filter { $0["sent_here"]?.boolValue == true }.map { $0["server_id"]?.stringValue } == [
                    own[index]
                ])
            let stands = records.filter { $0["stands"]?.boolValue == true }.compactMap { $0["server_id"]?.stringValue }
            #expect(stands.count == 1)
            standing.formUnion(stands)
            let remove = Set(own).subtracting(stands).first ?? "?"
            let note = "the server holds 2 records of this inspection"
            let shown = try ledger.jqc("show", id.lowercased)
            #expect(shown.stdout.contains("Sync: synced (server id \(own[index]))"), "\(shown.stdout)")
            #expect(
                shown.stdout.contains(note) && shown.stdout.contains("remove server id \(remove)"), "\(shown.stdout)")
            let status = try ledger.jqc("status")
            #expect(status.stdout.contains(note), "\(status.stdout)")
            let statusJSON = try Self.json(ledger, "status")
            #expect(statusJSON["not_on_server"]?["server_records_twice"]?.arrayValue?.count == 1)
            #expect(try JSONSchemaCheck.validate("status", try ledger.jqc("--json", "status").stdout).status == 0)
            let audit = try ledger.jqc("audit", id.lowercased)
            #expect(audit.stdout.contains(note), "\(audit.stdout)")
            let auditJSON = try Self.json(ledger, "audit", id.lowercased)
            #expect(auditJSON["form"]?["merge"]?["server_records"] == form["merge"]?["server_records"])
            let html = try ledger.jqc("audit", id.lowercased, "--format", "html")
            #expect(html.stdout.contains(note), "the HTML report says it too")
        }
        #expect(standing.count == 1, "both devices agree on the record that stands")
    }

    /// `receive` says what a file changed: answers by field, a conflict, or nothing new.
    @Test func receiveSaysWhatChanged() throws {
        let server = try DevServer(profile: .reference)
        let (a, b, id) = try Self.sharedDraft(server)
        #expect(try a.jqc("set", id.lowercased, "4=2").status == 0)
        #expect(try a.jqc("set", id.lowercased, "9=A's note").status == 0)
        #expect(try b.jqc("set", id.lowercased, "9=B's note").status == 0)
        let received = try Self.exchangeJSON(id, from: a, to: b, name: "a2")
        let changes = try #require(received["changes"])
        #expect(changes["answers"]?.arrayValue?.contains(.string("4")) == true, "\(received)")
        #expect(changes["conflicts"] == .array([.string("9")]), "\(received)")
        #expect(changes["nothing_new"] == .bool(false), "\(received)")
        // B's answer goes back to A: the conflict appears there too (as `receive` words it).
        let back = try Self.exchange(id, from: b, to: a, name: "b2")
        #expect(back.contains("  New conflicts: Notes (9)"), "\(back)")
        // A's file now adds only its reception and handover: recorded,
        // yet nothing changes on B's form.
        let again = try Self.exchangeJSON(id, from: a, to: b, name: "a3")
        #expect(again["recorded"] == .bool(true) && again["changes"]?["nothing_new"] == .bool(true), "\(again)")
        let file = a.directory.appending("a3.json")
        let repeated = try Self.json(b, "receive", file)
        #expect(repeated["recorded"]?.boolValue == false)
        #expect(repeated["changes"]?["nothing_new"]?.boolValue == true)
        let check = try JSONSchemaCheck.validate("receive", try b.jqc("--json", "receive", file).stdout)
        #expect(check.status == 0, "\(check.stderr)")
    }
}
