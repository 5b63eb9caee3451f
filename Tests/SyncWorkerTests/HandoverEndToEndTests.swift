import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// A draft handed from one device to another through the built `jqc`, then
/// finished and synced by the receiver against the development server: the
/// server holds it once, with every answer, photo and issue of both devices,
/// and the sender sends nothing for it.
@Suite struct HandoverEndToEndTests {
    @Test(arguments: DevServer.Profile.allCases)
    func theReceiverFinishesAndSyncsItOnceAndTheSenderSendsNothing(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let sender = try SampleLedger(serverURL: server.baseURL)
        let receiver = try SampleLedger(serverURL: server.baseURL)
        try sender.login()
        try receiver.login()
        // A: a start, answers, a photo in the image field, an issue with its photo.
        let id = try sender.draft()
        try sender.record(.setField(field: "2", to: .text("4")), on: id)
        try sender.record(.setField(field: "9", to: .text("Stall 3 out of order")), on: id)
        try sender.record(.capturePhoto(try sender.storedPhoto(), for: .field("10")), on: id)
        let issue = UUID()
        try sender.record(
            .flagIssue(
                FlagIssue(issueID: issue, severity: "high", description: "Leaking tap", photo: try sender.storedPhoto())
            ),
            on: id)
        let file = sender.directory.appending("handover.json")
        let handed = try sender.jqc("handover", id.lowercased, "-o", file, "--to", "Ben")
        #expect(handed.status == 0, "\(handed.stderr)")

        // B: receives, finishes, submits, syncs.
        let received = try receiver.jqc("receive", file)
        #expect(received.status == 0, "\(received.stderr)")
        for answer in ["3=5", "5=pass", "7=yes", "8=Good"] {
            let set = try receiver.jqc("set", id.lowercased, answer)
            #expect(set.status == 0, "\(set.stderr)")
        }
        let submitted = try receiver.jqc("submit", id.lowercased)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let sync = try receiver.jqc("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        let report = try JSONValue(parsing: sync.stdout)
        #expect(
            report["sent"] == .object(["photo": .integer(2), "inspection": .integer(1), "issue": .integer(1)]),
            "\(sync.stdout)")
        #expect(report["failed"]?.arrayValue?.isEmpty == true, "\(sync.stdout)")
        #expect(try receiver.ledger.outbox().isEmpty)
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)
        #expect(try server.count("photos") == 2)

        // What the server holds: both devices' answers, the photo's path, the issue.
        let state = try #require(try receiver.ledger.state(of: id))
        let serverID = try #require(state.sync.serverID)
        let history = try JSONValue(parsing: try receiver.jqc("--json", "history").stdout)
        let records = try #require(history["inspections"]?.arrayValue)
        let record = try #require(records.first { $0["id"]?.integerValue.map(String.init) == serverID })
        let form = try #require(record["form_data"])
        #expect(form["2"] != nil && form["9"]?.stringValue == "Stall 3 out of order")
        #expect(form["3"] != nil && form["8"]?.stringValue == "Good")
        #expect(form["10"]?.stringValue?.hasPrefix("/uploads/") == true)
        if profile.honoursIdempotency {
            #expect(record["client_id"]?.stringValue == id.lowercased)
        }
        #expect(state.sync.acceptedIssues[issue] != nil)

        // A sends nothing for it.
        let senderSync = try sender.jqc("--json", "sync")
        #expect(senderSync.status == 0, "\(senderSync.stderr)")
        #expect(try JSONValue(parsing: senderSync.stdout)["sent_total"] == .integer(0), "\(senderSync.stdout)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("photos") == 2)
    }
}
