import Foundation
import HTTPCore

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
/// - A refresh that fails for a transient reason (network, 5xx) fails the
///   call with that transient error.
/// - Another process may have refreshed first (the file is reloaded under a
///   lock): its tokens are adopted instead of spending a used refresh token.
public final class ServerSession: @unchecked Sendable {
    public let api: APIClient
    let store: SessionStore
    /// `@unchecked Sendable` rests on this: `current` is only touched under `lock`.
    private let lock = NSLock()
    private var current: StoredSession

    public init(_ session: StoredSession, api: APIClient, store: SessionStore) {
        current = session
        self.api = api
        self.store = store
    }

    /// Who is logged in.
    public var user: ServerUser {
        lock.lock()
        defer { lock.unlock() }
        return current.user
    }

    private var tokens: SessionTokens {
        lock.lock()
        defer { lock.unlock() }
        return current.tokens
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
                    renewed = try api.refresh(refreshToken: used.refreshToken)
                } catch .unauthorized(let message), .refused(_, let message) {
                    outcome = .failure(.loginRequired(message))
                    return
                } catch {
                    outcome = .failure(error)
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

    private func sessionCopy() -> StoredSession {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    private func adopt(_ tokens: SessionTokens) {
        lock.lock()
        current.tokens = tokens
        lock.unlock()
    }
}
