import ArgumentParsing
import CurlTransport
import Dispatch
import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

// MARK: - Reaching the server

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
    case offline(what: String, TransportError, hint: String)
    /// Any other refusal or failure of the API.
    case failed(what: String, APIError)

    var description: String {
        switch self {
        case .noServer:
            "No server is configured for this ledger, so there is nothing to talk to. Give one with "
                + "'jqc login --server URL' (e.g. https://jqc.example/api/v1)."
        case .notLoggedIn:
            "Nobody is logged in on this ledger, and the server needs a session. Log in with 'jqc login'."
        case .otherServer(let session, let configured):
            "The saved session is for \(session), but this ledger's server is \(configured). Log in to the "
                + "configured server with 'jqc login'."
        case .offline(let what, let error, let hint):
            "Could not \(what): the server could not be reached. \(error.description) \(hint)"
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
    func httpClient() throws -> CurlHTTPClient {
        let configuration = CurlHTTPClient.Configuration(certificateAuthorityFile: try config().caBundle)
        return try CurlHTTPClient(configuration: configuration)
    }

    /// The saved session on the configured server, ready for authorized calls.
    func serverSession(transport: (any HTTPTransport)? = nil) throws -> ServerSession {
        let url = try serverURL()
        guard let saved = try session() else { throw ServerAccessError.notLoggedIn }
        guard Self.sameServer(saved.serverURL, url) else {
            throw ServerAccessError.otherServer(session: saved.serverURL, configured: url)
        }
        let api = APIClient(baseURL: url, transport: try transport ?? httpClient())
        return ServerSession(saved, api: api, store: SessionStore(path: home.credentialsPath))
    }

    static func sameServer(_ a: String, _ b: String) -> Bool {
        func trimmed(_ url: String) -> String {
            var text = url
            while text.hasSuffix("/") { text.removeLast() }
            return text
        }
        return trimmed(a) == trimmed(b)
    }

    /// Runs an authorized call, turning its failure into a message about `what`.
    func online<T>(_ what: String, offlineHint: String, _ call: () throws(APIError) -> T) throws -> T {
        do {
            return try call()
        } catch .transport(let error) where error.isTransient {
            throw ServerAccessError.offline(what: what, error, hint: offlineHint)
        } catch {
            throw ServerAccessError.failed(what: what, error)
        }
    }
}

// MARK: - login

/// `jqc login [--username U] [--password-stdin] [--server URL]`.
struct LoginCommand: RunnableCommand {
    static let path = ["login"]
    static let spec = CommandSpec(
        "login", abstract: "Log in to the server; events are then recorded under your verified identity.",
        discussion: """
            The password is asked for without echo on a terminal, or read as one line from standard input \
            with --password-stdin; it is never accepted as an argument. The tokens are kept only in \
            credentials.json in the ledger directory (mode 0600), never printed and never in the log. \
            Offline, the last logged-in identity keeps recording.
            """,
        group: "Session",
        options: [
            OptionSpec("username", short: "u", valueName: "USER", help: "Your user name (asked for if left off)."),
            OptionSpec(
                "server", valueName: "URL",
                help: "The server's API base URL; saved in the ledger's config when the login succeeds."),
        ],
        flags: [FlagSpec("password-stdin", help: "Read the password as one line from standard input.")])

    var username: String?
    var server: String?
    var passwordFromStandardInput: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        username = parsed.option("username")
        server = parsed.option("server")
        passwordFromStandardInput = parsed.flag("password-stdin")
        if let server, !(server.hasPrefix("https://") || server.hasPrefix("http://")) {
            throw .invalidValue(
                option: "--server", value: server, reason: "expected an http:// or https:// URL",
                context: parsed.context)
        }
        if passwordFromStandardInput, username == nil {
            throw .missingOption("--username", valueName: "USER", context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        var config = try invocation.config()
        guard let url = server ?? config.serverURL, !url.isEmpty else { throw ServerAccessError.noServer }
        let user = try username ?? Terminal.prompt("Username: ")
        let password = try passwordFromStandardInput ? Terminal.readLine(what: "password") : Terminal.secret()
        guard !user.isEmpty, !password.isEmpty else {
            throw JQCError.refused("The login needs a user name and a password; one was empty. Nothing was changed.")
        }
        let api = APIClient(baseURL: url, transport: try invocation.httpClient())
        let (tokens, serverUser): (SessionTokens, ServerUser)
        do {
            (tokens, serverUser) = try api.login(username: user, password: password)
        } catch .unauthorized(let message) {
            throw JQCError.refused(
                "Login failed: the server refused the user name or password (\(Redaction.text(message))). "
                    + "Check them and try again.")
        } catch .transport(let error) where error.isTransient {
            throw ServerAccessError.offline(
                what: "log in", error,
                hint: "Recording works offline under the last identity; log in when the server is reachable.")
        } catch {
            throw ServerAccessError.failed(what: "log in", error)
        }
        try SessionStore(path: invocation.home.credentialsPath).save(
            StoredSession(
                user: serverUser, tokens: tokens, serverURL: url, savedAt: invocation.clock.now().iso8601))
        if server != nil, config.serverURL != url {
            config.serverURL = url
            try config.save(invocation.home)
        }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(WhoamiCommand.json(serverUser, server: url)))
        } else {
            invocation.stdout.line(
                "Logged in as \(serverUser.displayName.terminalSafe) (\(serverUser.username.terminalSafe), \(serverUser.role.terminalSafe)) at \(url)"
            )
        }
    }
}

