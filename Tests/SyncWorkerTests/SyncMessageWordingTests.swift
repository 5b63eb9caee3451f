import Foundation
import HTTPCore
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// The words of every sync message issue 9 asks for, read whole, in one
/// place: what a person sees when a photo waits, when a record went without
/// one, when an issue may be on the server twice, when the server refuses,
/// when a refresh is cut short, and that a server's words keep their meaning
/// through redaction. The worker runs in-process against `ScriptedTransport`
/// with a clock the test sets, so every time in a message is known.
///
/// Messages of the command line itself (the `/api/v1` hint, logout's two
/// answers, a template skipped by the pull) are read whole in
/// `SessionCommandTests` and `ContractShapesTests`.
@Suite struct SyncMessageWordingTests {
    let sample: SampleLedger
    let server: ScriptedTransport
    let clock = ManualClock(Timestamp(iso8601: "2026-03-01T09:00:00Z")!)

    init() throws {
        sample = try SampleLedger(serverURL: "http://fake.test/api/v1")
        server = try ScriptedTransport()
        try sample.logIn(to: server)
    }

    /// One run; the jitter's random number is 0.5, so each delay is the nominal one.
    func run() throws -> SyncReport {
        let saved = try sample.session()
        let session = ServerSession(
            saved, api: APIClient(baseURL: saved.serverURL, transport: server),
            store: SessionStore(path: sample.credentialsPath))
        return try SyncRun(
            ledger: sample.ledger, session: session, device: sample.device, clock: clock, random: { 0.5 }
        ).run()
    }

    func short(_ id: UUID) -> String { String(id.lowercased.prefix(8)) }

