import Foundation
import HTTPCore
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// The worker in-process against `ScriptedTransport`: order, keys, backoff,
/// refusals and the session rules, with a clock and random numbers the test sets.
@Suite struct SyncRunTests {
    let sample: SampleLedger
    let server: ScriptedTransport
    let clock = ManualClock(Timestamp(iso8601: "2026-03-01T09:00:00Z")!)

    init() throws {
        sample = try SampleLedger(serverURL: "http://fake.test/api/v1")
        server = try ScriptedTransport()
        try sample.logIn(to: server)
    }

    /// One run with the standard policy; the jitter's random number is 0.5 (no spread).
    func run(policy: RetryPolicy = .standard) throws -> SyncReport {
        let saved = try sample.session()
        let session = ServerSession(
            saved, api: APIClient(baseURL: saved.serverURL, transport: server),
            store: SessionStore(path: sample.credentialsPath))
        return try SyncRun(
            ledger: sample.ledger, session: session, device: sample.device, clock: clock, policy: policy,
            random: { 0.5 }
        ).run()
    }

    func outbox() throws -> [OutboxItem] { try sample.ledger.outbox() }

    /// The id of the first event of `type` in `stream` for which `matches` holds.
    func eventID(_ type: InspectionEventType, in stream: UUID, where matches: (InspectionEvent) -> Bool = { _ in true })
        throws -> UUID
    {
        let record = try sample.ledger.log.records(inStream: stream).first { record in
            record.type == type.rawValue && (try? InspectionEvent.decode(record)).map(matches) == true
        }
        return try #require(record).id
    }

    // MARK: - Order and keys

    @Test func sendsPhotosThenInspectionsThenIssuesThenPullsReferenceData() throws {
        let first = try sample.completedInspection(photos: 2, issues: 1, followUp: true)
        let second = try sample.completedInspection(photos: 2, issues: 1, issuePhoto: false)
        let reinspection = try sample.completedReinspection(of: first)

        let report = try run()

        #expect(report.sent.count == 5 + 3 + 2)
        #expect(try outbox().isEmpty)
        let paths = server.paths
        #expect(
            paths == Array(repeating: "POST /photos/upload", count: 5) + Array(repeating: "POST /inspections", count: 3)
                + Array(repeating: "POST /issues", count: 2) + ["GET /facilities", "GET /templates"])
        #expect(report.reference == .refreshed(facilities: 2, templates: 2))

        // The re-inspection names its parent's server id; every photo field is a server path.
        let bodies = server.exchanges.filter { $0.path.hasSuffix("/inspections") }.compactMap(\.json)
        let parentServerID = try #require(try sample.ledger.state(of: first)?.sync.serverID)
        let childBody = try #require(bodies.first { $0["client_id"] == .string(reinspection.lowercased) })
        #expect(childBody["parent_inspection_id"] == .integer(Int64(parentServerID)!))
        for body in bodies where body["client_id"] != .string(reinspection.lowercased) {
            #expect(body["form_data"]?["10"]?.stringValue?.hasPrefix("/uploads/") == true)
            #expect(body["form_data"]?["11"]?.stringValue?.hasPrefix("/uploads/") == true)
        }
        // Issues go under their inspection's server id.
        let issueBodies = server.exchanges.filter { $0.path.hasSuffix("/issues") }.compactMap(\.json)
        let secondServerID = try #require(try sample.ledger.state(of: second)?.sync.serverID)
        #expect(issueBodies.contains { $0["inspection_id"] == .integer(Int64(secondServerID)!) })

        // Keys come from the events that caused each write.
        let submitted = try eventID(.submitted, in: second)
        let secondBody = server.exchanges.first { $0.json?["client_id"] == .string(second.lowercased) }
        #expect(secondBody?.idempotencyKey == "jqc-inspection-\(submitted.lowercased)")
        let secondState = try #require(try sample.ledger.state(of: second))
        let photo = try #require(secondState.photos.first).photo.photoID
        let captured = try eventID(.photoCaptured, in: second) { event in
            if case .photoCaptured(let c) = event { return c.photo.photoID == photo }
            return false
        }
        let uploadPath = try #require(secondState.sync.uploadedPhotos[photo])
        let upload = server.exchanges.first { exchange in
            exchange.path.hasSuffix("/photos/upload") && exchange.status == 201
                && exchange.idempotencyKey == "jqc-photo-\(captured.lowercased)"
        }
        #expect(upload != nil)
        #expect(uploadPath.hasPrefix("/uploads/"))