// MARK: - logout

/// `jqc logout`: tells the server (best effort), then forgets the session here.
struct LogoutCommand: RunnableCommand {
    static let path = ["logout"]
    static let spec = CommandSpec(
        "logout", abstract: "Log out: revoke the session on the server if it is reachable, and remove it here.",
        discussion: "Afterwards, recording needs a new login or --as NAME (recorded as unverified).",
        group: "Session")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let store = SessionStore(path: invocation.home.credentialsPath)
        guard let saved = try store.load() else {
            invocation.stdout.line("Nobody is logged in.")
            return
        }
        var revoked = true
        var why = ""
        do {
            let api = APIClient(baseURL: saved.serverURL, transport: try invocation.httpClient())
            try api.logout(refreshToken: saved.tokens.refreshToken)
        } catch {
            // Best effort: the session is removed here whatever the server says.
            revoked = false
            why = "\(error)"
        }
        try store.remove()
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(["logged_out": saved.user.username, "revoked_on_server": revoked]))
            return
        }
        invocation.stdout.line(
            "Logged out \(saved.user.displayName.terminalSafe) (\(saved.user.username.terminalSafe)).")
        if !revoked {
            invocation.stderr.line(
                "jqc: the server was not told (\(TerminalText.safe(why))); the session was removed from this device only."
            )
        }
    }
}

// MARK: - whoami

/// `jqc whoami [--check]`.
struct WhoamiCommand: RunnableCommand {
    static let path = ["whoami"]
    static let spec = CommandSpec(
        "whoami", abstract: "Show who is logged in (from the saved session; --check asks the server).",
        discussion:
            "Offline, --check says so and shows the last known identity. Exit status 1 when nobody is logged in.",
        group: "Session",
        flags: [FlagSpec("check", help: "Ask the server (/auth/me) whether the session is still accepted.")])

