import FoundationEssentials
import HTTPCore
import InspectionDomain
import LedgerCore

/// What the server answered, classified the way the sync rules need it.
///
/// Every message is passed through `Redaction.text`: a server's message or a
/// transport's detail must never carry a credential into output or the log.
public enum APIError: Error, CustomStringConvertible, Equatable {
    /// No complete response: network, timeout, connection lost, or a
    /// transport refusal (TLS, redirect) whose `isTransient` is false.
    case transport(TransportError)
    /// 401: the access token is not (or no longer) accepted.
    case unauthorized(String)
    /// 5xx, 408 or 429: the server could not do it now. Retried with backoff;
    /// `retryAfter` is the server's `Retry-After` in seconds, when it sent one.
    case unavailable(status: Int, message: String, retryAfter: Int?)
    /// Another 4xx, or `ok: false` with an `error` at a success status: the
    /// server refused the request; sending it again cannot help.
    case refused(status: Int, message: String)
    /// The response was not the documented envelope.
    case malformedResponse(String)
    /// The refresh token was refused too: only a new login helps.
    case loginRequired(String)
    /// The refresh got no complete answer (twice): the saved pair is kept and
    /// the same refresh token is sent again next time.
    case refreshInterrupted(String)
    /// The look-up after a lost answer found several records of the server's
    /// history matching the inspection (their ids), and nothing tells which
    /// is it: neither adopted nor sent again; looked up again next time.
    case noUniqueMatch(ids: [String])

    /// Whether the same request may succeed later by itself.
    public var isTransient: Bool {
        switch self {
        case .transport(let error): error.isTransient
        case .unavailable, .malformedResponse, .refreshInterrupted, .noUniqueMatch: true
        case .unauthorized, .refused, .loginRequired: false
        }
    }

    /// Whether the server may have done it although no success came back:
    /// the request went out and no complete answer did, or a gateway gave up
    /// waiting (502, 504). Such an outcome is looked up before a second send.
    public var mayHaveBeenApplied: Bool {
        switch self {
        case .transport(let error): error.requestMayHaveReachedServer
        case .unavailable(let status, _, _): status == 502 || status == 504
        case .malformedResponse, .noUniqueMatch: true
        case .unauthorized, .refused, .loginRequired, .refreshInterrupted: false
        }
    }

    /// The HTTP status, when there was a response.
    public var status: Int? {
        switch self {
        case .unauthorized, .loginRequired: 401
        case .unavailable(let status, _, _), .refused(let status, _): status
        case .transport, .malformedResponse, .refreshInterrupted, .noUniqueMatch: nil
        }
    }

    public var description: String {
        switch self {
        case .transport(let error):
            error.description
        case .unauthorized(let message):
            "The server did not accept the session (HTTP 401: \(Redaction.text(message))). The access token "
                + "expired or was revoked. Log in again with 'jqc login'."
        case .unavailable(let status, let message, _):
            "The server could not do it now (HTTP \(status): \(Redaction.text(message))). It is failing or busy. "
                + "It is retried with backoff."
        case .refused(let status, let message):
            // Said by login, pull, history and whoami too: the advice on
            // sending an outbox item again belongs to the sync's own report.
            "The server refused it (HTTP \(status): \(Redaction.text(message))). Sending the same request again "
                + "cannot help."
        case .malformedResponse(let what):
            "The server's answer was not understood (\(Redaction.text(what))). The server does not follow "
                + "Schemas/openapi.yaml. It is retried with backoff; report it if it persists."
        case .loginRequired(let message):
            "The server no longer accepts this session (\(Redaction.text(message))): the refresh token was "
                + "refused. Log in again with 'jqc login'; nothing recorded was lost."
        case .refreshInterrupted(let message):
            "The session's refresh got no complete answer (\(Redaction.text(message))). The saved session was "
                + "kept; the next sync asks again with it, and nothing was counted against any item."
        case .noUniqueMatch:
            serverMessage
        }
    }

    /// The server's own words (or the transport's), for events and summaries:
    /// shorter than `description`, still redacted.
    public var serverMessage: String {
        switch self {
        case .transport(let error): error.description
        case .unauthorized(let message), .loginRequired(let message): "HTTP 401: \(Redaction.text(message))"
        case .unavailable(let status, let message, _), .refused(let status, let message):
            "HTTP \(status): \(Redaction.text(message))"
        case .malformedResponse(let what): "unreadable answer: \(Redaction.text(what))"
        case .refreshInterrupted(let message): "session refresh interrupted: \(Redaction.text(message))"
        case .noUniqueMatch(let ids): Self.noUniqueMatchMessage(ids)
        }
    }

    /// Why an inspection whose answer was lost was neither adopted nor sent
    /// again, and what to do about it.
    static func noUniqueMatchMessage(_ ids: [String]) -> String {
        let shown = ids.prefix(5).joined(separator: ", ") + (ids.count > 5 ? ", …" : "")
        return "\(ids.count) records on the server (ids \(shown)) match this inspection by template, facility, "
            + "area, completion time, score, follow-up and parent, and the server keeps nothing that tells which "
            + "is it, so it was not sent again (that could make one more); it is looked up again at each sync. "
            + "Remove the records that are not this inspection on the server (the next sync adopts the one "
            + "left), or acknowledge it with 'jqc sync dismiss ID --reason TEXT'"
    }
}
