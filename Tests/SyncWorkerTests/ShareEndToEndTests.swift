import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// A draft shared between two devices through the built `jqc`, recorded on
/// both and exchanged both ways: both show the same form, the later answer
/// standing and the conflict shown; one submits and syncs against the
/// development server, the other closes when the file saying so arrives and
/// sends nothing.
@Suite struct ShareEndToEndTests {
    /// `show --json`'s form and merge, which both devices must agree on.
    static func form(_ ledger: SampleLedger, _ id: UUID) throws -> (fields: JSONValue?, merge: JSONValue?) {
        let shown = try ledger.jqc("--json", "show", id.lowercased)
        #expect(shown.status == 0, "\(shown.stderr)")
        let check = try JSONSchemaCheck.validate("show", shown.stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let json = try JSONValue(parsing: shown.stdout)
        return (json["fields"], json["merge"])
    }

    static func value(_ fields: JSONValue?, _ id: String) -> JSONValue? {
        fields?.arrayValue?.first { $0["id"]?.stringValue == id }?["value"]
    }

    /// Shares `id` from `from` and receives the file on `to`.
    static func exchange(_ id: UUID, from: SampleLedger, to: SampleLedger, name: String) throws {
        let file = from.directory.appending("\(name).json")
        let shared = try from.jqc("handover", id.lowercased, "--share", "-o", file)
        #expect(shared.status == 0, "\(shared.stderr)")
        let received = try to.jqc("receive", file)
        #expect(received.status == 0, "\(received.stderr)")
        let again = try to.jqc("--json", "receive", file)
        #expect(try JSONValue(parsing: again.stdout)["changes"]?["nothing_new"] == .bool(true), "\(again.stdout)")
    }

    @Test(arguments: DevServer.Profile.allCases)
    func bothDevicesMergeToOneFormAndOnlyTheSubmitterSends(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let a = try SampleLedger(serverURL: server.baseURL)
        let b = try SampleLedger(serverURL: server.baseURL)
        try a.login()
        try b.login()
        let id = try a.draft()
        try a.record(.setField(field: "2", to: .text("4")), on: id)
        try a.record(.capturePhoto(try a.storedPhoto(), for: .field("10")), on: id)
        try Self.exchange(id, from: a, to: b, name: "a1")

        // Both record before they exchange again: field 9 on both (B later).
        for (ledger, answer) in [(a, "5=pass"), (a, "9=Stall 3 out of order"), (b, "3=5"), (b, "9=Stall 3 fixed")] {
            let set = try ledger.jqc("set", id.lowercased, answer)
            #expect(set.status == 0, "\(set.stderr)")
        }
        let flagged = try b.jqc("flag", id.lowercased, "--severity", "high", "--description", "Leaking tap")
        #expect(flagged.status == 0, "\(flagged.stderr)")
        try Self.exchange(id, from: b, to: a, name: "b1")
        try Self.exchange(id, from: a, to: b, name: "a2")

        let formA = try Self.form(a, id)
        let formB = try Self.form(b, id)
        #expect(formA.fields == formB.fields)
        #expect(formA.merge == formB.merge)
        #expect(Self.value(formA.fields, "9")?.stringValue == "Stall 3 fixed")
        #expect(Self.value(formA.fields, "3") != nil && Self.value(formA.fields, "5")?.stringValue == "pass")
        let conflicts = try #require(formA.merge?["conflicts"]?.arrayValue)
        #expect(conflicts.count == 1)
        #expect(conflicts.first?["field_id"]?.stringValue == "9")
        #expect(conflicts.first?["writes"]?.arrayValue?.count == 2)
        let text = try b.jqc("show", id.lowercased)
        #expect(text.stdout.contains("Conflict: Notes (9)"), "\(text.stdout)")
        let audit = try a.jqc("audit", id.lowercased, "--format", "json")
        let auditCheck = try JSONSchemaCheck.validate("audit", audit.stdout)
        #expect(auditCheck.status == 0, "\(auditCheck.stderr)")
        let report = try JSONValue(parsing: audit.stdout)
        #expect(report["form"]?["merge"] == formA.merge)
        let auditText = try a.jqc("audit", id.lowercased)
        #expect(auditText.stdout.contains("Conflict: Notes (9)"), "\(auditText.stdout)")

        // A settles it, finishes, submits and syncs; then tells B.
        for answer in ["9=Stall 3 fixed, checked", "7=yes", "8=Good"] {
            let set = try a.jqc("set", id.lowercased, answer)
            #expect(set.status == 0, "\(set.stderr)")
        }
        #expect(try a.jqc("submit", id.lowercased).status == 0)
        let sync = try a.jqc("sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)
        #expect(try server.count("photos") == 1)
        try Self.exchange(id, from: a, to: b, name: "a3")

        let closed = try #require(try b.ledger.state(of: id))
        #expect(closed.status == .completed)
        #expect(closed.conflicts.isEmpty)
        #expect(try b.ledger.outbox().isEmpty)
        let refused = try b.jqc("set", id.lowercased, "4=3")
        #expect(refused.status != 0)
        let bSync = try b.jqc("--json", "sync")
        #expect(bSync.status == 0, "\(bSync.stderr)")
        #expect(try JSONValue(parsing: bSync.stdout)["sent_total"] == .integer(0), "\(bSync.stdout)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)

        // The server's record holds both devices' answers.
        let history = try JSONValue(parsing: try a.jqc("--json", "history").stdout)
        let record = try #require(history["inspections"]?.arrayValue?.first)
        let form = try #require(record["form_data"])
        #expect(form["3"] != nil && form["5"]?.stringValue == "pass")
        #expect(form["9"]?.stringValue == "Stall 3 fixed, checked")
        #expect(form["10"]?.stringValue?.hasPrefix("/uploads/") == true)
        if profile.honoursIdempotency { #expect(record["client_id"]?.stringValue == id.lowercased) }
    }
}