    var check: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) { check = parsed.flag("check") }

    func run(_ invocation: Invocation) throws {
        guard let saved = try invocation.session() else {
            throw JQCError.refused(
                "Nobody is logged in on this ledger. Log in with 'jqc login' (or record with --as NAME, unverified).")
        }
        var user = saved.user
        var confirmation = "from the saved session"
        if check {
            let session = try invocation.serverSession()
            do {
                user = try session.authorized { token throws(APIError) in try session.api.me(accessToken: token) }
                confirmation = "confirmed by the server"
            } catch .transport(let error) where error.isTransient {
                confirmation = "offline: the last known identity, not checked (\(error.description))"
            } catch {
                throw ServerAccessError.failed(what: "check the session", error)
            }
        }
        if invocation.json {
            var object = Self.json(user, server: saved.serverURL)
            object["saved_at"] = saved.savedAt
            object["checked"] = confirmation == "confirmed by the server"
            invocation.stdout.line(JSONOutput.render(object))
            return
        }
        invocation.stdout.line(
            "\(user.displayName.terminalSafe) (\(user.username.terminalSafe), \(user.role.terminalSafe), user \(user.id.terminalSafe))"
        )
        invocation.stdout.line("  server \(saved.serverURL); logged in \(saved.savedAt)")
        invocation.stdout.line("  \(confirmation)")
    }

    static func json(_ user: ServerUser, server: String) -> [String: Any] {
        [
            "id": user.id, "username": user.username, "role": user.role, "display_name": user.displayName,
            "server": server,
        ]
    }
}

// MARK: - sync

/// `jqc sync [--watch [--interval S]]`.
struct SyncCommand: RunnableCommand {
    static let path = ["sync"]
    static let spec = CommandSpec(
        "sync", abstract: "Send the outbox to the server (photos, inspections, issues), then refresh reference data.",
        discussion: """
            An inspection is sent once its photos are uploaded (or failed for good); an issue once its \
            inspection is on the server. Network failures, 5xx and 429 are retried with backoff (2 s doubling \
            to 5 min, ±20%); the 5th failure gives up, and so does a refusal (4xx) at once, with the server's \
            message. Failed items stay in 'jqc outbox' until 'jqc sync retry ID'. Every write carries an \
            idempotency key from the event that caused it, so nothing is ever created twice. Inspectors can \
            keep recording while a sync runs; only one sync runs at a time.

            Exit status 1 when something failed for good or the session needs a new login.
            """,
        group: "Syncing",
        options: [
            OptionSpec(
                "interval", valueName: "SECONDS", help: "With --watch, the longest wait between runs.",
                defaultDescription: "30")
        ],
        flags: [FlagSpec("watch", help: "Keep syncing whenever the server is reachable, until Ctrl-C or SIGTERM.")])

    var watch: Bool
    var interval: Int

