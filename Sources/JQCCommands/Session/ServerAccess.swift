import ArgumentParsing
import CurlTransport
import Dispatch
import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import SyncWorker

/// Why a command that needs the server could not use it. Each message says
/// what failed, why, and what to do.
enum ServerAccessError: Error, CustomStringConvertible {
    /// The ledger's config names no server.
    case noServer
    /// Nobody is logged in on this ledger.
    case notLoggedIn
    /// The saved session belongs to another server than the configured one.
    case otherServer(session: String, configured: String)
    /// The server could not be reached; `what` names the command's work.
    /// One line (`ConnectionErrorLine`) unless `verbose`.
    case offline(what: String, TransportError, hint: String, verbose: Bool)
    /// Any other refusal or failure of the API.
    case failed(what: String, APIError)

    var description: String {
        switch self {
        case .noServer:
            "No server is configured for this ledger, so there is nothing to talk to. Set one with "
                + "'jqc config set server URL' (e.g. https://jqc.example/api/v1), then 'jqc login'."
        case .notLoggedIn:
            "Nobody is logged in on this ledger, and the server needs a session. Log in with 'jqc login'."
        case .otherServer(let session, let configured):
            "The saved session is for \(session), but this ledger's server is \(configured). Log in to the "
                + "configured server with 'jqc login'."
        case .offline(let what, let error, let hint, let verbose):
            verbose
                ? "Could not \(what): the server could not be reached. \(error.description) \(hint)"
                : "Could not \(what): \(ConnectionErrorLine.cause(error)). \(hint) \(ConnectionErrorLine.advice)"
        case .failed(let what, let error):
            "Could not \(what). \(error.description)"
        }
    }
}

extension Invocation {
    /// The configured server's API base URL.
    func serverURL() throws -> String {
        guard let url = try config().serverURL, !url.isEmpty else { throw ServerAccessError.noServer }
        return url
    }

    /// libcurl with the configured CA bundle; TLS verification is never turned off.
    /// `connections` kept-alive connections serve that many requests at once.
    /// From here on SIGINT and SIGTERM stop the command's transfers (within
    /// about a second) instead of killing the process (`StopSignals`).
    func httpClient(connections: Int = 1) throws -> CurlHTTPClient {
        let configuration = CurlHTTPClient.Configuration(certificateAuthorityFile: try config().caBundle)
        return try CurlHTTPClient(
            configuration: configuration, connections: connections, stop: StopSignals.watching().request)
    }

    /// The answers' size limits: `JQC_MAX_RESPONSE_BYTES` raises (or lowers)
    /// the limit of JSON answers from its default of 8 MiB.
    func responseLimits() throws -> APIClient.ResponseLimits {
        var limits = APIClient.ResponseLimits.standard
        if let text = environment["JQC_MAX_RESPONSE_BYTES"] {
            guard let bytes = Int(text), bytes >= 1024 else {
                throw JQCError.responseLimitInvalid(value: text)
            }
            limits.json = bytes
        }
        return limits
    }

    /// The saved session on the configured server, ready for authorized calls.
    func serverSession(transport: (any HTTPTransport)? = nil) throws -> ServerSession {
        let url = try serverURL()
        guard let saved = try session() else { throw ServerAccessError.notLoggedIn }
        guard LedgerSettings.sameServer(saved.serverURL, url) else {
            throw ServerAccessError.otherServer(session: saved.serverURL, configured: url)
        }
        let api = APIClient(baseURL: url, transport: try transport ?? httpClient(), limits: try responseLimits())
        return ServerSession(saved, api: api, store: SessionStore(home))
    }

    /// Runs an authorized call, turning its failure into a message about `what`.
    func online<T>(_ what: String, offlineHint: String, _ call: () throws(APIError) -> T) throws -> T {
        do {
            return try call()
        } catch .transport(let error) where error.isTransient {
            throw ServerAccessError.offline(what: what, error, hint: offlineHint, verbose: verbose)
        } catch {
            throw ServerAccessError.failed(what: what, error)
        }
    }
}
