import Foundation
import HTTPCore
import InspectionDomain
import LedgerCore

/// A scripted server for in-process tests of the sync worker, as swift-nio
/// ships `EmbeddedChannel` for its handlers: an `HTTPTransport` that answers
/// like the server contract (`docs/architecture/sync.md`) from memory, with
/// no socket and no process, so a test drives a `SyncRun` or an `APIClient`
/// and then reads what was asked of it.
///
/// - By default it answers every endpoint of the contract in small: login
///   and token refresh (with the refresh grace period), reference data from
///   `SampleReference`, photo uploads, inspections and issues created with
///   increasing ids, `GET /inspections` paged, and idempotent replays
///   (`Idempotent-Replayed: true`) of a write whose `Idempotency-Key` it saw.
/// - `behavesLikeTheReferenceBackend()` switches to the reference backend's
///   shapes: tokens-only login, facilities without areas, templates without
///   versions, no idempotency and no `client_id`.
/// - `script(_:_:)` answers the next requests to a path with a failure, a
///   transport error, or a commit whose answer is lost, in order;
///   `delays(_:)` puts every request on a slow network; `expireTokens()` and
///   `refusesRefresh(_:)` play a server that revokes a session.
/// - `exchanges` and `paths` are what was asked, in order, with each
///   exchange's status and its place among the others (`began`, `ended`);
///   `concurrencySeen` is the most requests in flight at once.
///
/// Its state is guarded by one lock (hence `@unchecked Sendable`: every
/// field is touched only under `lock`), held while a request is answered
/// but not during its latency, so several requests can be in flight.
public final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    /// What to answer instead of the default.
    public enum Answer {
        /// A failure response in the envelope, with an optional `Retry-After`.
        case status(Int, String, retryAfter: Int? = nil)
        /// No response at all.
        case transport(TransportError)
        /// Do the default work (the server commits it), then lose the response.
        case commitThenLose
    }

    /// One request and how it ended (a status, or nil for a transport error).
    public struct Exchange {
        public var request: HTTPRequest
        public var status: Int?
        /// When it began and ended, on one counter of events: an exchange
        /// that began after another ended was sent after its answer came.
        public var began = 0
        public var ended = 0
        public var path: String { URL(string: request.url)?.path ?? request.url }
        public var idempotencyKey: String? { request.headers["Idempotency-Key"] }
        public var json: JSONValue? {
            guard case .bytes(let bytes, _) = request.body else { return nil }
            return try? JSONValue(parsing: bytes)
        }
    }

    /// `@unchecked Sendable` rests on this: every field below is touched only under `lock`.
    private let lock = NSLock()
    private var scripts: [(path: String, answers: [Answer])] = []
    /// How long each request takes on the "network", outside the lock.
    private var latency: Duration = .zero
    private var clock = 0
    private var inFlight = 0
    public private(set) var mostInFlight = 0
    private var log: [Exchange] = []
    private var nextID = 1
    private var tokenGeneration = 1
    /// Responses remembered by idempotency key, as the server replays them.
    private var remembered: [String: HTTPResponse] = [:]
    public private(set) var refuseRefresh = false
    /// The pair each spent refresh token was answered with: within the grace
    /// period the server answers a spent token with the same pair again.
    private var rotated: [String: (access: String, refresh: String)] = [:]
    /// Answer like the reference backend: tokens-only login, facilities
    /// without areas (they come from `/facilities/{id}/areas`), templates
    /// without versions, no idempotency and no `client_id`.
    private var referenceBackend = false
    /// The inspections created, as `GET /inspections` lists them.
    private var inspections: [JSONValue] = []
    /// Bodies of the extra templates `/templates` lists.
    private var extraTemplates: [JSONValue] = []
    private let reference: JSONValue

    /// A server holding `SampleReference`'s data, answering as the contract says.
    public init() throws {
        reference = try JSONValue(
            parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
    }

    /// The access token the fake accepts now.
    public var accessToken: String { locked { "access-\(tokenGeneration)" } }
    public var refreshToken: String { locked { "refresh-\(tokenGeneration)" } }

    /// Answers the next requests whose path ends with `path` with `answers`, in order.
    public func script(_ path: String, _ answers: [Answer]) {
        locked { scripts.append((path, answers)) }
    }

    /// Every request takes `latency` before it is answered (several may wait at once).
    public func delays(_ latency: Duration) {
        locked { self.latency = latency }
    }

    /// The most requests that were in flight at one moment.
    public var concurrencySeen: Int { locked { mostInFlight } }

    /// Every access token issued so far is refused from now on (until a refresh).
    public func expireTokens() {
        locked { tokenGeneration += 1 }
    }

    /// Refuses every refresh from now on (`refuse`), or stops refusing.
    public func refusesRefresh(_ refuse: Bool) {
        locked { refuseRefresh = refuse }
    }

    /// Answers from now on with the reference backend's shapes.
    public func behavesLikeTheReferenceBackend() {
        locked { referenceBackend = true }
    }

    /// Lists `template` too (a template this jqc may not be able to use).
    public func listsTemplate(_ template: JSONValue) {
        locked { extraTemplates.append(template) }
    }

    /// Every request so far, in order.
    public var exchanges: [Exchange] { locked { log } }

    /// The paths of the writes and reads, in order, without the base.
    public var paths: [String] {
        exchanges.map { $0.request.method.rawValue + " " + $0.path.replacingOccurrences(of: "/api/v1", with: "") }
    }

    // MARK: - HTTPTransport

    /// Answers `request` after the latency set, as the script or the contract says.
    public func send(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let (began, wait) = locked { () -> (Int, Duration) in
            clock += 1
            inFlight += 1
            mostInFlight = max(mostInFlight, inFlight)
            return (clock, latency)
        }
        if wait > .zero {
            Thread.sleep(
                forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
        }
        lock.lock()
        defer {
            inFlight -= 1
            clock += 1
            if !log.isEmpty {
                log[log.count - 1].began = began
                log[log.count - 1].ended = clock
            }
            lock.unlock()
        }
        return try answer(request)
    }

    /// Answers under `lock`, logging the exchange.
    private func answer(_ request: HTTPRequest) throws(TransportError) -> HTTPResponse {
        let path = (URL(string: request.url)?.path ?? "").replacingOccurrences(of: "/api/v1", with: "")
        if let index = scripts.firstIndex(where: { path.hasSuffix($0.path) && !$0.answers.isEmpty }) {
            let answer = scripts[index].answers.removeFirst()
            switch answer {
            case .status(let status, let message, let retryAfter):
                var headers = HTTPHeaders()
                if let retryAfter { headers.append("Retry-After", "\(retryAfter)") }
                log.append(Exchange(request: request, status: status))
                return HTTPResponse(status: status, headers: headers, body: Self.failure(message))
            case .transport(let error):
                log.append(Exchange(request: request, status: nil))
                throw error
            case .commitThenLose:
                _ = answerNormally(request, path)
                log.append(Exchange(request: request, status: nil))
                throw .connectionLost(detail: "empty reply from server (scripted)")
            }
        }
        let response = answerNormally(request, path)
        log.append(Exchange(request: request, status: response.status))
        return response
    }

    // MARK: - The contract, in small

    private func answerNormally(_ request: HTTPRequest, _ path: String) -> HTTPResponse {
        if let answer = answerSigningIn(request, path) { return answer }
        guard request.headers["Authorization"] == "Bearer access-\(tokenGeneration)" else {
            return HTTPResponse(status: 401, body: Self.failure("access token expired"))
        }
        if !referenceBackend, let key = request.headers["Idempotency-Key"], var replay = remembered[key] {
            // As the contract says: the first response, marked as its replay.
            replay.headers.append("Idempotent-Replayed", "true")
            return replay
        }
        let response = answerAuthorized(request, path)
        if let key = request.headers["Idempotency-Key"], response.isSuccess { remembered[key] = response }
        return response
    }

    /// Login and refresh, which need no access token; nil for any other request.
    private func answerSigningIn(_ request: HTTPRequest, _ path: String) -> HTTPResponse? {
        switch (request.method, path) {
        case (.post, "/auth/refresh"):
            guard !refuseRefresh else { return HTTPResponse(status: 401, body: Self.failure("refresh refused")) }
            guard case .bytes(let bytes, _) = request.body, let body = try? JSONValue(parsing: bytes),
                let presented = body["refresh_token"]?.stringValue
            else { return HTTPResponse(status: 400, body: Self.failure("refresh_token: is required")) }
            if let pair = rotated[presented] {
                // Spent, but within the grace period: the same pair again.
                return Self.ok(.object(["access_token": .string(pair.access), "refresh_token": .string(pair.refresh)]))
            }
            guard presented == "refresh-\(tokenGeneration - 1)" || presented == "refresh-\(tokenGeneration)" else {
                return HTTPResponse(status: 401, body: Self.failure("refresh token already used"))
            }
            tokenGeneration += 1
            let pair = (access: "access-\(tokenGeneration)", refresh: "refresh-\(tokenGeneration)")
            rotated[presented] = pair
            return Self.ok(.object(["access_token": .string(pair.access), "refresh_token": .string(pair.refresh)]))
        case (.post, "/auth/login"):
            let tokens: [(String, JSONValue)] = [
                ("access_token", .string("access-\(tokenGeneration)")),
                ("refresh_token", .string("refresh-\(tokenGeneration)")),
            ]
            if referenceBackend { return Self.ok(.object(tokens.map { .init($0.0, $0.1) })) }
            let user = JSONValue.object([
                "id": .integer(1), "username": .string("inspector"), "role": .string("inspector"),
                "display_name": .string("Dana Inspector"),
            ])
            return Self.ok(.object(tokens.map { .init($0.0, $0.1) } + [.init("user", user)]))
        default:
            return nil
        }
    }

    /// The requests that need the current access token.
    private func answerAuthorized(_ request: HTTPRequest, _ path: String) -> HTTPResponse {
        let response: HTTPResponse
        switch (request.method, path) {
        case (.get, "/facilities"):
            let facilities = reference["facilities"]?.arrayValue ?? []
            response = Self.ok(.array(referenceBackend ? facilities.map { Self.without("areas", $0) } : facilities))
        case (.get, let areas) where areas.hasPrefix("/facilities/") && areas.hasSuffix("/areas"):
            let id = areas.dropFirst("/facilities/".count).dropLast("/areas".count)
            let facility = reference["facilities"]?.arrayValue?.first {
                $0["id"]?.integerValue.map(String.init) == String(id)
            }
            response = Self.ok(facility?["areas"] ?? .array([]))
        case (.get, "/templates"):
            let templates = (reference["templates"]?.arrayValue ?? []) + extraTemplates
            response = Self.ok(.array(referenceBackend ? templates.map { Self.without("version", $0) } : templates))
        case (.post, "/auth/logout"):
            response = Self.ok(.null)
        case (.get, "/auth/me"):
            response = Self.ok(
                .object([
                    "id": .integer(1), "username": .string("inspector"), "role": .string("inspector"),
                    "display_name": .string("Dana Inspector"),
                ]))
        case (.post, "/photos/upload"):
            guard case .multipart(let parts) = request.body, let file = parts.first(where: { $0.name == "file" })
            else { return HTTPResponse(status: 400, body: Self.failure("file: is required")) }
            let hash = SHA256Hasher().digest(file.data).hex
            response = Self.ok(.object(["path": .string("/uploads/\(hash).png")]), status: 201)
        case (.post, "/inspections"):
            guard case .bytes(let bytes, _) = request.body, let body = try? JSONValue(parsing: bytes) else {
                return HTTPResponse(status: 400, body: Self.failure("body: is not JSON"))
            }
            var record: [JSONValue.Member] = [.init("id", .integer(Int64(nextID)))]
            for key in ["client_id", "template_id", "facility_id", "started_at", "completed_at"] {
                if key == "client_id", referenceBackend { continue }
                record.append(.init(key, body[key] ?? .null))
            }
            inspections.insert(.object(record), at: 0)
            response = Self.ok(.object(["id": .integer(Int64(nextID))]), status: 201)
            nextID += 1
        case (.post, "/issues"):
            response = Self.ok(.object(["id": .integer(Int64(nextID))]), status: 201)
            nextID += 1
        case (.get, "/inspections"):
            let query = URLComponents(string: request.url)?.queryItems ?? []
            let limit = query.first { $0.name == "limit" }?.value.flatMap(Int.init) ?? 30
            let offset = query.first { $0.name == "offset" }?.value.flatMap(Int.init) ?? 0
            let page = Array(inspections.dropFirst(offset).prefix(limit))
            response = Self.ok(.object(["inspections": .array(page), "total": .integer(Int64(inspections.count))]))
        default:
            response = HTTPResponse(status: 404, body: Self.failure("not found"))
        }
        return response
    }

    /// `value` without its member `key` (the reference backend's shapes).
    public static func without(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(let members) = value else { return value }
        return .object(members.filter { $0.key != key })
    }

    /// A success in the contract's envelope.
    public static func ok(_ data: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "application/json"],
            body: Array(JSONValue.object(["ok": .bool(true), "data": data, "error": .null]).serialized().utf8))
    }

    /// A failure's body in the contract's envelope.
    public static func failure(_ message: String) -> [UInt8] {
        Array(JSONValue.object(["ok": .bool(false), "data": .null, "error": .string(message)]).serialized().utf8)
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
