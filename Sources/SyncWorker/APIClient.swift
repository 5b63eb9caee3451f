import Foundation
import HTTPCore

/// A user as the server describes them.
public struct ServerUser: Codable, Hashable, Sendable {
    public var id: String
    public var username: String
    public var role: String
    public var displayName: String

    enum CodingKeys: String, CodingKey {
        case id, username, role
        case displayName = "display_name"
    }

    public init(id: String, username: String, role: String, displayName: String) {
        self.id = id
        self.username = username
        self.role = role
        self.displayName = displayName
    }
}

/// The tokens of a session. Never logged, never in the event log, stored only
/// in `credentials.json` with mode 0600.
public struct SessionTokens: Codable, Hashable, Sendable, CustomStringConvertible {
    public var accessToken: String
    public var refreshToken: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
    }

    public init(accessToken: String, refreshToken: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }

    /// Never the tokens themselves, so a stray print cannot leak them.
    public var description: String { "SessionTokens(<redacted>)" }
}

/// What the server answered, classified the way the sync rules need it.
public enum APIError: Error, CustomStringConvertible, Equatable {
    /// No complete response: network, timeout, connection lost. Retried with backoff.
    case transport(TransportError)
    /// 401: the access token is not (or no longer) accepted.
    case unauthorized(String)
    /// 5xx or 429: the server could not do it now. Retried with backoff.
    case unavailable(status: Int, message: String)
    /// Another 4xx: the server refused the request; retrying the same request cannot help.
    case refused(status: Int, message: String)
    /// The response was not the documented envelope.
    case malformedResponse(String)

    public var isTransient: Bool {
        switch self {
        case .transport(let error): error.isTransient
        case .unavailable: true
        case .unauthorized, .refused, .malformedResponse: false
        }
    }

    /// The HTTP status, when there was a response.
    public var status: Int? {
        switch self {
        case .unauthorized: 401
        case .unavailable(let status, _), .refused(let status, _): status
        case .transport, .malformedResponse: nil
        }
    }

    public var description: String {
        switch self {
        case .transport(let error): error.description
        case .unauthorized(let message): "the server did not accept the session (401): \(message)"
        case .unavailable(let status, let message): "the server could not do it now (\(status)): \(message)"
        case .refused(let status, let message): "the server refused it (\(status)): \(message)"
        case .malformedResponse(let what): "the server's answer was not understood: \(what)"
        }
    }
}

/// The server's JSON API (`Schemas/openapi.yaml`), one call per method, over
/// any `HTTPTransport`. It knows the envelope and the headers, nothing of the
/// ledger.
public struct APIClient: Sendable {
    public let baseURL: String
    let transport: any HTTPTransport

