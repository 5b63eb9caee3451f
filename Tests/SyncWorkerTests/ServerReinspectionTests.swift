import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// A colleague's follow-up, re-inspected from the server's history on a
/// device that never held it, through the built `jqc` against the
/// development server.
@Suite struct ServerReinspectionTests {
    /// A colleague's inspection needing follow-up, synced; its server id.
    static func colleaguesFollowUp(_ server: DevServer) throws -> (SampleLedger, String) {
        let colleague = try SampleLedger(serverURL: server.baseURL)
        try colleague.login()
        _ = try colleague.completedInspection(photos: 0, issues: 0, followUp: true)
        try #require(try colleague.jqc("sync").status == 0)
        let history = try JSONValue(parsing: try colleague.jqc("--json", "history").stdout)
        let id = try #require(history["inspections"]?.arrayValue?.first?["id"]?.integerValue)
        return (colleague, String(id))
    }

    @Test(arguments: DevServer.Profile.allCases)
    func aColleaguesFollowUpIsShownReinspectedAndResolved(_ profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let (colleague, serverID) = try Self.colleaguesFollowUp(server)
        let me = try SampleLedger(serverURL: server.baseURL)
        try me.login()

        let detail = try me.jqc("history", "show", serverID)
        #expect(detail.status == 0, "\(detail.stderr)")
        #expect(detail.stdout.contains("follow-up:  required: 'jqc start --reinspect \(serverID)' re-inspects it here"))
        let json = try me.jqc("--json", "history", "show", serverID)
        let check = try JSONSchemaCheck.validate("history_show", json.stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let record = try JSONValue(parsing: json.stdout)
        #expect(record["id"] == .string(serverID) && record["follow_up_required"] == .bool(true), "\(json.stdout)")
        #expect(record["parent_id"] == .null, "\(json.stdout)")
        #expect(record["form_data"].map { $0 != .null && $0 != .object([]) } == true, "\(json.stdout)")

        let started = try me.jqc("--json", "start", "--reinspect", serverID)
        #expect(started.status == 0, "\(started.stderr)")
        let reinspection = try JSONValue(parsing: started.stdout)
        #expect(reinspection["parent_server_id"] == .string(serverID), "\(started.stdout)")
        #expect(
            reinspection["fields"]?.arrayValue?.contains { $0["value"] != nil && $0["value"] != .null } == true,
            "copied from its form: \(started.stdout)")
        let shown = try JSONValue(parsing: try me.jqc("--json", "inspections").stdout)
        let idText = try #require(shown.arrayValue?.first?["id"]?.stringValue)
        let id = try #require(UUID(uuidString: idText))
        let state = try #require(try me.ledger.state(of: id))
        #expect(state.parentServerID == serverID)
        #expect(state.parentInspectionID == nil)
        // The copied answers are the colleague's non-scoring ones.
        let theirID = try #require(try colleague.ledger.summaries().first?.id)
        let theirs = try #require(try colleague.ledger.state(of: theirID))
        for (field, value) in state.values { #expect(theirs.values[field] == value, "field \(field)") }
        #expect(!state.values.isEmpty)

        try me.answer(id)
        try me.record(.submit(followUpRequired: false), on: id)
        let synced = try me.jqc("sync")
        #expect(synced.status == 0, "\(synced.stderr)")
        let after = try JSONValue(parsing: try me.jqc("--json", "history", "show", serverID).stdout)
        #expect(after["follow_up_required"] == .bool(false), "\(after)")
        let history = try JSONValue(parsing: try me.jqc("--json", "history").stdout)
        let mine = history["inspections"]?.arrayValue?.first { $0["id"]?.integerValue.map(String.init) != serverID }
        #expect(mine?["parent_inspection_id"]?.integerValue.map(String.init) == serverID)
        let log = try me.jqc("--json", "log", "--type", "inspection.started")
        let startedEvent = try JSONValue(
            parsing: try #require(log.stdout.split(separator: "\n").first.map(String.init)))
        #expect(startedEvent["payload"]?["parent_server_id"] == .string(serverID), "\(log.stdout)")
    }

    @Test func aRecordNeitherHereNorOnTheServerIsNamed() throws {
        let server = try DevServer()
        let me = try SampleLedger(serverURL: server.baseURL)
        try me.login()
        let started = try me.jqc.reportingKinds("start", "--reinspect", "999999")
        #expect(started.status == 1)
        #expect(started.errorKind == "JQCError.notFound", "\(started.stderr)")
        #expect(started.errorMessage?.contains("'999999'") == true, "\(started.stderr)")
        #expect(try me.eventTypes().isEmpty)
        let shown = try me.jqc.reportingKinds("history", "show", "abc")
        #expect(shown.status == 2)
        #expect(shown.errorKind == "UsageError.invalidValue", "\(shown.stderr)")
    }

    @Test func aRecordThatNeedsNoFollowUpIsRefused() throws {
        let server = try DevServer()
        let colleague = try SampleLedger(serverURL: server.baseURL)
        try colleague.login()
        _ = try colleague.completedInspection(photos: 0, issues: 0, followUp: false)
        try #require(try colleague.jqc("sync").status == 0)
        let history = try JSONValue(parsing: try colleague.jqc("--json", "history").stdout)
        let serverID = String(try #require(history["inspections"]?.arrayValue?.first?["id"]?.integerValue))
        let me = try SampleLedger(serverURL: server.baseURL)
        try me.login()
        let started = try me.jqc.reportingKinds("start", "--reinspect", serverID)
        #expect(started.status == 1)
        #expect(started.errorKind == "DomainError.serverParentNeedsNoFollowUp", "\(started.stderr)")
        #expect(try me.eventTypes().isEmpty)
    }
}

/// `jqc history` with filters, through the built `jqc` against the development server.
@Suite struct HistoryFilterCommandTests {
    @Test func filtersKeepOnlyTheMatchingRecordsAndSaySo() throws {
        let server = try DevServer()
        let colleague = try SampleLedger(serverURL: server.baseURL)
        try colleague.login()
        _ = try colleague.completedInspection(photos: 0, issues: 0, followUp: true)
        _ = try colleague.completedInspection(photos: 0, issues: 0, followUp: false)
        try #require(try colleague.jqc("sync").status == 0)

        let followUps = try colleague.jqc("--json", "history", "--follow-up", "yes")
        #expect(followUps.status == 0, "\(followUps.stderr)")
        let matching = try JSONValue(parsing: followUps.stdout)
        #expect(matching["total"] == .integer(1) && matching["inspections"]?.arrayValue?.count == 1, "\(matching)")
        #expect(matching["inspections"]?.arrayValue?.first?["follow_up_required"] == .bool(true), "\(matching)")
        let none = try JSONValue(parsing: try colleague.jqc("--json", "history", "--facility", "No Such Place").stdout)
        #expect(none["total"] == .integer(0) && none["inspections"]?.arrayValue?.isEmpty == true, "\(none)")
        let since = try JSONValue(parsing: try colleague.jqc("--json", "history", "--since", "2000-01-01").stdout)
        #expect(since["inspections"]?.arrayValue?.count == 2)
        #expect(since["total"]?.integerValue == 2)
        let later = try JSONValue(parsing: try colleague.jqc("--json", "history", "--until", "2000-01-01").stdout)
        #expect(later["inspections"]?.arrayValue?.isEmpty == true)
        let wrong = try colleague.jqc.reportingKinds("history", "--follow-up", "maybe")
        #expect(wrong.status == 2)
        #expect(wrong.errorKind == "UsageError.invalidValue", "\(wrong.stderr)")
    }
}
