import FoundationEssentials
import HTTPCore
import Synchronization

/// The logged-in session as the API is called with it: the current tokens,
/// refreshed once when the server answers 401, and saved at once.
///
/// Rules, as implemented by `authorized(_:)`:
/// - A 401 refreshes the tokens once and sends the request again; the rotated
///   pair is written to `credentials.json` before it is used, since the old
///   refresh token is already spent.
/// - If the refresh is refused (any 4xx), or the request is refused again
///   with the new token, the call fails with `APIError.loginRequired`: the
///   caller stops and asks for `jqc login`. The saved session is kept, so the
///   last known identity still records offline.
/// - A refresh whose answer is lost (a crash, a dropped connection) is tried
///   once more at once with the same refresh token; if that fails too, the
///   call fails with `APIError.refreshInterrupted` and the saved pair is
///   left as it was. The next sync sends the same (old) refresh token again:
///   the server accepts it for a grace period after rotating and answers
///   with the same new pair (`Schemas/openapi.yaml`, `/auth/refresh`), so an
///   unattended `--watch` never needs a new login for a lost answer.
/// - The rotated pair is written durably (temporary file with mode 0600,
///   fsync, rename, directory fsync) before it is used for any request.
/// - Another process may have refreshed first (the file is reloaded under a
///   lock): its tokens are adopted instead of spending a used refresh token.
public final class ServerSession: Sendable {
    public let api: APIClient
    let store: SessionStore
    private let current: Mutex<StoredSession>

    public init(_ session: StoredSession, api: APIClient, store: SessionStore) {
        Redaction.hide(session.tokens.accessToken, session.tokens.refreshToken)
        current = Mutex(session)
        self.api = api
        self.store = store
    }

    /// The transport its requests go through, for a request outside the
    /// server's contract that carries no session (a C2SP witness's).
    public var transport: any HTTPTransport { api.transport }

    /// Who is logged in.
    public var user: ServerUser {
        current.withLock { $0.user }
    }

    /// The current refresh token (the one a logout revokes).
    public var refreshToken: String { tokens.refreshToken }

    private var tokens: SessionTokens {
        current.withLock { $0.tokens }
    }

    /// Runs `call` with the access token; on a 401, refreshes once and runs it again.
    public func authorized<T>(_ call: (String) throws(APIError) -> T) throws(APIError) -> T {
        let used = tokens
        do throws(APIError) {
            return try call(used.accessToken)
        } catch .unauthorized {
            let renewed = try refresh(after: used)
            do throws(APIError) {
                return try call(renewed.accessToken)
            } catch .unauthorized(let message) {
                throw .loginRequired("the server refused the refreshed access token too: \(message)")
            }
        }
    }

    /// Replaces the spent tokens, unless another process already did.
    private func refresh(after used: SessionTokens) throws(APIError) -> SessionTokens {
        var outcome: Result<SessionTokens, APIError> = .failure(.loginRequired("the session was not refreshed"))
        do {
            try store.whileLocked {
                if let saved = try store.load(), saved.tokens.accessToken != used.accessToken,
                    saved.serverURL == sessionCopy().serverURL
                {
                    adopt(saved.tokens)
                    outcome = .success(saved.tokens)
                    return
                }
                let renewed: SessionTokens
                do throws(APIError) {
                    renewed = try refreshSurvivingALostAnswer(used.refreshToken)
                } catch .unauthorized(let message), .refused(_, let message) {
                    outcome = .failure(.loginRequired(message))
                    return
                } catch {
                    // No complete answer: the server may have rotated the pair
                    // already. The saved (old) pair is kept, and the next try
                    // sends the same refresh token again, which the server
                    // answers with the same new pair within its grace period.
                    outcome = .failure(.refreshInterrupted(error.description))
                    return
                }
                var session = sessionCopy()
                session.tokens = renewed
                try store.save(session)
                adopt(renewed)
                outcome = .success(renewed)
            }
        } catch {
            // The credentials file could not be read, locked or written: the
            // new tokens (if any) cannot be kept, so only a new login helps.
            throw .loginRequired("\(error)")
        }
        return try outcome.get()
    }

    /// One refresh; after a lost answer (the request went out, nothing
    /// complete came back), once more at once with the same refresh token.
    private func refreshSurvivingALostAnswer(_ refreshToken: String) throws(APIError) -> SessionTokens {
        do throws(APIError) {
            return try api.refresh(refreshToken: refreshToken)
        } catch .transport(let error) where error.isTransient {
            return try api.refresh(refreshToken: refreshToken)
        }
    }

    private func sessionCopy() -> StoredSession {
        current.withLock { $0 }
    }

    private func adopt(_ tokens: SessionTokens) {
        Redaction.hide(tokens.accessToken, tokens.refreshToken)
        current.withLock { $0.tokens = tokens }
    }
}