    init(_ parsed: ParsedCommand) throws(UsageError) {
        watch = parsed.flag("watch")
        interval = try parsed.integer("interval", default: 30)
        if !(1...86_400).contains(interval) {
            throw .invalidValue(
                option: "--interval", value: "\(interval)", reason: "expected 1 to 86400 seconds (a day)",
                context: parsed.context)
        }
        if parsed.option("interval") != nil, !watch {
            throw .unexpectedArgument("--interval without --watch", context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let device = try invocation.config().deviceID
        let policy = try Self.policy(invocation.environment)
        let transport = try invocation.httpClient()
        // Checked before taking the lock, so a missing login is said plainly.
        _ = try invocation.serverSession(transport: transport)
        let lock = try SyncLock(path: invocation.home.syncLockPath)
        defer { lock.release() }
        let signals = StopSignals()
        var anythingFailed = false
        // In --watch, an offline stretch is reported once, not every interval.
        var offlineReported = false
        repeat {
            let session = try invocation.serverSession(transport: transport)
            let started = ContinuousClock.now
            let run = SyncRun(
                ledger: ledger, session: session, device: device, clock: invocation.clock, policy: policy,
                shouldStop: { signals.stopRequested },
                progress: { step in Self.show(step, invocation) })
            let report = try run.run()
            invocation.endProgress()
            let elapsed = ContinuousClock.now - started
            let offline: Bool
            if case .serverUnreachable = report.stop { offline = true } else { offline = false }
            let quiet = watch && offline && offlineReported && report.sent.isEmpty && report.retrying.isEmpty
            if !quiet { Self.summarize(report, elapsed: elapsed, watching: watch, invocation) }
            offlineReported = offline
            anythingFailed = report.needsAttention
            switch report.stop {
            case .loginRequired(let why), .transportRefused(let why):
                throw JQCError.refused(why)
            default:
                break
            }
            guard watch, !signals.stopRequested else { break }
            let wait = Self.wait(after: report, interval: interval, now: invocation.clock.now())
            if signals.wait(seconds: wait) { break }
        } while true
        if watch, signals.stopRequested { invocation.stderr.line("jqc: sync stopped.") }
        if anythingFailed {
            throw JQCError.refused(
                "Some items failed for good (listed above). See 'jqc outbox'; send them again with "
                    + "'jqc sync retry ID' once the cause is fixed.")
        }
    }

    /// The retry policy; `JQC_SYNC_BACKOFF_SCALE` (tests only) multiplies every delay.
    static func policy(_ environment: [String: String]) throws -> RetryPolicy {
        var policy = RetryPolicy.standard
        if let text = environment["JQC_SYNC_BACKOFF_SCALE"] {
            guard let scale = Double(text), scale >= 0, scale.isFinite else {
                throw JQCError.refused(
                    "JQC_SYNC_BACKOFF_SCALE is '\(text)', not a number ≥ 0. It is for tests only; unset it.")
            }
            policy.scale = scale
        }
        return policy
    }

    /// Seconds until the next run of `--watch`: the earliest retry, else the interval.
    static func wait(after report: SyncReport, interval: Int, now: Timestamp) -> Double {
        var seconds = Double(interval)
        if case .serverUnreachable = report.stop { return seconds }
        if let next = report.nextAttemptAt {
            seconds = min(
                seconds, (Double(next.microsecondsSinceEpoch) - Double(now.microsecondsSinceEpoch)) / 1_000_000)
        }
        return max(0.05, seconds)
    }

    // MARK: Output

    static func show(_ progress: SyncProgress, _ invocation: Invocation) {
        let what =
            "[\(progress.index)/\(progress.total)] \(progress.item.kind.rawValue) "
            + "\(progress.item.id.lowercased.prefix(8))"
        switch progress.step {
        case .sending: invocation.progress("\(what): sending")
        case .sent(let detail): invocation.progress("\(what): sent (\(detail))")
        case .willRetry(let why): invocation.progress("\(what): will retry (\(why.prefix(60)))")
        case .gaveUp(let why): invocation.progress("\(what): failed (\(why.prefix(60)))")
        case .waiting(let why): invocation.progress("\(what): waiting, \(why)")
        }
    }

    static func summarize(_ report: SyncReport, elapsed: Duration, watching: Bool, _ invocation: Invocation) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(json(report, seconds: seconds)))
            return
        }
        let quiet =
            watching && report.sent.isEmpty && report.gaveUp.isEmpty && report.retrying.isEmpty && report.stop == nil
        if quiet { return }
        let out = invocation.stdout
        let prefix = watching ? "\(invocation.clock.now().iso8601.prefix(19)) " : ""
        let kinds = SyncItemKind.allCases.compactMap { kind -> String? in
            let count = report.sentCount(kind)
            return count == 0 ? nil : "\(count) \(kind.rawValue)\(count == 1 ? "" : "s")"
        }
        out.line(
            "\(prefix)Sent \(report.sent.count)" + (kinds.isEmpty ? "" : " (\(kinds.joined(separator: ", ")))")
                + "; failed \(report.gaveUp.count); will retry \(report.retrying.count); skipped \(report.skipped.count)"
                + String(format: " [%.2f s]", seconds))
        for failure in report.gaveUp {
            out.line("  failed: \(describe(failure))")
        }
        for failure in report.retrying {
            let when = failure.nextAttemptAt.map { " (next try \($0.iso8601.prefix(19)))" } ?? ""
            out.line("  will retry: \(describe(failure))\(when)")
        }
        if !report.failedEarlier.isEmpty {
            out.line(
                "  \(report.failedEarlier.count) item(s) failed earlier and wait for 'jqc sync retry ID' "
                    + "(see 'jqc outbox').")
        }
        switch report.reference {
        case .refreshed(let facilities, let templates):
            if !watching { out.line("Reference data refreshed: \(facilities) facilities, \(templates) templates.") }
        case .failed(let why):
            out.line("Reference data not refreshed: \(TerminalText.safe(why))")
        case .notAttempted:
            break
        }
        if let stop = report.stop {
            switch stop {
            case .loginRequired, .transportRefused: break  // thrown as the command's error
            case .serverUnreachable(let why): out.line(TerminalText.safe(why))
            case .interrupted: out.line(stop.description)
            }
        }
    }

    static func describe(_ failure: SyncReport.Failure) -> String {
        "\(failure.item.kind.rawValue) \(failure.item.id.lowercased.prefix(8)) of inspection "
            + "\(failure.inspectionID.lowercased.prefix(8)): \(failure.error.terminalSafe)"
    }

    static func json(_ report: SyncReport, seconds: Double) -> [String: Any] {
        func failure(_ f: SyncReport.Failure) -> [String: Any] {
            [
                "kind": f.item.kind.rawValue, "id": f.item.id.lowercased, "inspection_id": f.inspectionID.lowercased,
                "error": f.error, "http_status": f.httpStatus ?? NSNull(),
                "next_attempt_at": f.nextAttemptAt?.iso8601 ?? NSNull(),
            ]
        }
        var sent: [String: Int] = [:]
        for kind in SyncItemKind.allCases { sent[kind.rawValue] = report.sentCount(kind) }
        var reference: Any = NSNull()
        switch report.reference {
        case .refreshed(let facilities, let templates):
            reference = ["refreshed": true, "facilities": facilities, "templates": templates]
        case .failed(let why): reference = ["refreshed": false, "error": why]
        case .notAttempted: break
        }
        var stop: Any = NSNull()
        switch report.stop {
        case .loginRequired(let why): stop = ["reason": "login_required", "message": why]
        case .serverUnreachable(let why): stop = ["reason": "server_unreachable", "message": why]
        case .transportRefused(let why): stop = ["reason": "transport_refused", "message": why]
        case .interrupted: stop = ["reason": "interrupted"]
        case nil: break
        }
        return [
            "sent": sent, "sent_total": report.sent.count, "failed": report.gaveUp.map(failure),
            "retrying": report.retrying.map(failure), "failed_earlier": report.failedEarlier.map(failure),
            "skipped": report.skipped.count, "reference": reference, "stopped": stop,
            "next_attempt_at": report.nextAttemptAt?.iso8601 ?? NSNull(), "passes": report.passes,
            "elapsed_seconds": seconds,
        ]
    }
}

