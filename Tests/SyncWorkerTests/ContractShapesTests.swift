import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// The real server's shapes and the session's crash rules, in-process
/// against `ScriptedTransport` (its reference-backend profile where said).
@Suite struct ContractShapesTests {
    let sample: SampleLedger
    let server: ScriptedTransport
    let clock = ManualClock(Timestamp(iso8601: "2026-03-01T09:00:00Z")!)
    static let base = "http://fake.test/api/v1"

    init() throws {
        sample = try SampleLedger(serverURL: Self.base)
        server = try ScriptedTransport()
        try SessionStore(path: sample.credentialsPath).save(
            StoredSession(
                user: ServerUser(id: "1", username: "inspector", role: "inspector", displayName: "Dana Inspector"),
                tokens: SessionTokens(accessToken: server.accessToken, refreshToken: server.refreshToken),
                serverURL: Self.base, savedAt: "2026-03-01T08:00:00Z"))
    }

    func session(_ transport: (any HTTPTransport)? = nil) throws -> ServerSession {
        let saved = try sample.session()
        return ServerSession(
            saved, api: APIClient(baseURL: saved.serverURL, transport: transport ?? server),
            store: SessionStore(path: sample.credentialsPath))
    }

    func run(_ transport: (any HTTPTransport)? = nil) throws -> SyncReport {
        try SyncRun(
            ledger: sample.ledger, session: try session(transport), device: sample.device, clock: clock,
            random: { 0.5 }
        ).run()
    }

    // MARK: - A refresh whose answer is lost

    @Test func aRefreshWhoseAnswerIsLostIsRetriedWithTheSavedTokenNextRun() throws {
        try sample.completedInspection(photos: 1, issues: 0)
        let eventsBefore = try sample.eventTypes().count
        let spent = server.refreshToken
        server.expireTokens()
        // The server rotates the pair, and both answers (the first and the at-once retry) are lost.
        server.script("/auth/refresh", [.commitThenLose, .commitThenLose])

        let first = try run()

        guard case .serverUnreachable(let why) = first.stop else {
            Issue.record("expected the run to stop, got \(String(describing: first.stop))")
            return
        }
        #expect(why.hasPrefix("The session's refresh got no complete answer ("))
        #expect(why.contains("nothing was counted against any item"))
        #expect(try sample.eventTypes().count == eventsBefore, "no attempt was counted")
        #expect(try sample.session().tokens.refreshToken == spent, "the saved pair is kept as it was")

        // The next run sends the same (spent) refresh token: within the grace
        // period the server answers with the same new pair. No login needed.
        let second = try run()
        #expect(second.stop == nil)
        #expect(try sample.ledger.outbox().isEmpty)
        let saved = try sample.session()
        #expect(saved.tokens.accessToken == server.accessToken)
        #expect(saved.tokens.refreshToken == server.refreshToken)
        let info = try FileManager.default.attributesOfItem(atPath: sample.credentialsPath)
        #expect(info[.posixPermissions] as? Int == 0o600)
        let refreshes = server.exchanges.filter { $0.path.hasSuffix("/auth/refresh") }.compactMap(\.json)
        #expect(refreshes.count == 3)
        #expect(refreshes.allSatisfy { $0["refresh_token"] == .string(spent) })
    }

    // MARK: - The reference backend's shapes

