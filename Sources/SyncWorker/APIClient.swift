import FoundationEssentials
import HTTPCore
import InspectionDomain
import LedgerCore

/// A photo as `/photos/upload` takes it.
public struct PhotoUpload: Sendable, Equatable {
    public var bytes: [UInt8]
    public var filename: String
    public var mediaType: String
    /// `inspection` or `issue`.
    public var entityType: String
    /// The template field the photo belongs to (inspection photos of a field).
    public var fieldID: String?

    public init(bytes: [UInt8], filename: String, mediaType: String, entityType: String, fieldID: String?) {
        self.bytes = bytes
        self.filename = filename
        self.mediaType = mediaType
        self.entityType = entityType
        self.fieldID = fieldID
    }
}

/// The server's JSON API (`Schemas/openapi.yaml`), one call per method, over
/// any `HTTPTransport`. It knows the envelope and the headers, nothing of the
/// ledger.
///
/// Bodies are written and read as `JSONValue`, never through
/// `JSONSerialization`, so a `number` answer keeps its exact digits and an
/// integer is never confused with a boolean.
public struct APIClient: Sendable {
    public let baseURL: String
    let transport: any HTTPTransport
    public let limits: ResponseLimits

    /// The most bytes of body each kind of answer may have; a longer one is
    /// given up while it arrives (`TransportError.responseTooLarge`).
    public struct ResponseLimits: Sendable, Equatable {
        /// Lists and records read with GET: reference data, history pages.
        public var json: Int
        /// The answer to a write (login, refresh, a created record).
        public var write: Int
        /// The answer to a photo upload: a path.
        public var upload: Int

        public init(json: Int = 8 << 20, write: Int = 1 << 20, upload: Int = 64 << 10) {
            self.json = json
            self.write = write
            self.upload = upload
        }

        public static let standard = ResponseLimits()
    }

    public init(baseURL: String, transport: any HTTPTransport, limits: ResponseLimits = .standard) {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.baseURL = base
        self.transport = transport
        self.limits = limits
    }

    // MARK: - Session

    /// `POST /auth/login`; when the answer holds only the tokens (no `user`
    /// object, as the reference backend answers), the identity comes from
    /// `GET /auth/me` with the new access token.
    public func login(username: String, password: String) throws(APIError) -> (SessionTokens, ServerUser) {
        let body = JSONValue.object(["username": .string(username), "password": .string(password)])
        let data = try call(.post, "/auth/login", json: body)
        let tokens = try SessionTokens(json: data)
        Redaction.hide(tokens.accessToken, tokens.refreshToken)
        if let user = data["user"], case .object = user { return (tokens, try ServerUser(json: user)) }
        return (tokens, try me(accessToken: tokens.accessToken))
    }

    /// `POST /auth/refresh`: the refresh token is used up; the answer holds the next pair.
    public func refresh(refreshToken: String) throws(APIError) -> SessionTokens {
        let data = try call(.post, "/auth/refresh", json: .object(["refresh_token": .string(refreshToken)]))
        let tokens = try SessionTokens(json: data)
        Redaction.hide(tokens.accessToken, tokens.refreshToken)
        return tokens
    }

    /// `GET /auth/me`.
    public func me(accessToken: String) throws(APIError) -> ServerUser {
        try ServerUser(json: try call(.get, "/auth/me", token: accessToken))
    }

    /// `POST /auth/logout` with the refresh token in the body and the access
    /// token as Bearer (a server may require either; the access token may
    /// have expired, which is the caller's to refresh).
    public func logout(refreshToken: String, accessToken: String) throws(APIError) {
        _ = try call(
            .post, "/auth/logout", json: .object(["refresh_token": .string(refreshToken)]), token: accessToken)
    }

    // MARK: - Reference data