// MARK: - sync retry

/// `jqc sync retry ID`: puts failed items back in the queue.
struct SyncRetryCommand: RunnableCommand {
    static let path = ["sync", "retry"]
    static let spec = CommandSpec(
        "retry", abstract: "Queue failed items again: one outbox item, or every failed item of an inspection.",
        discussion: """
            ID is a prefix of an outbox item's id (see 'jqc outbox') or of an inspection's id. The attempts \
            start again from zero; run 'jqc sync' to send them.
            """,
        group: "Syncing",
        positionals: [PositionalSpec("ID", help: "An outbox item or an inspection (any unique prefix of its id).")])

    var reference: String

    init(_ parsed: ParsedCommand) throws(UsageError) { reference = try parsed.require("ID") }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        guard let prefix = IDPrefix(reference) else { throw LookupError.notAnID(reference) }
        let outbox = try ledger.outbox()
        let byItem = outbox.filter { prefix.matches($0.item.id) }
        let byInspection = outbox.filter { prefix.matches($0.inspectionID) }
        let inspections = Set(byInspection.map(\.inspectionID))
        // An inspection's own item has the inspection's id, so the two sets overlap.
        let candidates = inspections.union(byItem.map(\.item.id))
        guard let only = candidates.first else {
            throw JQCError.notFound(
                kind: "outbox item or inspection", reference: reference,
                hint: "'jqc outbox' lists what is waiting; synced items need no retry.")
        }
        guard candidates.count == 1 else {
            throw JQCError.ambiguous(
                kind: "outbox item or inspection", reference: reference,
                candidates: candidates.map(\.lowercased).sorted())
        }
        let rows = inspections.contains(only) ? byInspection : byItem
        let failed = rows.filter { $0.state == .failed }
        guard !failed.isEmpty else {
            let states = Set(rows.map(\.state.rawValue)).sorted().joined(separator: ", ")
            throw JQCError.refused(
                "Nothing to retry for '\(reference)': its items are \(states), not failed. Pending and retrying "
                    + "items are sent by 'jqc sync' on their own.")
        }
        let actor = try invocation.actor()
        let device = try invocation.config().deviceID
        let now = invocation.clock.now()
        let events = failed.map { row in
            InspectionEvent.syncRetryRequested(SyncRetryRequested(item: row.item)).pending(
                stream: row.inspectionID, actor: actor, device: device, recordedAt: now)
        }
        try ledger.append(events)
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    failed.map { ["kind": $0.item.kind.rawValue, "id": $0.item.id.lowercased] as [String: Any] }))
            return
        }
        for row in failed {
            invocation.stdout.line(
                "Queued again: \(row.item.kind.rawValue) \(row.item.id.lowercased.prefix(8)) of inspection "
                    + "\(row.inspectionID.lowercased.prefix(8))")
        }
        invocation.stdout.line("Run 'jqc sync' to send \(failed.count == 1 ? "it" : "them").")
    }
}

