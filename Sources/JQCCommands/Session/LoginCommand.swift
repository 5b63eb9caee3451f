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

/// `jqc login [--username U] [--password-stdin] [--server URL]`.
struct LoginCommand: RunnableCommand {
    static let path = ["login"]
    static let username = OptionSpec(
        "username", short: "u", valueName: "USER", help: "Your user name (asked for if left off).")
    static let server = OptionSpec(
        "server", valueName: "URL",
        help: "The server's API base URL; saved in the ledger's config when the login succeeds.")
    static let passwordStdin = FlagSpec("password-stdin", help: "Read the password as one line from standard input.")
    static let spec = CommandSpec(
        "login", abstract: "Log in to the server; events are then recorded under your verified identity.",
        discussion: """
            The password is asked for without echo on a terminal, or read as one line from standard input \
            with --password-stdin; it is never accepted as an argument. The tokens are kept only in \
            credentials.json in the ledger directory (mode 0600), never printed and never in the log. \
            Offline, the last logged-in identity keeps recording.
            """,
        group: "Session",
        options: [username, server], flags: [passwordStdin])

    var username: String?
    var server: String?
    var passwordFromStandardInput: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        username = try parsed.value(of: Self.username)
        server = try parsed.value(of: Self.server)
        passwordFromStandardInput = try parsed.isSet(Self.passwordStdin)
        if let server, !(server.hasPrefix("https://") || server.hasPrefix("http://")) {
            throw parsed.invalid(Self.server, value: server, reason: "expected an http:// or https:// URL")
        }
        if passwordFromStandardInput, username == nil {
            throw parsed.missing(Self.username)
        }
    }

    func run(_ invocation: Invocation) throws {
        var config = try invocation.config()
        guard let url = server ?? config.serverURL, !url.isEmpty else { throw ServerAccessError.noServer }
        let user = try username ?? Terminal.prompt("Username: ")
        let password = try passwordFromStandardInput ? Terminal.readLine(what: "password") : Terminal.secret()
        guard !user.isEmpty, !password.isEmpty else { throw JQCError.emptyCredentials }
        Redaction.hide(password)
        let api = APIClient(baseURL: url, transport: try invocation.httpClient())
        let (tokens, serverUser): (SessionTokens, ServerUser)
        do {
            (tokens, serverUser) = try api.login(username: user, password: password)
        } catch .unauthorized(let message) {
            throw JQCError.loginRefused(serverSaid: Redaction.text(message))
        } catch .transport(let error) where error.isTransient {
            throw ServerAccessError.offline(
                what: "log in", error,
                hint: "Recording works offline under the last identity; log in when the server is reachable.",
                verbose: invocation.verbose)
        } catch {
            throw ServerAccessError.failed(what: "log in", error)
        }
        try SessionStore(invocation.home).save(
            StoredSession(
                user: serverUser, tokens: tokens, serverURL: url, savedAt: invocation.clock.now().iso8601))
        if server != nil, config.serverURL != url {
            config.serverURL = url
            try config.save(invocation.home)
        }
        if invocation.json {
            invocation.printJSON(serverUser.jsonValue(server: url))
        } else {
            invocation.stdout.line(
                "Logged in as \(serverUser.displayName.terminalSafe) (\(serverUser.username.terminalSafe), "
                    + "\(serverUser.role.terminalSafe)) at \(url)")
        }
    }
}
