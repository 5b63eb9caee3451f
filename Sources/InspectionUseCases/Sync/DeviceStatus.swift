import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import SyncWorker

/// What `jqc status` says of a device, as text and as JSON: who records (a
/// login, or a name recorded unverified and where it comes from), whether
/// the server refused the session, the server and the witness, when the
/// device last synced, what is not on the server yet (`SyncStanding`) and
/// what to do about each kind, the background service and the background
/// sync running now (`BackgroundSyncLines`). Nothing here
/// uses the network: a refusal is what an earlier sync or check learned.
public struct DeviceStatus: Sendable {
    public let standing: SyncStanding
    /// The saved login, if any.
    public let saved: StoredSession?
    /// What the server's last refusal of `saved` taught, if it refused it.
    public let refusal: SessionRefusal?
    /// Without a login: the actor recorded (`jqc config set actor`, `JQC_ACTOR`) and where it comes from.
    public let offline: (value: String?, source: SettingSource)
    public let server: String?
    /// The configured witness (`WitnessSetting.configured`), nil for none.
    public let witness: String?
    public let service: SyncServiceUnit.State
    /// This device's id: what a sender's `jqc handover ID --to` names to
    /// bind a file to it (nil: not shown).
    public var device: UUID? = nil
    /// What the background sync's status file says (`SyncDaemonStatus`), nil when none ever ran here.
    public var backgroundSync: SyncDaemonStatus.Reading? = nil

    public init(
        standing: SyncStanding, saved: StoredSession?, refusal: SessionRefusal?,
        offline: (value: String?, source: SettingSource), server: String?, witness: String?,
        service: SyncServiceUnit.State
    ) {
        self.standing = standing
        self.saved = saved
        self.refusal = refusal
        self.offline = offline
        self.server = server
        self.witness = witness
        self.service = service
    }

    /// The status as text, one line each: every person- or server-written
    /// part through `TerminalText.singleLine`.
    public var lines: [String] {
        var lines = identityLines
        lines.append("Server     " + (server ?? "none; set one with 'jqc config set server URL'"))
        lines.append("Witness    " + (witness ?? String(WitnessSetting.notConfigured.dropFirst("witness: ".count))))
        lines.append(
            "Last sync  "
                + (standing.lastSent.map { "sent \($0.iso8601)" } ?? "nothing sent yet")
                + (standing.lastAttempt.map { "; last attempt \($0.iso8601)" } ?? ""))
        lines += notOnServerLines
        // Sent, yet perhaps twice: said here as `show` and `sync` say it.
        lines += standing.possiblySentTwice.map { "  " + InspectionState.possiblySentTwiceNote($0) }
        if standing.leftOut > 0 {
            lines.append(
                "  (\(Self.count(standing.leftOut, "photo")) failed for good earlier and went without: see "
                    + "'jqc outbox')")
        }
        lines.append("Service    " + serviceLine)
        lines += BackgroundSyncLines.lines(backgroundSync)
        if let device {
            lines.append(
                "Device     \(device.lowercased) (a sender binds a handover file to this device with "
                    + "'jqc handover ID -o FILE --to \(device.lowercased)')")
        }
        return lines
    }

    /// The service's line; "nothing syncs by itself" is not said while a daemon started by hand runs.
    private var serviceLine: String {
        if case .notInstalled = service, case .running? = backgroundSync {
            return "not installed; the background sync below runs until stopped ('jqc service install' keeps one "
                + "running)"
        }
        return service.line
    }

    private var identityLines: [String] {
        if let saved {
            let user = saved.user
            var lines = [
                "Identity   \(safe(user.displayName)) (\(safe(user.username)), user \(safe(user.id))), logged in "
                    + saved.savedAt
            ]
            if let refusal {
                lines.append(
                    "           the server REFUSED this session at \(refusal.refusedAt) "
                        + "(\(safe(refusal.message))): log in again with 'jqc login'; recording goes on meanwhile")
            }
            return lines
        }
        if let name = offline.value {
            let from = offline.source == .environment ? "JQC_ACTOR" : "'jqc config set actor'"
            return [
                "Identity   nobody logged in; recording as \(safe(name)) (from \(from), unverified); 'jqc login' "
                    + "to sync"
            ]
        }
        return [
            "Identity   nobody logged in; 'jqc login' to sync (offline: 'jqc config set actor NAME' or JQC_ACTOR names who records)"
        ]
    }