// MARK: - history

/// `jqc history [--limit N] [--offset K]`: the server's completed inspections.
struct HistoryCommand: RunnableCommand {
    static let path = ["history"]
    static let spec = CommandSpec(
        "history", abstract: "List the server's completed inspections, newest first (online only).",
        discussion: "Offline, 'jqc inspections' lists what this device recorded.",
        group: "Syncing",
        options: [
            OptionSpec("limit", valueName: "N", help: "How many (1-100).", defaultDescription: "30"),
            OptionSpec("offset", valueName: "K", help: "How many to skip first.", defaultDescription: "0"),
        ])

    var limit: Int
    var offset: Int

    init(_ parsed: ParsedCommand) throws(UsageError) {
        limit = try parsed.integer("limit", default: 30)
        offset = try parsed.integer("offset", default: 0)
        guard (1...100).contains(limit) else {
            throw .invalidValue(
                option: "--limit", value: "\(limit)", reason: "expected 1 to 100", context: parsed.context)
        }
        guard (0...Int(Int32.max)).contains(offset) else {
            throw .invalidValue(
                option: "--offset", value: "\(offset)", reason: "expected 0 to \(Int32.max)", context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let session = try invocation.serverSession()
        let page = try invocation.online(
            "list the server's history",
            offlineHint: "The history is online only; 'jqc inspections' lists what this device recorded."
        ) { () throws(APIError) in
            try session.authorized { token throws(APIError) in
                try session.api.history(accessToken: token, limit: limit, offset: offset)
            }
        }
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render([
                    "inspections": page.inspections.map(\.foundationObject), "total": page.total, "limit": limit,
                    "offset": offset,
                ]))
            return
        }
        guard !page.inspections.isEmpty else {
            invocation.stdout.line(
                page.total == 0 ? "The server has no completed inspections yet." : "No more: \(page.total) in all.")
            return
        }
        func text(_ value: JSONValue?) -> String {
            switch value {
            case .string(let s)?: s
            case .number(let n)?: n
            case .bool(let b)?: b ? "yes" : "no"
            default: "-"
            }
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["ID", "COMPLETED", "TEMPLATE", "FACILITY", "INSPECTOR", "SCORE", "FOLLOW-UP", "CLIENT ID"],
                rows: page.inspections.map { i in
                    [
                        text(i["id"]), String(text(i["completed_at"]).prefix(16)), text(i["template_name"]),
                        text(i["facility_name"]) + (i["area_name"]?.stringValue.map { " / \($0)" } ?? ""),
                        text(i["inspector_name"]), text(i["overall_score"]), text(i["follow_up_required"]),
                        String(text(i["client_id"]).prefix(8)),
                    ]
                }))
        let last = offset + page.inspections.count
        invocation.stdout.line("\(offset + 1)-\(last) of \(page.total)")
    }
}