    public init(baseURL: String, transport: any HTTPTransport) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.transport = transport
    }

    // MARK: - Session

    public func login(username: String, password: String) throws(APIError) -> (SessionTokens, ServerUser) {
        let data = try call(.post, "/auth/login", json: ["username": username, "password": password])
        let user = (data as? [String: Any])?["user"] ?? NSNull()
        return (try decode(SessionTokens.self, data), try decode(ServerUser.self, user))
    }

    public func refresh(_ tokens: SessionTokens) throws(APIError) -> SessionTokens {
        let data = try call(.post, "/auth/refresh", json: ["refresh_token": tokens.refreshToken])
        return try decode(SessionTokens.self, data)
    }

    public func me(_ tokens: SessionTokens) throws(APIError) -> ServerUser {
        try decode(ServerUser.self, try call(.get, "/auth/me", token: tokens.accessToken))
    }

    public func logout(_ tokens: SessionTokens) throws(APIError) {
        _ = try call(.post, "/auth/logout", json: ["refresh_token": tokens.refreshToken], token: tokens.accessToken)
    }

    // MARK: - Reference data

    /// The raw JSON of `/facilities` and `/templates` (with `form_schema`).
    public func referenceData(_ tokens: SessionTokens) throws(APIError) -> (facilities: Any, templates: Any) {
        let facilities = try call(.get, "/facilities", token: tokens.accessToken)
        let list = try call(.get, "/templates", token: tokens.accessToken)
        // The list may omit form_schema; fetch each template whole.
        var templates: [Any] = []
        for case let item as [String: Any] in (list as? [Any]) ?? [] {
            if item["form_schema"] != nil {
                templates.append(item)
            } else if let id = item["id"] {
                templates.append(try call(.get, "/templates/\(id)", token: tokens.accessToken))
            }
        }
        return (facilities, templates)
    }

    // MARK: - Writes (each with an idempotency key)

    public func uploadPhoto(
        _ tokens: SessionTokens, file: [UInt8], filename: String, mediaType: String, entityType: String,
        fieldID: String?, idempotencyKey: String
    ) throws(APIError) -> String {
        var parts = [
            MultipartPart.file("file", filename: filename, contentType: mediaType, data: file),
            MultipartPart.field("entity_type", entityType),
        ]
        if let fieldID { parts.append(.field("field_id", fieldID)) }
        let data = try call(
            .post, "/photos/upload", body: .multipart(parts), token: tokens.accessToken, idempotencyKey: idempotencyKey)
        guard let path = (data as? [String: Any])?["path"] as? String else {
            throw .malformedResponse("upload answered without a path")
        }
        return path
    }

    /// POST /inspections or /issues: answers the server's id.
    public func create(
        _ resource: String, _ tokens: SessionTokens, body: [String: Any], idempotencyKey: String
    ) throws(APIError) -> String {
        let data = try call(
            .post, "/\(resource)", json: body, token: tokens.accessToken, idempotencyKey: idempotencyKey)
        guard let object = data as? [String: Any], let id = object["id"] else {
            throw .malformedResponse("\(resource) answered without an id")
        }
        return "\(id)"
    }

    /// GET /inspections?status=completed: the server's history, newest first.
    public func history(_ tokens: SessionTokens, limit: Int, offset: Int) throws(APIError) -> (
        inspections: [[String: Any]], total: Int
    ) {
        let data = try call(
            .get, "/inspections?status=completed&limit=\(limit)&offset=\(offset)", token: tokens.accessToken)
        guard let object = data as? [String: Any], let list = object["inspections"] as? [[String: Any]] else {
            throw .malformedResponse("history answered without an inspections list")
        }
        return (list, (object["total"] as? Int) ?? list.count)
    }

    // MARK: - The envelope

    private func call(
        _ method: HTTPMethod, _ path: String, json: [String: Any]? = nil, body: HTTPBody? = nil, token: String? = nil,
        idempotencyKey: String? = nil
    ) throws(APIError) -> Any {
        var headers: HTTPHeaders = ["Accept": "application/json"]
        if let token { headers.set("Authorization", "Bearer \(token)") }
        if let idempotencyKey { headers.set("Idempotency-Key", idempotencyKey) }
        var requestBody = body ?? .empty
        if let json {
            do {
                requestBody = .json(Array(try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])))
            } catch {
                throw .malformedResponse("request body is not JSON: \(error)")
            }
        }
        let response: HTTPResponse
        do {
            response = try transport.send(
                HTTPRequest(method: method, url: baseURL + path, headers: headers, body: requestBody))
        } catch {
            throw .transport(error)
        }
        let envelope = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        let message = (envelope?["error"] as? String) ?? "HTTP \(response.status)"
        switch response.status {
        case 200..<300:
            guard let envelope, envelope["ok"] as? Bool == true else {
                throw .malformedResponse("HTTP \(response.status) without an ok envelope")
            }
            return envelope["data"] ?? NSNull()
        case 401: throw .unauthorized(message)
        case 429, 500...: throw .unavailable(status: response.status, message: message)
        default: throw .refused(status: response.status, message: message)
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ value: Any) throws(APIError) -> T {
        do {
            var normalized = value
            // Ids may arrive as numbers; the client keeps them as text.
            if var object = value as? [String: Any], let id = object["id"], !(id is String) {
                object["id"] = "\(id)"
                normalized = object
            }
            let data = try JSONSerialization.data(withJSONObject: normalized)
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw .malformedResponse("\(T.self): \(error)")
        }
    }
}
