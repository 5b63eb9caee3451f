import CurlTransport
import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// The built `jqc` against the development server's reference profile, whose
/// history rows are the reference backend's summary (no `client_id`, no
/// `started_at`): the look-up after a lost answer, and the requests a run makes.
@Suite struct ReferenceProfileTests {
    /// Every answer to `POST /inspections` is lost after the server committed
    /// it: the look-up finds the record by its summary and adopts it.
    @Test func aLostAnswerLeavesOneRecordFoundByItsSummary() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 0, issues: 0, followUp: true)
        try server.faults(
            .object(["drop_after_commit_rate": .integer(1), "fault_paths": .array([.string("/api/v1/inspections")])]))

        let sync = try sample.jqc("--json", "sync")

        #expect(sync.status == 0, "\(sync.stderr)")
        let adopted = try JSONValue(parsing: sync.stdout)["adopted"]
        #expect(
            adopted == .array([.object(["kind": .string("inspection"), "id": .string(id.lowercased)])]),
            "\(sync.stdout)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.requests("POST /api/v1/inspections", status: "dropped") == 1)
        #expect(try sample.ledger.outbox().isEmpty)
        let history = try JSONValue(parsing: try sample.jqc("--json", "history").stdout)
        let record = try #require(history["inspections"]?.arrayValue?.first)
        #expect(record["started_at"] == nil, "the reference summary has no started_at")
        #expect(try sample.ledger.state(of: id)?.sync.serverID == record["id"]?.integerValue.map(String.init))
    }

    /// Two records on the server alike in everything the summary shows: the
    /// look-up cannot tell which is this inspection, so it adopts neither,
    /// sends nothing, records why and prints it.
    @Test func twoAlikeRecordsAreNeitherAdoptedNorJoinedByAThird() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 0, issues: 0)
        try server.faults(
            .object(["drop_after_commit_rate": .integer(1), "fault_paths": .array([.string("/api/v1/inspections")])]))
        // One pass only: the retry is not due within this run (2 s × 2500), and
        // the next run (scale 0) takes a next try that far ahead as due at once.
        let slow = JQCRunner(ledger: sample.path, environment: ["JQC_SYNC_BACKOFF_SCALE": "2500"])
        let lossy = try slow("sync")
        #expect(lossy.status == 0, "\(lossy.stderr)")
        #expect(try server.count("inspections") == 1)
        try server.resetFaults()
        // Someone sends the same inspection again from elsewhere.
        let state = try #require(try sample.ledger.state(of: id))
        let body = SyncRequests.inspection(state, photoPath: { _ in nil }, parentServerID: nil)
        let client = try CurlHTTPClient(configuration: .init(connectTimeout: .seconds(2), totalTimeout: .seconds(10)))
        let posted = try client.send(
            HTTPRequest(
                method: .post, url: server.baseURL + "/inspections",
                headers: ["Authorization": "Bearer \(try sample.session().tokens.accessToken)"],
                body: .json(Array(body.serialized().utf8))))
        #expect(posted.status == 201)

        let sync = try sample.jqc("sync")

        #expect(try server.count("inspections") == 2, "not sent a third time")
        #expect(try server.requests("POST /api/v1/inspections", status: "201") == 1, "only the test's own")
        let said = "2 records on the server (ids 1, 2) match this inspection by template, facility, area"
        #expect(sync.stdout.contains(said) || sync.stderr.contains(said), "\(sync.stdout)\n\(sync.stderr)")
        #expect(try sample.ledger.state(of: id)?.sync.serverID == nil)
        let log = try sample.jqc("log", "--inspection", id.lowercased)
        #expect(log.stdout.contains(said), "\(log.stdout)")
        // Still looked up, never sent blindly: a second run says the same and sends nothing.
        let again = try sample.jqc("sync")
        #expect(again.stdout.contains(said) || again.stderr.contains(said))
        #expect(try server.count("inspections") == 2)
    }

    /// The paths of the reference backend (`Schemas/openapi.yaml` without its
    /// extensions), as the development server names its routes.
    static let referenceRoutes: Set<String> = [
        "POST /api/v1/auth/login", "POST /api/v1/auth/refresh", "GET /api/v1/auth/me", "POST /api/v1/auth/logout",
        "GET /api/v1/facilities", "GET /api/v1/facilities/{}/areas", "GET /api/v1/templates",
        "GET /api/v1/templates/{}", "POST /api/v1/photos/upload", "POST /api/v1/inspections",
        "GET /api/v1/inspections", "POST /api/v1/issues", "GET /uploads/{}",
    ]

    /// A whole run (login, sync of photos, inspections, a re-inspection and
    /// issues, pull, history, logout) asks only for what the reference backend
    /// has, and every answer is a success. No witness is configured; the
    /// witness's own calls (`/api/v1/ledger/…`, outside the reference
    /// contract, still made by `jqc sync` on this branch) are left out here.
    @Test func aRunAsksOnlyForWhatTheReferenceBackendHas() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let first = try sample.completedInspection(photos: 2, issues: 2, issuePhoto: true, followUp: true)
        try sample.completedReinspection(of: first)
        #expect(try sample.jqc("sync").status == 0)
        #expect(try sample.jqc("pull").status == 0)
        #expect(try sample.jqc("history").status == 0)
        #expect(try sample.jqc("logout").status == 0)

        let requests = try #require(server.stats()["requests"])
        guard case .object(let routes) = requests else {
            Issue.record("no request counts: \(requests)")
            return
        }
        var asked: Set<String> = []
        for route in routes {
            let name = route.key.replacingOccurrences(of: #"\{[^}]*\}"#, with: "{}", options: .regularExpression)
            if name.contains("/api/v1/ledger/") { continue }  // the witness, still called on this branch
            asked.insert(name)
            #expect(Self.referenceRoutes.contains(name), "outside the reference contract: \(route.key)")
            guard case .object(let statuses) = route.value else { continue }
            for status in statuses {
                #expect(status.key.hasPrefix("2"), "\(route.key) answered \(status.key)")
            }
        }
        #expect(
            asked.isSuperset(of: ["POST /api/v1/inspections", "POST /api/v1/issues", "POST /api/v1/photos/upload"]))
    }
}