// MARK: - The terminal

/// Reading what the user types: a line, or a password without echo.
enum Terminal {
    /// Asks on standard error and reads a line from a terminal.
    static func prompt(_ question: String) throws -> String {
        guard isatty(0) == 1 else {
            throw JQCError.refused("No terminal to ask for the user name. Pass it with --username USER.")
        }
        FileHandle.standardError.write(Data(question.utf8))
        return try readLine(what: "user name").trimmingCharacters(in: .whitespaces)
    }

    /// One line from standard input, without its line break.
    static func readLine(what: String) throws -> String {
        guard var line = Swift.readLine(strippingNewline: true) else {
            throw JQCError.refused("No \(what) on standard input (it was empty). Nothing was changed.")
        }
        if line.hasSuffix("\r") { line.removeLast() }
        return line
    }

    /// The password, typed on the terminal with echo turned off (termios).
    static func secret() throws -> String {
        guard isatty(0) == 1 else {
            throw JQCError.refused(
                "No terminal to ask for the password. Pipe it in with --password-stdin (never as an argument).")
        }
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { throw JQCError.io("reading the terminal's settings", errno) }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        // Echo off first, prompt second: TCSAFLUSH discards input typed
        // before it takes effect, which must never include the password.
        guard tcsetattr(0, TCSAFLUSH, &silent) == 0 else { throw JQCError.io("turning off the echo", errno) }
        defer {
            tcsetattr(0, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        FileHandle.standardError.write(Data("Password: ".utf8))
        return try readLine(what: "password")
    }
}

// MARK: - Stopping on SIGINT and SIGTERM

/// Turns SIGINT and SIGTERM into a request to stop that the worker checks
/// between items, so the item in flight is finished and recorded first.
final class StopSignals: @unchecked Sendable {
    /// `@unchecked Sendable` rests on this: `requested` is only touched under `lock`.
    private let lock = NSLock()
    private var requested = false
    private let wake = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceSignal] = []
    private var previous: [(Int32, sighandler_t?)] = []

    init() {
        for number in [SIGINT, SIGTERM] {
            // The default action would kill the process at once; a dispatch
            // source sees the signal only once that action is ignored.
            previous.append((number, signal(number, SIG_IGN)))
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.request() }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
        // A caller running `jqc` in-process gets its own handling back.
        for (number, handler) in previous { signal(number, handler) }
    }

    var stopRequested: Bool {
        lock.lock()
        defer { lock.unlock() }
        return requested
    }

    private func request() {
        lock.lock()
        requested = true
        lock.unlock()
        wake.signal()
    }

    /// Waits up to `seconds`; answers true when a stop was requested.
    func wait(seconds: Double) -> Bool {
        if stopRequested { return true }
        _ = wake.wait(timeout: .now() + .milliseconds(Int(seconds * 1000)))
        return stopRequested
    }
}