    /// `{"facilities": [...], "templates": [...]}` as `ReferenceCache.Snapshot(json:)`
    /// reads it, each template with its `form_schema`.
    public func referenceData(accessToken: String) throws(APIError) -> JSONValue {
        let facilityList = try call(.get, "/facilities", token: accessToken)
        let list = try call(.get, "/templates", token: accessToken)
        guard let listed = facilityList.arrayValue, let items = list.arrayValue else {
            throw .malformedResponse("/facilities or /templates did not answer a list")
        }
        // The reference backend lists facilities without their areas; they
        // come from one call per facility then.
        var facilities: [JSONValue] = []
        for facility in listed {
            // Only an integer id is put into a path: text could name another endpoint.
            guard case .object(var members) = facility, facility["areas"] == nil,
                let id = facility["id"]?.integerValue, id >= 1
            else {
                facilities.append(facility)
                continue
            }
            let areas = try call(.get, "/facilities/\(id)/areas", token: accessToken)
            guard case .array = areas else {
                throw .malformedResponse("/facilities/\(id)/areas did not answer a list")
            }
            members.append(.init("areas", areas))
            facilities.append(.object(members))
        }
        // The contract sends form_schema in the list; fetch whole templates
        // only from a server that leaves it out.
        var templates: [JSONValue] = []
        for item in items {
            if item["form_schema"] != nil {
                templates.append(item)
            } else if let id = item["id"]?.integerValue, id >= 1 {
                templates.append(try call(.get, "/templates/\(id)", token: accessToken))
            } else {
                // Without its form and an id to fetch it by, the reader skips it, saying so.
                templates.append(item)
            }
        }
        return .object(["facilities": .array(facilities), "templates": .array(templates)])
    }

    // MARK: - Writes (each with an idempotency key)

    /// `POST /photos/upload`: answers the server path of the stored file.
    public func uploadPhoto(_ upload: PhotoUpload, accessToken: String, idempotencyKey: String) throws(APIError)
        -> String
    {
        var parts = [
            MultipartPart.file("file", filename: upload.filename, contentType: upload.mediaType, data: upload.bytes),
            MultipartPart.field("entity_type", upload.entityType),
        ]
        if let fieldID = upload.fieldID { parts.append(.field("field_id", fieldID)) }
        let data = try call(
            .post, "/photos/upload", body: .multipart(parts), token: accessToken, idempotencyKey: idempotencyKey,
            limit: limits.upload)
        guard let path = data["path"]?.stringValue, path.hasPrefix("/uploads/") else {
            throw .malformedResponse("the upload answered without a /uploads/ path")
        }
        return path
    }

    /// The two records the worker creates.
    public enum Resource: String, Sendable {
        case inspections, issues
    }

    /// What the server answered to a `POST /inspections` or `POST /issues`.
    public struct Created: Sendable, Equatable {
        /// The record's id on the server.
        public var id: String
        /// The server said this answer is the first one again, not a new
        /// record: `Idempotent-Replayed: true`, or a `200` (a record with
        /// this `client_id` exists) instead of a `201`. A server without
        /// idempotency (the reference backend) never says so.
        public var replayed: Bool

        public init(id: String, replayed: Bool) {
            self.id = id
            self.replayed = replayed
        }
    }

    /// `POST /inspections` or `POST /issues`: answers the server's id, and whether it was a replay.
    public func create(_ resource: Resource, body: JSONValue, accessToken: String, idempotencyKey: String)
        throws(APIError) -> Created
    {
        let answer = try exchange(
            .post, "/\(resource.rawValue)", json: body, token: accessToken, idempotencyKey: idempotencyKey)
        let id = try Self.serverID(answer.data["id"], of: "/\(resource.rawValue)'s new record")
        let replayed =
            answer.response.headers["Idempotent-Replayed"]?.trimming(.spaces).lowercased()
            == "true" || answer.response.status == 200
        return Created(id: id, replayed: replayed)
    }

    /// `GET /inspections?status=completed`: the server's history, newest first.
    public func history(accessToken: String, limit: Int, offset: Int) throws(APIError) -> (
        inspections: [JSONValue], total: Int
    ) {
        let data = try call(
            .get, "/inspections?status=completed&limit=\(limit)&offset=\(offset)", token: accessToken)
        guard let list = data["inspections"]?.arrayValue else {
            throw .malformedResponse("the history answered without an inspections list")
        }
        let total = data["total"]?.integerValue.map { Int($0) } ?? list.count
        return (list, total)
    }

