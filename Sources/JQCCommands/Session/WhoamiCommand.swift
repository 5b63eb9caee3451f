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

/// `jqc whoami [--check]`.
struct WhoamiCommand: RunnableCommand {
    static let path = ["whoami"]
    static let check = FlagSpec("check", help: "Ask the server (/auth/me) whether the session is still accepted.")
    static let spec = CommandSpec(
        "whoami", abstract: "Show who is logged in (from the saved session; --check asks the server).",
        discussion:
            "Offline, --check says so and shows the last known identity. Exit status 1 when nobody is logged in.",
        group: "Session",
        flags: [check])

    var check: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) { check = try parsed.isSet(Self.check) }

    func run(_ invocation: Invocation) throws {
        guard let saved = try invocation.session() else { throw JQCError.nobodyLoggedIn }
        var user = saved.user
        var confirmation = "from the saved session"
        var refusal = SessionRefusal.of(saved, in: invocation.home)
        if check {
            let session = try invocation.serverSession()
            do {
                user = try session.authorized { token throws(APIError) in try session.api.me(accessToken: token) }
                confirmation = "confirmed by the server"
                refusal = nil
                SessionRefusal.clear(in: invocation.home)
            } catch .transport(let error) where error.isTransient {
                confirmation = "offline: the last known identity, not checked (\(error.description))"
            } catch {
                if case .loginRequired(let why) = error { try SessionRefusal.learned(why, invocation) }
                throw ServerAccessError.failed(what: "check the session", error)
            }
        }
        if invocation.json {
            guard case .object(var members) = user.jsonValue(server: saved.serverURL) else { return }
            members.append(.init("saved_at", .string(saved.savedAt)))
            members.append(.init("checked", .bool(confirmation == "confirmed by the server")))
            members.append(
                .init(
                    "refused",
                    refusal.map { .object(["refused_at": .string($0.refusedAt), "message": .string($0.message)]) }
                        ?? .null))
            invocation.printJSON(.object(members))
            return
        }
        invocation.stdout.line(
            "\(user.displayName.terminalSafe) (\(user.username.terminalSafe), \(user.role.terminalSafe), "
                + "user \(user.id.terminalSafe))")
        invocation.stdout.line("  server \(saved.serverURL); logged in \(saved.savedAt)")
        invocation.stdout.line("  \(confirmation)")
        if let refusal {
            invocation.stdout.line(
                "  the server REFUSED this session at \(refusal.refusedAt) (\(TerminalText.singleLine(refusal.message)))"
                    + ": log in again with 'jqc login'; recording goes on meanwhile, as this identity")
        }
    }
}

extension SessionRefusal {
    /// Keeps what a sync or `whoami --check` learned: the server refused
    /// the saved session (its refresh), so `whoami` and `status` say so
    /// until a new `jqc login`.
    static func learned(_ why: String, _ invocation: Invocation) throws {
        guard let saved = try invocation.session() else { return }
        try record(
            SessionRefusal(
                sessionSavedAt: saved.savedAt, refusedAt: invocation.clock.now().iso8601,
                message: TerminalText.singleLine(why)),
            in: invocation.home)
    }
}