    @Test func aPullFetchesAreasDerivesVersionsAndSkipsATemplateItCannotUse() throws {
        server.behavesLikeTheReferenceBackend()
        server.listsTemplate(
            .object([
                "id": .integer(99), "name": .string("Drone Survey"),
                "form_schema": .object([
                    "fields": .array([
                        .object([
                            "id": .integer(1), "type": .string("lidar_scan"), "label": .string("Scan"),
                            "col": .integer(1), "row": .integer(1), "colSpan": .integer(12), "rowSpan": .integer(1),
                        ])
                    ])
                ]),
            ]))

        let pulled = try ReferencePull.fetch(try session())

        let paths = server.paths
        #expect(paths.contains("GET /facilities/101/areas"))
        let riverside = try #require(pulled.snapshot.facilities.first { $0.id == "101" })
        #expect(riverside.areas.map(\.name) == ["Lobby restrooms", "Admin offices"])
        #expect(pulled.snapshot.templates.count == 2, "the two usable templates were kept")
        #expect(pulled.snapshot.templates.allSatisfy { $0.version > 0 }, "versions derived from the content")
        let again = try ReferencePull.fetch(try session())
        #expect(again.snapshot.templates.map(\.version) == pulled.snapshot.templates.map(\.version))
        #expect(pulled.warnings.count == 1)
        let warning = try #require(pulled.warnings.first)
        #expect(warning.hasPrefix("Template 99 \"Drone Survey\" was skipped: "))
        #expect(warning.contains("lidar_scan"))
        #expect(
            warning.hasSuffix(
                "This jqc cannot record it; the other templates and facilities are kept unless that would leave "
                    + "none to record with."))
    }

    @Test func aLoginAnswerWithoutAUserReadsTheIdentityFromAuthMe() throws {
        server.behavesLikeTheReferenceBackend()
        let api = APIClient(baseURL: Self.base, transport: server)

        let (_, user) = try api.login(username: "inspector", password: "inspector-pass")

        #expect(user.displayName == "Dana Inspector")
        #expect(server.paths == ["POST /auth/login", "GET /auth/me"])
    }

    @Test func logoutSendsTheBearerToken() throws {
        let api = APIClient(baseURL: Self.base, transport: server)
        try api.logout(refreshToken: server.refreshToken, accessToken: server.accessToken)
        let request = try #require(server.exchanges.last?.request)
        #expect(request.headers["Authorization"] == "Bearer \(server.accessToken)")
        #expect(server.exchanges.last?.status == 200)
    }

    // MARK: - What the server says, as it says it

    @Test func okFalseAtASuccessStatusIsARefusalWithTheServersReason() throws {
        try sample.completedInspection(photos: 0, issues: 0)
        let report = try run(OkFalseOnInspections(inner: server))

        let failure = try #require(report.gaveUp.first)
        #expect(failure.error == "HTTP 200: facility 101 is archived")
        #expect(server.exchanges.filter { $0.path.hasSuffix("/inspections") }.isEmpty)
        #expect(try sample.ledger.outbox().first?.state == .failed)
    }

    @Test(arguments: [
        (
            APIError.refused(status: 409, message: "refresh token already used"),
            "The server refused it (HTTP 409: refresh token already used). Sending the same request again cannot "
                + "help."
        ),
        (
            APIError.loginRequired("refresh token already used"),
            "The server no longer accepts this session (refresh token already used): the refresh token was "
                + "refused. Log in again with 'jqc login'; nothing recorded was lost."
        ),
        (
            APIError.unavailable(status: 503, message: "maintenance", retryAfter: nil),
            "The server could not do it now (HTTP 503: maintenance). It is failing or busy. It is retried with "
                + "backoff."
        ),
        (
            APIError.refreshInterrupted("empty reply from server"),
            "The session's refresh got no complete answer (empty reply from server). The saved session was kept; "
                + "the next sync asks again with it, and nothing was counted against any item."
        ),
        (
            APIError.unauthorized("token expired"),
            "The server did not accept the session (HTTP 401: token expired). The access token expired or was "
                + "revoked. Log in again with 'jqc login'."
        ),
    ])
    func messagesReadAsWritten(_ error: APIError, _ message: String) {
        #expect(error.description == message)
    }

    @Test func aTokenThisProcessHoldsNeverReachesAMessage() throws {
        _ = try session()
        let leaked = APIError.refused(status: 400, message: "bad token \(server.accessToken)x")
        #expect(!leaked.description.contains(server.accessToken))
        #expect(leaked.description.contains("bad token <redacted>x"))
    }

    @Test func aBaseURLWithoutTheAPIPathGetsAHint() throws {
        let api = APIClient(baseURL: "http://fake.test", transport: HTMLNotFound())
        do {
            _ = try api.login(username: "inspector", password: "inspector-pass")
            Issue.record("expected a refusal")
        } catch {
            #expect(
                error.description.contains(
                    "/auth/login was not found at http://fake.test; the API usually lives under /api/v1 (try the "
                        + "server URL http://fake.test/api/v1 with 'jqc login --server')"))
        }
    }
}

/// Answers `POST /inspections` with `200 {"ok": false, "error": …}`, and passes everything else on.
private struct OkFalseOnInspections: HTTPTransport {
    let inner: ScriptedTransport

    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        if request.url.hasSuffix("/inspections") {
            return HTTPResponse(status: 200, body: ScriptedTransport.failure("facility 101 is archived"))
        }
        return try inner.send(request)
    }
}

/// A web server's HTML 404 page for every path.
private struct HTMLNotFound: HTTPTransport {
    func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        HTTPResponse(status: 404, body: Array("<html><body>Not Found</body></html>".utf8))
    }
}
