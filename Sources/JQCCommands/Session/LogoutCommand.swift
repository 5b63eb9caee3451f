import ArgumentParsing
import CurlTransport
import Dispatch
import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

/// `jqc logout`: tells the server (best effort), then forgets the session here.
struct LogoutCommand: CommandWithoutArguments {
    static let path = ["logout"]
    static let spec = CommandSpec(
        "logout", abstract: "Log out: revoke the session on the server if it is reachable, and remove it here.",
        discussion: "Afterwards, recording needs a new login or --as NAME (recorded as unverified).",
        group: "Session")

    func run(_ invocation: Invocation) throws {
        let store = SessionStore(invocation.home)
        guard let saved = try store.load() else {
            invocation.stdout.line("Nobody is logged in.")
            return
        }
        var revoked = true
        var why = ""
        do {
            let api = APIClient(baseURL: saved.serverURL, transport: try invocation.httpClient())
            // Through the session, so an expired access token is refreshed first.
            let session = ServerSession(saved, api: api, store: store)
            try session.authorized { token throws(APIError) in
                try api.logout(refreshToken: session.refreshToken, accessToken: token)
            }
        } catch {
            // Best effort: the session is removed here whatever the server says.
            revoked = false
            why = "\(error)"
        }
        try store.remove()
        if invocation.json {
            invocation.printJSON(
                .object([
                    "logged_out": .string(saved.user.username), "revoked_on_server": .bool(revoked),
                    "server_error": revoked ? .null : .string(why),
                ]))
            return
        }
        invocation.stdout.line(
            "Logged out \(saved.user.displayName.terminalSafe) (\(saved.user.username.terminalSafe)) on this device.")
        if revoked {
            invocation.stdout.line("The server revoked the session.")
        } else {
            invocation.stderr.line(
                "jqc: the server was NOT told of this logout, so the session may stay valid there until it expires "
                    + "(\(TerminalText.singleLine(why))). It was removed from this device only.")
        }
    }
}