    @Test func anInspectionWaitingForItsPhotoSaysWhichWhyAndWhen() throws {
        let id = try sample.completedInspection(photos: 1, issues: 0)
        let photo = try #require(try sample.ledger.state(of: id)?.photos.first).photo.photoID
        server.script("/photos/upload", [.status(503, "maintenance")])

        let report = try run()

        let retry = try #require(report.retrying.first)
        #expect(retry.error == "HTTP 503: maintenance")
        let next = try #require(retry.nextAttemptAt)
        #expect(next.iso8601.hasPrefix("2026-03-01T09:00:02"), "2 s after the first failure")
        let row = try #require(try sample.ledger.outbox().first { $0.item.kind == .inspection })
        #expect(row.detail == "waiting for photo \(short(photo)): HTTP 503: maintenance, next try 2026-03-01T09:00:02Z")
        let summary = try #require(try sample.ledger.summaries(.all).first)
        #expect(
            summary.syncNotes == [
                "inspection waiting for photo \(short(photo)): HTTP 503: maintenance, next try 2026-03-01T09:00:02Z"
            ])
    }

    @Test func anItemFailingLongEnoughIsStalledWithItsLastError() throws {
        let id = try sample.completedInspection(photos: 1, issues: 0)
        let photo = try #require(try sample.ledger.state(of: id)?.photos.first).photo.photoID
        let failures = SyncFailure.stalledAfterAttempts
        server.script("/photos/upload", Array(repeating: .status(500, "server error"), count: failures))
        for _ in 1...failures {
            let report = try run()
            if let next = report.retrying.first?.nextAttemptAt {
                clock.advance(microseconds: next.microsecondsSinceEpoch - clock.now().microsecondsSinceEpoch)
            }
        }
        let row = try #require(try sample.ledger.outbox().first { $0.item.kind == .inspection })
        let detail = try #require(row.detail)
        #expect(detail.hasPrefix("waiting for photo \(short(photo)): HTTP 500: server error, next try 2026-03-01T"))
        #expect(detail.hasSuffix("Z (stalled after \(failures) attempts)"))
        let photoRow = try #require(try sample.ledger.outbox().first { $0.item.kind == .photo })
        #expect(photoRow.state == .stalled)
        #expect(photoRow.lastError == "HTTP 500: server error")
    }

    @Test func aRecordSentWithoutItsPhotoSaysSoEverywhereAndThePhotoIsNotUploadedAlone() throws {
        let id = try sample.completedInspection(photos: 1, issues: 0)
        let photo = try #require(try sample.ledger.state(of: id)?.photos.first).photo
        server.script("/photos/upload", [.status(413, "file too large")])

        _ = try run()

        let state = try #require(try sample.ledger.state(of: id))
        #expect(
            state.syncNotes == ["inspection synced without photo \(short(photo.photoID)): HTTP 413: file too large"])
        #expect(try sample.ledger.summaries(.all).first?.syncNotes == state.syncNotes)

        // Queued again after its inspection went: not uploaded, and the message says what to do instead.
        try sample.ledger.append([
            InspectionEvent.syncRetryRequested(
                SyncRetryRequested(item: SyncItem(kind: .photo, id: photo.photoID))
            ).pending(
                stream: id, actor: Actor(id: "1", name: "Dana Inspector", verified: true), device: sample.device,
                recordedAt: clock.now())
        ])
        let report = try run()
        let failure = try #require(report.gaveUp.first)
        #expect(
            failure.error
                == "The inspection already went to the server without this photo, so it was not uploaded: nothing "
                + "there would point to it. The photo stays in this ledger (photos/\(photo.sha256.hex); 'jqc audit "
                + "\(short(id))' shows it). To put it on the server, record it in a new inspection ('jqc start', "
                + "then 'jqc photo'), or give the file to the server's administrator.")
    }

    @Test func anIssueSentAgainAfterALostAnswerToTheReferenceBackendIsFlagged() throws {
        server.behavesLikeTheReferenceBackend()
        let id = try sample.completedInspection(photos: 0, issues: 1, issuePhoto: false)
        let issue = try #require(try sample.ledger.state(of: id)?.issues.first).id
        server.script("/issues", [.commitThenLose])
        let lost = try run()
        let next = try #require(lost.retrying.first?.nextAttemptAt)
        clock.advance(microseconds: next.microsecondsSinceEpoch - clock.now().microsecondsSinceEpoch)

        let report = try run()

        #expect(report.possiblySentTwice == [SyncItem(kind: .issue, id: issue)])
        let note =
            "issue \(short(issue)) was sent again after its answer was lost; this server offers no way to check, "
            + "so it may hold it twice"
        let state = try #require(try sample.ledger.state(of: id))
        #expect(state.syncNotes == [note])
        #expect(InspectionState.possiblySentTwiceNote(issue) == note)
        #expect(try sample.ledger.summaries(.all).first?.syncNotes == [note])
        #expect(state.sync.issuesPossiblySentTwice == [issue])
    }

    @Test func anIssueSentAgainToAServerThatReplaysIsNotFlagged() throws {
        let id = try sample.completedInspection(photos: 0, issues: 1, issuePhoto: false)
        server.script("/issues", [.commitThenLose])
        let lost = try run()
        let next = try #require(lost.retrying.first?.nextAttemptAt)
        clock.advance(microseconds: next.microsecondsSinceEpoch - clock.now().microsecondsSinceEpoch)

        let report = try run()

        #expect(
            report.sent == [SyncItem(kind: .issue, id: try #require(try sample.ledger.state(of: id)?.issues.first).id)])
        #expect(report.possiblySentTwice.isEmpty, "Idempotent-Replayed: true says it is the first record")
        #expect(try sample.ledger.state(of: id)?.syncNotes == [])
    }

    @Test func theServersOwnWordsAreShownAndKeepTheirMeaning() throws {
        try sample.completedInspection(photos: 0, issues: 0)
        server.script("/inspections", [.status(422, "refresh token already used by facility_id 999")])

        let report = try run()

        let failure = try #require(report.gaveUp.first)
        #expect(failure.error == "HTTP 422: refresh token already used by facility_id 999")
        #expect(
            APIError.refused(status: 422, message: "facility_id: facility 999 does not exist").description
                == "The server refused it (HTTP 422: facility_id: facility 999 does not exist). Sending the same "
                + "request again cannot help.")
        // Redaction is by value (the secrets this process holds), never the words after "token".
        #expect(Redaction.text("refresh token already used") == "refresh token already used")
        Redaction.hide("s3cr3t-refresh-value")
        #expect(!Redaction.text("token s3cr3t-refresh-value refused").contains("s3cr3t-refresh-value"))
    }

    @Test func aRefreshCutShortAndARefusedOneSayWhatHappensNext() {
        #expect(
            APIError.refreshInterrupted("connection lost").description
                == "The session's refresh got no complete answer (connection lost). The saved session was kept; the "
                + "next sync asks again with it, and nothing was counted against any item.")
        #expect(
            APIError.loginRequired("refresh token revoked").description
                == "The server no longer accepts this session (refresh token revoked): the refresh token was "
                + "refused. Log in again with 'jqc login'; nothing recorded was lost.")
    }
}
