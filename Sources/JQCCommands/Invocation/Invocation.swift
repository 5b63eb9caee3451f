import FoundationEssentials
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import SyncWorker

/// Everything a running command may touch: the ledger's location, the
/// environment, the output streams and the clock. Commands get the ledger
/// through it, opened once and only when they need it.
public final class Invocation {
    public let home: LedgerDirectory
    public let environment: [String: String]
    public let stdout: TextOutput
    public let stderr: TextOutput
    public let clock: LedgerClock
    /// `--json`: results as JSON for scripts.
    public let json: Bool
    /// `--as NAME`: who to record as when nobody is logged in.
    public let actingAs: String?
    /// `--verbose`: a connection error's whole detail instead of its one line.
    public var verbose = false
    private var openedLog: EventLog?
    private var openedLedger: InspectionLedger?
    /// The ledger opened read-only by `readingLedger()`.
    var openedForReading: InspectionLedger?

    public init(
        home: LedgerDirectory, environment: [String: String], stdout: TextOutput, stderr: TextOutput,
        clock: LedgerClock, json: Bool, actingAs: String?
    ) {
        self.home = home
        self.environment = environment
        self.stdout = stdout
        self.stderr = stderr
        self.clock = clock
        self.json = json
        self.actingAs = actingAs
    }

    deinit {
        openedLedger?.close()
        openedLog?.close()
        openedForReading?.close()
    }

    /// The ledger's event log alone (for commands that need no views).
    func log() throws -> EventLog {
        if let openedLedger { return openedLedger.log }
        if let openedLog { return openedLog }
        try home.requireLedger()
        let log = try openingStore { try EventLog(directory: home.storePath, access: .recording) }
        openedLog = log
        return log
    }

    /// Runs an open of the store, reading "no store" as damage: `config.json`
    /// is there (the caller checked), so a ledger was made here and its store
    /// was deleted, emptied or replaced since.
    func openingStore<T>(_ open: () throws -> T) throws -> T {
        do {
            return try open()
        } catch LedgerError.noLedger(let path) {
            throw LedgerError.damagedStore(
                path: path,
                what: "store/data.mdb is missing although config.json shows a ledger was created here "
                    + "(it was deleted or moved)")
        } catch LedgerError.notALedger(let path, let why) {
            throw LedgerError.notALedger(
                path: path,
                why: "\(why), yet config.json shows a ledger was created here, so its store was damaged or "
                    + "replaced; restore it from a backup or copy what still verifies with 'jqc salvage DEST'")
        }
    }

    /// Closes the log or ledger opened by `log()` or `ledger()`, so the same
    /// process can open the store again read-only (LMDB allows one handle per
    /// file and process).
    func closeLog() {
        openedLog?.close()
        openedLog = nil
        openedLedger?.close()
        openedLedger = nil
    }

    /// The whole ledger: log, views (rebuilt first if stale), photos, reference data.
    func ledger() throws -> InspectionLedger {
        if let openedLedger { return openedLedger }
        try home.requireLedger()
        openedLog?.close()
        openedLog = nil
        // The notice may be told from any thread the ledger is used on: it
        // holds the (Sendable) stream, not the invocation.
        let stderr = self.stderr
        let ledger = try openingStore {
            try InspectionLedger(
                storePath: home.storePath, photosPath: home.photosPath, access: .recording,
                notice: { message in
                    Self.endProgress(on: stderr)
                    stderr.line("jqc: \(message)")
                }
            ) { what, done, total in
                self.progress("\(what): \(done)/\(total) events")
            }
        }
        endProgress()
        openedLedger = ledger
        return ledger
    }

    /// The saved session, if anyone logged in on this ledger.
    func session() throws -> StoredSession? {
        try SessionStore(home).load()
    }

    /// Who a recorded event is attributed to: the logged-in user (verified),
    /// else the `--as` name (recorded as unverified). A login wins over
    /// `--as`: a note on stderr says the name given was not used.
    func actor() throws -> Actor {
        // A restored backup says so before each recording (`RestorePoint`).
        if let warning = try RestorePoint.uncheckableWarning(home) {
            stderr.line("jqc: " + TerminalText.singleLine(warning))
        }
        // `ActorName.parse` trimmed it and refused a name with nothing visible.
        let named = actingAs
        if let session = try session() {
            if let named, named != session.user.displayName {
                stderr.line(
                    "jqc: note: recording as \(TerminalText.singleLine(session.user.displayName)), who is logged in; "
                        + "--as \(TerminalText.singleLine(named)) is not used (log out with 'jqc logout' to record as "
                        + "someone else).")
            }
            return Actor(id: session.user.id, name: session.user.displayName, verified: true)
        }
        if let named { return Actor(id: "local:\(named)", name: named, verified: false) }
        // Then `JQC_ACTOR`, then the ledger's `actor` setting (`jqc config set actor NAME`).
        let settings = LedgerSettings(directory: home, environment: environment)
        if let name = try settings.inForce(.actor).value {
            return Actor(id: "local:\(name)", name: name, verified: false)
        }
        throw JQCError.noActor
    }

    func config() throws -> LedgerConfig { try LedgerConfig.load(home) }

    /// Whether progress lines may be drawn (stderr is a terminal).
    var showsProgress: Bool { stderr.isTerminal }

    /// Whether colour may be used on stdout.
    var usesColour: Bool { stdout.isTerminal && environment["NO_COLOR"] == nil }

    /// Draws `message` over the previous progress line, on a terminal only.
    func progress(_ message: String) {
        guard showsProgress else { return }
        stderr.write("\r\u{1B}[2K" + message)
    }

    func endProgress() { Self.endProgress(on: stderr) }

    /// Clears the progress line, if `stream` is a terminal that shows one.
    static func endProgress(on stream: TextOutput) {
        guard stream.isTerminal else { return }
        stream.write("\r\u{1B}[2K")
    }
}

extension Invocation {
    /// Reference data from the server: facilities and templates (with their
    /// form schemas), through the saved session, refreshed once on a 401.
    /// Templates this jqc cannot use are skipped, each with a warning on stderr.
    func pullFromServer() throws -> (snapshot: ReferenceCache.Snapshot, skipped: [String]) {
        let session = try serverSession()
        let pulled = try online(
            "pull reference data", offlineHint: "Offline, import it from a file with 'jqc pull --from FILE'."
        ) { () throws(APIError) in try ReferencePull.fetch(session) }
        for warning in pulled.warnings { stderr.line("jqc: \(warning)") }
        return (pulled.snapshot, pulled.warnings)
    }
}
