import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// Exactly once against a server that honours neither `Idempotency-Key` nor
/// `client_id` (the scripted transport's reference-backend profile): an
/// ambiguous outcome is looked up before the record is sent again.
@Suite struct ExactlyOnceTests {
    let sample: SampleLedger
    let server: ScriptedTransport
    let clock = ManualClock(Timestamp(iso8601: "2026-03-01T09:00:00Z")!)
    let journal: String

    init() throws {
        sample = try SampleLedger(serverURL: "http://fake.test/api/v1")
        server = try ScriptedTransport()
        server.behavesLikeTheReferenceBackend()
        journal = sample.credentialsPath.replacingOccurrences(of: "credentials.json", with: "sync-inflight")
        try sample.logIn(to: server)
    }

    func run() throws -> SyncReport {
        let saved = try sample.session()
        let session = ServerSession(
            saved, api: APIClient(baseURL: saved.serverURL, transport: server),
            store: SessionStore(path: sample.credentialsPath))
        return try SyncRun(
            ledger: sample.ledger, session: session, device: sample.device, clock: clock, random: { 0.5 },
            journalPath: journal
        ).run()
    }

    var inspectionPosts: Int {
        server.exchanges.filter { $0.request.method == .post && $0.path.hasSuffix("/inspections") }.count
    }

    @Test func aResponseLostAfterCommitIsFoundByItsTimesAndAdopted() throws {
        let id = try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.commitThenLose])

        let first = try run()
        #expect(first.retrying.map(\.item) == [SyncItem(kind: .inspection, id: id)])
        #expect(FileManager.default.fileExists(atPath: journal), "the ambiguous send is kept across runs")

        clock.advance(microseconds: 2_000_000)
        let second = try run()

        #expect(second.adopted == [SyncItem(kind: .inspection, id: id)])
        #expect(inspectionPosts == 2, "one per inspection: the lost one was not sent again")
        #expect(try sample.ledger.outbox().isEmpty)
        #expect(try sample.ledger.state(of: id)?.sync.serverID == "1", "the id found on the server")
        #expect(!FileManager.default.fileExists(atPath: journal), "nothing is ambiguous any more")
    }

    @Test func aSendCutShortByACrashIsLookedUpByTheNextProcess() throws {
        let id = try sample.completedInspection(photos: 0, issues: 0)
        // The previous process noted the send, the server committed it, and
        // the process died before it recorded anything.
        let state = try #require(try sample.ledger.state(of: id))
        let body = SyncRequests.inspection(state, photoPath: { _ in nil }, parentServerID: nil)
        var headers = HTTPHeaders()
        headers.set("Authorization", "Bearer \(server.accessToken)")
        _ = try server.send(
            HTTPRequest(
                method: .post, url: "http://fake.test/api/v1/inspections", headers: headers,
                body: .json(Array(body.serialized().utf8))))
        try "inspection \(id.lowercased)\n".write(toFile: journal, atomically: true, encoding: .utf8)

        let report = try run()

        #expect(report.adopted == [SyncItem(kind: .inspection, id: id)])
        #expect(inspectionPosts == 1, "only the dead process's send")
        #expect(try sample.ledger.outbox().isEmpty)
    }

    @Test func anAmbiguousSendTheServerNeverGotIsSentOnce() throws {
        let id = try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.transport(.timedOut(detail: "no answer in 60 s"))])

        _ = try run()
        clock.advance(microseconds: 2_000_000)
        let second = try run()

        #expect(second.adopted.isEmpty)
        #expect(second.sent == [SyncItem(kind: .inspection, id: id)])
        #expect(inspectionPosts == 2, "the timed-out send and the one after the look-up found nothing")
        #expect(server.paths.filter { $0.hasPrefix("GET /inspections") }.count == 1)
    }

    @Test(arguments: [(502, true), (504, true), (500, false), (503, false)])
    func aGatewaysGivingUpIsAmbiguousAndAServersOwnErrorIsNot(status: Int, looksUp: Bool) throws {
        try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.status(status, "upstream trouble")])

        _ = try run()
        clock.advance(microseconds: 2_000_000)
        _ = try run()

        #expect(server.paths.contains { $0.hasPrefix("GET /inspections") } == looksUp)
        #expect(try sample.ledger.outbox().isEmpty)
    }

    @Test func aRequestTimeoutIsRetriedNotRefused() throws {
        try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.status(408, "request timeout")])

        let report = try run()

        #expect(report.gaveUp.isEmpty)
        #expect(report.retrying.first?.error == "HTTP 408: request timeout")
        #expect(try sample.ledger.outbox().first?.state == .retrying)
    }

    @Test func aCleanRunLooksNothingUp() throws {
        try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        _ = try run()
        #expect(!server.paths.contains { $0.hasPrefix("GET /inspections") })
        #expect(!FileManager.default.fileExists(atPath: journal))
    }
}