/// `jqc history` against the reference backend (issue #33 item 8): `--area
/// NAME` finds a record also through the areas pulled here (a summary whose
/// `area_name` is null names the area by its id only: `HistoryFilterTests`),
/// and `history show` names each answer's field and the time's zone.
@Suite struct ReferenceHistoryNamingTests {
    @Test func anAreaNamedAsPulledHereFindsAndNamesTheServersRecord() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        _ = try sample.completedInspection(photos: 0, issues: 0)
        #expect(try sample.jqc("sync").status == 0)
        let rows = try JSONValue(parsing: try sample.jqc("--json", "history").stdout)
        let record = try #require(rows["inspections"]?.arrayValue?.first)
        let id = try #require(record["id"]?.integerValue)

        let byName = try sample.jqc("history", "--area", "lobby RESTROOMS")
        #expect(byName.status == 0, "\(byName.stderr)")
        #expect(byName.stdout.contains("\(id)"), "\(byName.stdout)")
        let otherArea = try sample.jqc("history", "--area", "Kitchen")
        #expect(!otherArea.stdout.contains("\(id) "), "\(otherArea.stdout)")

        let shown = try sample.jqc("history", "show", "\(id)")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains(", area Lobby restrooms (1001)"), "\(shown.stdout)")
        #expect(shown.stdout.contains("    2 \"Floors\": "), "\(shown.stdout)")
        let completed = try #require(shown.stdout.split(separator: "\n").first { $0.hasPrefix("  completed:  ") })
        #expect(completed.contains("Z") || completed.contains("UTC") || completed.contains("+"), "\(completed)")
    }
}
