import FoundationEssentials
import Glibc
import InspectionStore
import LedgerStore

/// What a sync (or `whoami --check`) learned when the server refused the
/// saved session: kept in `<ledger>/session-refused.json` (no secrets),
/// tied to the session it refused by that session's `saved_at`, so a new
/// `jqc login` (which saves a session with another `saved_at`) makes it
/// stale without anyone removing it. `jqc whoami` and `jqc status` say
/// "the server refused this session … log in again" while it holds.
public struct SessionRefusal: Codable, Sendable, Equatable {
    /// `saved_at` of the session the server refused.
    public var sessionSavedAt: String
    /// When it was refused (ISO 8601).
    public var refusedAt: String
    /// The server's reason, cut and redacted as every message is.
    public var message: String

    enum CodingKeys: String, CodingKey {
        case sessionSavedAt = "session_saved_at"
        case refusedAt = "refused_at"
        case message
    }

    public init(sessionSavedAt: String, refusedAt: String, message: String) {
        self.sessionSavedAt = sessionSavedAt
        self.refusedAt = refusedAt
        self.message = message
    }

    /// The file beside the ledger's config.
    public static func path(_ directory: LedgerDirectory) -> String { directory.sessionRefusedPath }

    /// Keeps the refusal of the session saved at `savedAt`.
    public static func record(_ refusal: SessionRefusal, in directory: LedgerDirectory) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try DurableFile.write(try encoder.encode(refusal), to: path(directory), mode: 0o644)
    }

    /// The refusal of `session`, nil when none was learned for it (none at
    /// all, or one of an earlier session). An unreadable file is no
    /// knowledge: the next sync learns again.
    public static func of(_ session: StoredSession?, in directory: LedgerDirectory) -> SessionRefusal? {
        guard let session, let data = FileManager.default.contents(atPath: path(directory)),
            let refusal = try? JSONDecoder().decode(SessionRefusal.self, from: data),
            refusal.sessionSavedAt == session.savedAt
        else { return nil }
        return refusal
    }

    /// Forgets a refusal once the session was accepted again.
    public static func clear(in directory: LedgerDirectory) {
        unlink(path(directory))
    }
}
