import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc status`: who records, whether the server still takes the session,
/// the server and the witness, when the device last synced, what is not on
/// the server yet (counted by kind, `SyncStanding`), and the background service.
struct StatusCommand: RunnableCommand {
    static let path = ["status"]
    static let spec = CommandSpec(
        "status", abstract: "Show what is not on the server yet, the last sync, the session and the service.",
        discussion: """
            Drafts are counted as not on the server: nothing of an inspection is sent before it is submitted. \
            Stalled items are still retried (their next try is shown); items failed for good wait for \
            'jqc sync retry ID' once the cause is fixed. Nothing here uses the network: whether the server \
            refused the session is what the last sync or 'whoami --check' learned.
            """,
        group: "Syncing")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let config = try invocation.config()
        let standing = try invocation.reading { try SyncStanding.read($0) }
        let saved = try invocation.session()
        let refusal = SessionRefusal.of(saved, in: invocation.home)
        let offline = saved == nil ? try invocation.settings.inForce(.actor) : (nil, .none)
        let service = SyncService(environment: invocation.environment).state()
        let witness = WitnessSetting.configured(config)
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    Self.json(
                        standing, saved: saved, refusal: refusal, offline: offline, server: config.serverURL,
                        witness: witness, service: service)))
            return
        }
        let out = invocation.stdout
        if let saved {
            let user = saved.user
            out.line(
                "Identity   \(user.displayName.terminalSafe) (\(user.username.terminalSafe), user "
                    + "\(user.id.terminalSafe)), logged in \(saved.savedAt)")
            if let refusal {
                out.line(
                    "           the server REFUSED this session at \(refusal.refusedAt) "
                        + "(\(TerminalText.singleLine(refusal.message))): log in again with 'jqc login'; "
                        + "recording goes on meanwhile")
            }
        } else if let name = offline.value {
            let from = offline.source == .environment ? "JQC_ACTOR" : "'jqc config set actor'"
            out.line(
                "Identity   nobody logged in; recording as \(TerminalText.singleLine(name)) (from \(from), "
                    + "unverified); 'jqc login' to sync")
        } else {
            out.line("Identity   nobody logged in; 'jqc login' to sync (offline: --as NAME on each command)")
        }
        out.line("Server     " + (config.serverURL ?? "none; set one with 'jqc config set server URL'"))
        out.line(
            "Witness    "
                + (witness ?? String(WitnessSetting.notConfigured.dropFirst("witness: ".count))))
        out.line(
            "Last sync  "
                + (standing.lastSent.map { "sent \($0.iso8601)" } ?? "nothing sent yet")
                + (standing.lastAttempt.map { "; last attempt \($0.iso8601)" } ?? ""))
        if standing.serverHasEverything {
            out.line("Not on the server yet: nothing; the server has everything this device recorded.")
        } else {
            out.line("Not on the server yet:")
            if standing.drafts > 0 {
                out.line(
                    "  drafts not submitted  \(standing.drafts)"
                        + (standing.draftPhotos > 0 ? " (\(Self.count(standing.draftPhotos, "photo")))" : "")
                        + "; sent once submitted ('jqc submit ID')")
            }
            let waiting = SyncItemKind.allCases.compactMap { kind -> String? in
                (standing.waiting[kind] ?? 0) == 0 ? nil : Self.count(standing.waiting[kind] ?? 0, kind.rawValue)
            }
            if !waiting.isEmpty {
                out.line("  submitted, waiting    " + waiting.joined(separator: ", ") + "; the next sync sends them")
            }
            for item in standing.stalled {
                let next = item.nextAttemptAt.map { ", next try \($0.iso8601.prefix(19))Z" } ?? ""
                out.line(
                    "  stalled               \(Self.name(item)) after \(item.attempts) attempts\(next): "
                        + TerminalText.singleLine(item.lastError ?? "no answer"))
            }
            for item in standing.failed {
                out.line(
                    "  failed for good       \(Self.name(item)): "
                        + TerminalText.singleLine(item.lastError ?? item.detail ?? "refused")
                        + "; fix the cause, then 'jqc sync retry \(item.inspectionID.lowercased.prefix(8))'")
            }
            out.line("  photos                \(standing.photos) not on the server")
        }
        if standing.leftOut > 0 {
            out.line(
                "  (\(Self.count(standing.leftOut, "photo")) failed for good earlier and went without: see "
                    + "'jqc outbox')")
        }
        out.line("Service    " + service.line)
    }

    static func name(_ item: OutboxItem) -> String {
        "\(item.item.kind.rawValue) \(item.item.id.lowercased.prefix(8)) of inspection "
            + "\(item.inspectionID.lowercased.prefix(8))"
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    static func json(
        _ standing: SyncStanding, saved: StoredSession?, refusal: SessionRefusal?,
        offline: (value: String?, source: SettingSource), server: String?, witness: String?, service: SyncService.State
    ) -> JSONValue {
        let identity: JSONValue
        if let saved {
            identity = .object([
                "name": .string(saved.user.displayName), "verified": .bool(true), "user_id": .string(saved.user.id),
                "username": .string(saved.user.username), "logged_in_at": .string(saved.savedAt),
                "source": .string("login"),
            ])
        } else if let name = offline.value {
            identity = .object([
                "name": .string(name), "verified": .bool(false), "user_id": .null, "username": .null,
                "logged_in_at": .null, "source": .string(offline.source.rawValue),
            ])
        } else {
            identity = .null
        }
        let session: JSONValue = .object([
            "state": .string(saved == nil ? "none" : refusal == nil ? "saved" : "refused"),
            "refused_at": .optional(refusal?.refusedAt), "message": .optional(refusal?.message),
        ])
        func item(_ row: OutboxItem, todo: String?) -> JSONValue {
            .object([
                "kind": .string(row.item.kind.rawValue), "id": .string(row.item.id.lowercased),
                "inspection_id": .string(row.inspectionID.lowercased), "attempts": .integer(Int64(row.attempts)),
                "next_attempt_at": .optional(row.nextAttemptAt?.iso8601), "last_error": .optional(row.lastError),
                "what_to_do": .optional(todo),
            ])
        }
        let waiting = JSONValue.object(
            SyncItemKind.allCases.map { .init($0.rawValue + "s", .integer(Int64(standing.waiting[$0] ?? 0))) })
        return .object([
            "identity": identity, "session": session, "server": .optional(server), "witness": .optional(witness),
            "last_sync": .object([
                "sent_at": .optional(standing.lastSent?.iso8601),
                "attempted_at": .optional(standing.lastAttempt?.iso8601),
            ]),
            "not_on_server": .object([
                "drafts": .integer(Int64(standing.drafts)), "draft_photos": .integer(Int64(standing.draftPhotos)),
                "waiting": waiting, "stalled": .array(standing.stalled.map { item($0, todo: nil) }),
                "failed": .array(
                    standing.failed.map {
                        item($0, todo: "fix the cause, then jqc sync retry \($0.inspectionID.lowercased)")
                    }),
                "photos": .integer(Int64(standing.photos)), "left_out": .integer(Int64(standing.leftOut)),
                "server_has_everything": .bool(standing.serverHasEverything),
            ]),
            "service": .object(["state": .string(service.word), "unit": .optional(service.unitPath)]),
        ])
    }
}