    /// Whether nothing waits and a server is configured: only then may it
    /// say the server has everything.
    public var serverHasEverything: Bool { standing.serverHasEverything && server != nil }

    private var notOnServerLines: [String] {
        var lines = notSentLines
        for twice in standing.serverRecordsTwice {
            lines.append("  inspection \(twice.inspection.lowercased.prefix(8))  " + safe(twice.note))
        }
        return lines
    }

    private var notSentLines: [String] {
        if standing.serverHasEverything {
            guard server != nil else {
                return [
                    "Not on the server yet: nothing waits to be sent, but no server is configured: nothing reaches "
                        + "one until 'jqc config set server URL'"
                ]
            }
            return ["Not on the server yet: nothing; the server has everything this device recorded."]
        }
        var lines = ["Not on the server yet:"]
        if standing.drafts > 0 {
            lines.append(
                "  drafts not submitted  \(standing.drafts)"
                    + (standing.draftPhotos > 0 ? " (\(Self.count(standing.draftPhotos, "photo")))" : "")
                    + "; sent once submitted ('jqc submit ID')")
        }
        let waiting = SyncItemKind.allCases.compactMap { kind -> String? in
            (standing.waiting[kind] ?? 0) == 0 ? nil : Self.count(standing.waiting[kind] ?? 0, kind.rawValue)
        }
        if !waiting.isEmpty {
            lines.append("  submitted, waiting    " + waiting.joined(separator: ", ") + "; the next sync sends them")
        }
        for item in standing.stalled {
            let next = item.nextAttemptAt.map { ", next try \($0.iso8601.prefix(19))Z" } ?? ""
            lines.append(
                "  stalled               \(Self.name(item)) after \(item.attempts) attempts\(next): "
                    + safe(item.lastError ?? "no answer"))
        }
        for item in standing.failed {
            let why = safe(item.lastError ?? item.detail ?? "refused")
            // A reason that already says when to retry (an issue held back
            // until its inspection can be sent) is not told it twice.
            let advice =
                why.contains("'jqc sync retry ")
                ? "" : "; fix the cause, then 'jqc sync retry \(item.inspectionID.lowercased.prefix(8))'"
            lines.append("  failed for good       \(Self.name(item)): " + why + advice)
        }
        for copy in standing.expectedElsewhere {
            lines.append(
                "  another device sends  inspection \(copy.inspection.lowercased.prefix(8)): " + safe(copy.note))
        }
        lines.append("  photos                \(standing.photos) not on the server")
        return lines
    }

    private func safe(_ text: String) -> String { TerminalText.singleLine(text) }

    /// An outbox item as the status names it: its kind and the short ids of
    /// it and its inspection; an inspection's own item only once
    /// ("inspection c73923c2", not "inspection c73923c2 of inspection c73923c2").
    public static func name(_ item: OutboxItem) -> String { item.item.named(inInspection: item.inspectionID) }

    /// `1 photo`, `2 photos`.
    public static func count(_ n: Int, _ noun: String) -> String { Plural.of(n, noun) }

    /// `jqc status --json` (`status` in `Schemas/cli/jqc-json.schema.json`).
    public var jsonValue: JSONValue {
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
        func note(_ entry: InspectionNote) -> JSONValue {
            .object(["inspection_id": .string(entry.inspection.lowercased), "note": .string(entry.note)])
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
                "server_has_everything": .bool(serverHasEverything),
                "expected_from_other_devices": .array(standing.expectedElsewhere.map(note)),
                "server_records_twice": .array(standing.serverRecordsTwice.map(note)),
            ]),
            "service": .object(["state": .string(service.word), "unit": .optional(service.unitPath)]),
            "background_sync": SyncDaemonStatus.statusJSON(backgroundSync),
            "device": .optional(device?.lowercased),
        ])
    }
}
