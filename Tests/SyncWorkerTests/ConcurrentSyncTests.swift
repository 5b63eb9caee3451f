import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// Several requests in flight at once (`SyncRun(concurrency:)`), against the
/// scripted transport with latency: the order rules still hold and every
/// outcome is recorded once.
@Suite struct ConcurrentSyncTests {
    let sample: SampleLedger
    let server: ScriptedTransport
    let clock = ManualClock(Timestamp(iso8601: "2026-03-01T09:00:00Z")!)

    init() throws {
        sample = try SampleLedger(serverURL: "http://fake.test/api/v1")
        server = try ScriptedTransport()
        try sample.logIn(to: server)
    }

    func run(concurrency: Int) throws -> SyncReport {
        let saved = try sample.session()
        let session = ServerSession(
            saved, api: APIClient(baseURL: saved.serverURL, transport: server),
            store: SessionStore(path: sample.credentialsPath))
        return try SyncRun(
            ledger: sample.ledger, session: session, device: sample.device, clock: clock, random: { 0.5 },
            concurrency: concurrency
        ).run()
    }

    /// The exchange that carried `json[key] == value`, or the upload of a photo.
    func exchange(_ path: String, where matches: (ScriptedTransport.Exchange) -> Bool) -> ScriptedTransport.Exchange? {
        server.exchanges.first {
            $0.path.hasSuffix(path) && $0.status.map { (200..<300).contains($0) } == true && matches($0)
        }
    }

    @Test(arguments: [1, 4])
    func theOrderRulesHoldWithRequestsInParallel(concurrency: Int) throws {
        var inspections: [UUID] = []
        inspections.append(try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false, followUp: true))
        for _ in 1..<8 { inspections.append(try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)) }
        let child = try sample.completedReinspection(of: inspections[0])
        server.delays(.milliseconds(20))

        let report = try run(concurrency: concurrency)

        #expect(report.stop == nil)
        #expect(try sample.ledger.outbox().isEmpty)
        if concurrency == 1 {
            #expect(server.concurrencySeen == 1)
        } else {
            #expect(server.concurrencySeen > 1 && server.concurrencySeen <= concurrency)
        }
        let posts = server.exchanges.filter { $0.request.method == .post }
        #expect(posts.filter { $0.path.hasSuffix("/inspections") }.count == 9, "each inspection once")
        #expect(posts.filter { $0.path.hasSuffix("/issues") }.count == 8, "each issue once")
        let types = try sample.eventTypes()
        #expect(types.filter { $0 == "sync.inspection_accepted" }.count == 9)
        #expect(types.filter { $0 == "sync.photo_uploaded" }.count == 8)

        for id in inspections + [child] {
            let state = try #require(try sample.ledger.state(of: id))
            let sent = try #require(exchange("/inspections") { $0.json?["client_id"] == .string(id.lowercased) })
            // An inspection after all its photos' answers.
            for photo in state.photos {
                let path = try #require(state.sync.uploadedPhotos[photo.photo.photoID])
                #expect(sent.json?["form_data"]?[try #require(photo.fieldID).rawValue] == .string(path))
                let upload = try #require(
                    exchange("/photos/upload") { exchange in
                        guard case .multipart(let parts) = exchange.request.body else { return false }
                        return parts.contains {
                            $0.name == "file" && $0.filename?.hasPrefix(photo.photo.photoID.lowercased) == true
                        }
                    })
                #expect(upload.ended < sent.began)
            }
            // An issue after its inspection's answer.
            for issue in state.issues {
                let issueSent = try #require(
                    exchange("/issues") { $0.json?["client_id"] == .string(issue.id.lowercased) })
                #expect(sent.ended < issueSent.began)
            }
        }
        // A re-inspection after its parent's answer.
        let parent = try #require(
            exchange("/inspections") { $0.json?["client_id"] == .string(inspections[0].lowercased) })
        let reinspection = try #require(exchange("/inspections") { $0.json?["client_id"] == .string(child.lowercased) })
        #expect(parent.ended < reinspection.began)
    }
}