    /// Looks up an inspection this device may have created already, when
    /// the outcome of its `POST /inspections` is unknown: the server's history
    /// (`GET /inspections?status=completed`, newest first) is read page by
    /// page until the pages reach records completed before it, and every
    /// record is matched against `body` by `InspectionMatch` (the same
    /// `client_id`, or what the reference backend's summary carries).
    /// Answers the one matching record's id, or nil when none matches; more
    /// than one is `APIError.noUniqueMatch`: nothing tells which is this
    /// inspection, so it must not be adopted, nor sent again blindly.
    public func findInspection(like body: JSONValue, accessToken: String) throws(APIError) -> String? {
        switch try lookUpInspection(like: body, accessToken: accessToken) {
        case .none: return nil
        case .unique(let id): return id
        case .ambiguous(let ids): throw .noUniqueMatch(ids: ids)
        }
    }

    /// `findInspection`'s look-up, answering every outcome as a value. A
    /// matching record whose id is not an integer ≥ 1 is a malformed answer.
    public func lookUpInspection(
        like body: JSONValue, accessToken: String
    ) throws(APIError) -> InspectionMatch.Outcome {
        InspectionMatch.outcome(of: body, in: try matchingRecords(like: body, accessToken: accessToken))
    }

    /// `findInspection`, answering the one matching record itself (its
    /// `form_data` names the server paths of the photos sent with it), or
    /// nil when none matches; more than one is `APIError.noUniqueMatch`.
    public func findInspectionRecord(like body: JSONValue, accessToken: String) throws(APIError) -> JSONValue? {
        let matching = try matchingRecords(like: body, accessToken: accessToken)
        switch InspectionMatch.outcome(of: body, in: matching) {
        case .none: return nil
        case .unique(let id): return matching.first { Self.recordID($0["id"]) == id }
        case .ambiguous(let ids): throw .noUniqueMatch(ids: ids)
        }
    }

    /// The records of the history `InspectionMatch` matches with `body`.
    private func matchingRecords(like body: JSONValue, accessToken: String) throws(APIError) -> [JSONValue] {
        let completed = body["completed_at"]?.stringValue.flatMap(Self.serverTime)
        var offset = 0
        let pageSize = 100
        var matching: [JSONValue] = []
        while true {
            let page = try history(accessToken: accessToken, limit: pageSize, offset: offset)
            for record in page.inspections where InspectionMatch.matches(record, body) {
                _ = try Self.serverID(record["id"], of: "the matching record of /inspections")
                matching.append(record)
            }
            // A record with our client_id is the one: the natural key, nothing else can be it too.
            if matching.contains(where: { $0["client_id"]?.stringValue?.isEmpty == false }) { break }
            offset += page.inspections.count
            let oldest = page.inspections.last?["completed_at"]?.stringValue.flatMap(Self.serverTime)
            if page.inspections.isEmpty || offset >= page.total { break }
            // Newest first: once a page ends before ours was completed, ours is not further on.
            if let oldest, let completed, oldest.microsecondsSinceEpoch < completed.microsecondsSinceEpoch - 1_000_000 {
                break
            }
        }
        return matching
    }

    /// A server's time, with or without its zone (a naive time is UTC).
    static func serverTime(_ text: String) -> Timestamp? {
        Timestamp(iso8601: text) ?? Timestamp(iso8601: text + "Z")
    }

    // MARK: - The envelope

    func call(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, body: HTTPBody? = nil, token: String? = nil,
        idempotencyKey: String? = nil, limit: Int? = nil, base: String? = nil
    ) throws(APIError) -> JSONValue {
        try exchange(
            method, path, json: json, body: body, token: token, idempotencyKey: idempotencyKey, limit: limit,
            base: base
        ).data
    }

