import FoundationEssentials
import HTTPCore
import InspectionDomain
import LedgerCore

/// A user as the server describes them.
public struct ServerUser: Codable, Hashable, Sendable {
    /// The server's id, kept as the text of an integer ≥ 1: it is the
    /// recorded actor's id, which can then never be an offline actor's
    /// `local:NAME`.
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

    /// Reads the `User` schema; the id must be a JSON integer ≥ 1.
    init(json: JSONValue) throws(APIError) {
        guard let username = json["username"]?.stringValue else {
            throw .malformedResponse("a user without a username")
        }
        let id = try APIClient.serverID(json["id"], of: "the user")
        self.init(
            id: id, username: username, role: json["role"]?.stringValue ?? "",
            displayName: json["display_name"]?.stringValue ?? username)
    }
}

extension ServerUser {
    /// A saved session's user, whose id must be an integer's text: one
    /// saved from a server that sent something else is refused, and the
    /// message asks for a new login.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(String.self, forKey: .id)
        guard APIClient.isServerID(id) else {
            throw DecodingError.dataCorruptedError(
                forKey: .id, in: container,
                debugDescription: "the user id is not an integer ≥ 1, so it cannot name a recorded actor")
        }
        self.init(
            id: id, username: try container.decode(String.self, forKey: .username),
            role: try container.decode(String.self, forKey: .role),
            displayName: try container.decode(String.self, forKey: .displayName))
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

    /// Reads `{access_token, refresh_token}` from a login or refresh answer.
    init(json: JSONValue) throws(APIError) {
        guard let access = json["access_token"]?.stringValue, !access.isEmpty,
            let refresh = json["refresh_token"]?.stringValue, !refresh.isEmpty
        else { throw .malformedResponse("the answer holds no access and refresh tokens") }
        self.init(accessToken: access, refreshToken: refresh)
    }

    /// Never the tokens themselves, so a stray print cannot leak them.
    public var description: String { "SessionTokens(<redacted>)" }
}

extension SessionTokens: CustomDebugStringConvertible, CustomReflectable {
    public var debugDescription: String { description }
    /// `dump` and debuggers see no token either.
    public var customMirror: Mirror { Mirror(self, children: ["tokens": "<redacted>"]) }
}