        // Outcomes are events, recorded by the logged-in user.
        let types = try sample.eventTypes()
        #expect(types.filter { $0 == "sync.photo_uploaded" }.count == 5)
        #expect(types.filter { $0 == "sync.inspection_accepted" }.count == 3)
        #expect(types.filter { $0 == "sync.issue_accepted" }.count == 2)
    }

    @Test func aLostResponseIsRetriedWithTheSameKeyAfterTheBackoff() throws {
        let id = try sample.completedInspection(photos: 0, issues: 1, issuePhoto: false)
        server.script("/inspections", [.commitThenLose])

        let first = try run()
        #expect(first.retrying.map(\.item) == [SyncItem(kind: .inspection, id: id)])
        let retrying = try #require(try outbox().first { $0.item.kind == .inspection })
        #expect(retrying.state == .retrying)
        #expect(retrying.attempts == 1)
        // Base 2 s with the jitter's midpoint.
        #expect(retrying.nextAttemptAt?.microsecondsSinceEpoch == clock.now().microsecondsSinceEpoch + 2_000_000)
        #expect(first.skipped.map(\.kind) == [.issue], "the issue waits for its inspection's server id")

        // Not due yet: nothing is sent.
        _ = try run()
        #expect(server.exchanges.filter { $0.path.hasSuffix("/inspections") }.count == 1)

        clock.advance(microseconds: 2_000_000)
        let third = try run()
        #expect(third.sent.map(\.kind) == [.inspection, .issue])
        // The outcome was ambiguous, so the worker looked before sending again,
        // found the record by its client_id, and adopted its id.
        #expect(third.adopted == [SyncItem(kind: .inspection, id: id)])
        let posts = server.exchanges.filter { $0.request.method == .post && $0.path.hasSuffix("/inspections") }
        #expect(posts.count == 1)
        #expect(server.paths.contains { $0.hasPrefix("GET /inspections") })
        #expect(try sample.ledger.state(of: id)?.sync.serverID == "1")
    }

    @Test func aLongOutageStallsAnItemButNeverGivesItUp() throws {
        let id = try sample.completedInspection(photos: 1, issues: 1, issuePhoto: false)
        server.script("/inspections", Array(repeating: .status(503, "maintenance"), count: 12))

        var delays: [Int64] = []
        for _ in 1...12 {
            let report = try run()
            #expect(report.gaveUp.isEmpty)
            #expect(!report.needsAttention, "waiting out an outage needs nobody")
            if let next = report.retrying.first?.nextAttemptAt {
                delays.append((next.microsecondsSinceEpoch - clock.now().microsecondsSinceEpoch) / 1_000_000)
                clock.advance(microseconds: next.microsecondsSinceEpoch - clock.now().microsecondsSinceEpoch)
            }
        }
        #expect(delays == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300, 300], "capped at 5 minutes, never given up")
        let rows = try outbox()
        let inspection = try #require(rows.first { $0.item.kind == .inspection })
        #expect(inspection.state == .stalled)
        #expect(inspection.attempts == 12)
        #expect(inspection.lastHTTPStatus == 503 && inspection.lastError?.hasSuffix("maintenance") == true)
        #expect(try sample.ledger.summaries(.all).first?.syncState == .stalled)
        let issue = try #require(rows.first { $0.item.kind == .issue })
        #expect(issue.state == .pending, "the issue waits for its inspection, not failed")
        #expect(issue.detail?.contains("waiting for its inspection") == true)

        // The server is back: everything goes, nobody had to ask.
        let last = try run()
        #expect(last.sent.map(\.kind) == [.inspection, .issue])
        #expect(try outbox().isEmpty)
        #expect(try sample.ledger.state(of: id)?.sync.uploadedPhotos.count == 1)
        #expect(try sample.eventTypes().contains("sync.gave_up") == false)
    }

    @Test func anInspectionWaitsForItsPhotoThroughAnOutageAndGoesWithIt() throws {
        let id = try sample.completedInspection(photos: 1, issues: 0)
        let photo = try #require(try sample.ledger.state(of: id)?.photos.first).photo.photoID
        server.script("/photos/upload", Array(repeating: .status(500, "server error"), count: 8))

        for _ in 1...8 {
            let report = try run()
            #expect(report.gaveUp.isEmpty)
            if let next = report.retrying.first?.nextAttemptAt {
                clock.advance(microseconds: next.microsecondsSinceEpoch - clock.now().microsecondsSinceEpoch)
            }
        }
        #expect(server.exchanges.filter { $0.path.hasSuffix("/inspections") }.isEmpty, "never sent without it")
        let waiting = try #require(try outbox().first { $0.item.kind == .inspection })
        #expect(waiting.state == .pending)
        let detail = try #require(waiting.detail)
        #expect(detail.hasPrefix("waiting for photo \(photo.lowercased.prefix(8)): HTTP 500: server error, next try "))
        #expect(detail.contains("(stalled after 8 attempts)"))
        let summary = try #require(try sample.ledger.summaries(.all).first)
        #expect(summary.syncNotes.contains { $0.hasPrefix("inspection waiting for photo") })

        _ = try run()
        #expect(try outbox().isEmpty)
        let body = try #require(server.exchanges.first { $0.path.hasSuffix("/inspections") }?.json)
        let state = try #require(try sample.ledger.state(of: id))
        let field = try #require(state.photos.first?.fieldID)
        #expect(body["form_data"]?[field.rawValue]?.stringValue?.hasPrefix("/uploads/") == true)
        #expect(try sample.ledger.summaries(.all).first?.syncState == .synced)
    }

    @Test func aRefusalGivesUpAtOnceWithTheServersMessage() throws {
        try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.status(422, "form_data.2: rating must be an integer from 0 to 5")])

        let report = try run()

        #expect(report.gaveUp.count == 1)
        #expect(report.needsAttention)
        let row = try #require(try outbox().first)
        #expect(row.state == .failed)
        #expect(row.attempts == 1)
        #expect(row.lastHTTPStatus == 422)
        #expect(row.lastError?.contains("form_data.2: rating must be an integer from 0 to 5") == true)
        #expect(server.exchanges.filter { $0.path.hasSuffix("/inspections") }.count == 1)
    }

    @Test func aPhotoThatFailedForGoodIsSentAsEmpty() throws {
        let id = try sample.completedInspection(photos: 2, issues: 0)
        let image = try #require(try sample.ledger.state(of: id)?.photos.first { $0.fieldID == "10" })
        // Uploads go in outbox order (by photo id), so script by key instead: refuse this photo only.
        let captured = try eventID(.photoCaptured, in: id) { event in
            if case .photoCaptured(let c) = event { return c.photo.photoID == image.photo.photoID }
            return false
        }
        let refusing = KeyedRefusal(key: "jqc-photo-\(captured.lowercased)", inner: server)
        let saved = try sample.session()
        let session = ServerSession(
            saved, api: APIClient(baseURL: saved.serverURL, transport: refusing),
            store: SessionStore(path: sample.credentialsPath))
        _ = try SyncRun(ledger: sample.ledger, session: session, device: sample.device, clock: clock, random: { 0.5 })
            .run()

        let body = try #require(server.exchanges.first { $0.path.hasSuffix("/inspections") }?.json)
        #expect(body["form_data"]?["10"] == .string(""))
        #expect(body["form_data"]?["11"]?.stringValue?.hasPrefix("/uploads/") == true)

        // Never plain "synced": every view names the photo left out and why.
        let prefix = image.photo.photoID.lowercased.prefix(8)
        let summary = try #require(try sample.ledger.summaries(.all).first)
        #expect(summary.syncState == .syncedWithoutPhotos)
        #expect(summary.syncNotes == ["inspection synced without photo \(prefix): HTTP 422: file: is not an image"])
        let row = try #require(try outbox().first)
        #expect(row.state == .failed)
        #expect(row.detail == "its inspection went to the server without it; it is not uploaded on its own")

        // Asked to send it again anyway, the worker does not upload a dangling file.
        try sample.ledger.append([
            InspectionEvent.syncRetryRequested(SyncRetryRequested(item: row.item)).pending(
                stream: id, actor: Actor(id: "1", name: "Dana Inspector", verified: true), device: sample.device,
                recordedAt: clock.now())
        ])
        let uploadsBefore = server.exchanges.filter { $0.path.hasSuffix("/photos/upload") }.count
        let again = try SyncRun(
            ledger: sample.ledger, session: session, device: sample.device, clock: clock, random: { 0.5 }
        ).run()
        #expect(server.exchanges.filter { $0.path.hasSuffix("/photos/upload") }.count == uploadsBefore)
        let refused = try #require(again.gaveUp.first)
        #expect(refused.error.hasPrefix("The inspection already went to the server without this photo"))
        #expect(refused.error.contains("record it in a new inspection ('jqc start', then 'jqc photo')"))
    }

    // MARK: - The session

    @Test func anExpiredTokenIsRefreshedOnceAndTheRotatedPairSaved() throws {
        try sample.completedInspection(photos: 1, issues: 0)
        server.expireTokens()

        let report = try run()

        #expect(report.stop == nil)
        #expect(try outbox().isEmpty)
        #expect(server.paths.filter { $0 == "POST /auth/refresh" }.count == 1)
        let saved = try sample.session()
        #expect(saved.tokens.accessToken == server.accessToken)
        #expect(saved.tokens.refreshToken == server.refreshToken)
        let info = try FileManager.default.attributesOfItem(atPath: sample.credentialsPath)
        #expect(info[.posixPermissions] as? Int == 0o600)
    }

    @Test func aRefusedRefreshStopsTheRunWithoutCountingAnAttempt() throws {
        try sample.completedInspection(photos: 1, issues: 1)
        let eventsBefore = try sample.eventTypes().count
        server.expireTokens()
        server.refusesRefresh(true)

        let report = try run()

        guard case .loginRequired(let message) = report.stop else {
            Issue.record("expected the run to stop for a login, got \(String(describing: report.stop))")
            return
        }
        #expect(message.contains("jqc login"))
        #expect(report.needsAttention)
        #expect(try sample.eventTypes().count == eventsBefore, "nothing is recorded")
        #expect(try outbox().allSatisfy { $0.state == .pending && $0.attempts == 0 })
        #expect(server.paths == ["POST /photos/upload", "POST /auth/refresh"], "the run stopped at once")
    }

    @Test func anUnreachableServerStopsTheRunWithoutCountingAnAttempt() throws {
        try sample.completedInspection(photos: 2, issues: 1)
        let eventsBefore = try sample.eventTypes().count
        server.script("/photos/upload", [.transport(.couldNotConnect(detail: "connection refused"))])

        let report = try run()

        guard case .serverUnreachable = report.stop else {
            Issue.record("expected the run to stop as unreachable, got \(String(describing: report.stop))")
            return
        }
        #expect(server.exchanges.count == 1)
        #expect(!report.needsAttention, "the network being down is not a failure for good")
        #expect(try sample.eventTypes().count == eventsBefore, "being offline uses up no attempt")
    }

    @Test func aTimeoutCountsAnAttemptAndStopsTheRun() throws {
        try sample.completedInspection(photos: 2, issues: 1)
        server.script("/photos/upload", [.transport(.timedOut(detail: "no answer in 60 s"))])

        let report = try run()

        guard case .serverUnreachable = report.stop else {
            Issue.record("expected the run to stop, got \(String(describing: report.stop))")
            return
        }
        #expect(server.exchanges.count == 1)
        #expect(report.retrying.count == 1)
        #expect(try sample.eventTypes().filter { $0 == "sync.attempt_failed" }.count == 1)
    }
}

/// Refuses (422) the upload carrying one idempotency key, and passes everything else on.
private struct KeyedRefusal: HTTPTransport {
    let key: String
    let inner: ScriptedTransport

    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        if request.headers["Idempotency-Key"] == key {
            return HTTPResponse(status: 422, body: ScriptedTransport.failure("file: is not an image"))
        }
        return try inner.send(request)
    }
}