    /// `call`, answering the response too (its status and headers).
    private func exchange(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, body: HTTPBody? = nil, token: String? = nil,
        idempotencyKey: String? = nil, limit: Int? = nil, base: String? = nil
    ) throws(APIError) -> (data: JSONValue, response: HTTPResponse) {
        // Another server (a witness of its own) is asked by its own URL; the API's path hint is only for ours.
        let baseURL = base ?? self.baseURL
        var headers: HTTPHeaders = ["Accept": "application/json"]
        if let token { headers.set("Authorization", "Bearer \(token)") }
        if let idempotencyKey { headers.set("Idempotency-Key", idempotencyKey) }
        var requestBody = body ?? .empty
        if let json { requestBody = .json(Array(json.serialized().utf8)) }
        let response: HTTPResponse
        do {
            response = try transport.send(
                HTTPRequest(
                    method: method, url: baseURL + path, headers: headers, body: requestBody,
                    // A write is never resent unseen by libcurl on a new connection (see freshConnection).
                    freshConnection: idempotencyKey != nil,
                    maximumResponseBytes: limit ?? (method == .get ? limits.json : limits.write)))
        } catch {
            throw .transport(error)
        }
        // An answer that is not JSON is only unreadable, never a reason to stop.
        let envelope = try? JSONValue(parsing: response.body)
        let message = envelope?["error"]?.stringValue ?? "HTTP \(response.status)"
        switch response.status {
        case 200..<300:
            guard let envelope else {
                throw .malformedResponse("HTTP \(response.status) without an ok envelope")
            }
            if envelope["ok"]?.boolValue == false, let reason = envelope["error"]?.stringValue {
                // The server said why, at a success status: that is its refusal, not noise to retry.
                throw .refused(status: response.status, message: reason)
            }
            guard envelope["ok"]?.boolValue == true else {
                throw .malformedResponse("HTTP \(response.status) without an ok envelope")
            }
            return (envelope["data"] ?? .null, response)
        case 401:
            throw .unauthorized(message)
        case 404 where !baseURL.hasSuffix("/api/v1"):
            // A base URL without the API's path: every call is "not found".
            let said = envelope?["error"]?.stringValue.map { "\($0): " } ?? ""
            throw .refused(
                status: 404,
                message: "\(said)\(path) was not found at \(baseURL); the API usually lives under /api/v1 (try the "
                    + "server URL \(baseURL)/api/v1 with 'jqc login --server')")
        case 408, 429, 500...:
            let retryAfter = response.headers["Retry-After"].flatMap { Int($0.trimming(.spaces)) }
            throw .unavailable(status: response.status, message: message, retryAfter: retryAfter)
        default:
            throw .refused(status: response.status, message: message)
        }
    }

    /// An id the server answered, which jqc keeps and sends back: a JSON
    /// integer ≥ 1 (`Schemas/openapi.yaml`), as text. Anything else is a
    /// contract violation, refused, never adopted: a text id would be sent
    /// back as text, and a user's could pose as an offline actor.
    static func serverID(_ value: JSONValue?, of what: String) throws(APIError) -> String {
        guard let value else { throw .malformedResponse("\(what) came without an id") }
        guard let integer = value.integerValue, integer >= 1 else {
            throw .malformedResponse(
                "\(what) has the id \(excerpt(value)), not an integer ≥ 1 as Schemas/openapi.yaml requires; "
                    + "it was not adopted")
        }
        return String(integer)
    }

    /// Whether `text` is an id `serverID` could have answered.
    public static func isServerID(_ text: String) -> Bool {
        guard let value = Int64(text), value >= 1 else { return false }
        return String(value) == text
    }

    /// A value as JSON, at most 40 characters of it, for a message.
    static func excerpt(_ value: JSONValue) -> String {
        let text = value.serialized()
        return text.unicodeScalars.count <= 40
            ? text : String(String.UnicodeScalarView(text.unicodeScalars.prefix(40))) + "…"
    }

    /// A record id as text, for labels and comparisons only (never adopted):
    /// integers, or text as it is.
    static func recordID(_ value: JSONValue?) -> String? {
        guard let value else { return nil }
        if let integer = value.integerValue { return String(integer) }
        if let text = value.stringValue, !text.isEmpty { return text }
        return nil
    }
}
