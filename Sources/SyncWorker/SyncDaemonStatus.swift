import FoundationEssentials
import Glibc
import InspectionDomain
import InspectionStore
import LedgerCore

/// What the running background sync (`jqc sync --daemon`) says of itself in
/// `<ledger>/sync-daemon.json` (`LedgerDirectory.syncDaemonStatusPath`):
/// who it is (pid, since when, under which systemd unit or by hand), what it
/// is doing (`State`), and the outcome of its last pass, which is also the
/// answer a `jqc sync` that asked it to sync now prints (`SyncNowRequest`).
///
/// The daemon rewrites the file (atomically, by rename) at every change of
/// state; nothing else writes it. A daemon that died leaves it behind, so a
/// reader checks that the process it names is still that process (its pid
/// and its start time in `/proc/PID/stat`, so a reused pid is not taken for
/// it): `Reading.notRunning` otherwise, "last seen" at the file's last update.
public struct SyncDaemonStatus: Sendable, Equatable {
    /// What the daemon is doing.
    public enum State: String, Sendable, CaseIterable {
        /// A pass is under way.
        case sending
        /// Nothing to send: it waits for a change, or its periodic pass at `until`.
        case idle
        /// The server could not be reached since `since`; it tries again at `until` or on a network change.
        case offline
        /// Items are retried after transient failures; the next is due at `until`.
        case backingOff = "backing_off"
        /// The server refused the session, or nobody is logged in: it waits for `jqc login`.
        case waitingForLogin = "waiting_for_login"
        /// It waits for something else (a server to be configured, a readable config); `detail` says what.
        case waiting
    }

    /// The outcome of one pass, as `jqc sync` would have printed it.
    public struct Pass: Sendable, Equatable {
        /// Passes are numbered from 1 in the daemon's life.
        public var number: Int
        public var startedAt: Timestamp
        public var finishedAt: Timestamp
        /// One line for `jqc status` ("sent 1 inspection", "offline: …", "nothing to send").
        public var outcome: String
        /// What `jqc sync` would exit with: 0, or 1 when something failed for good or could not run.
        public var exitStatus: Int
        /// The lines `jqc sync` prints on standard output, and its warnings (standard error).
        public var lines: [String]
        public var warnings: [String]
        /// The message `jqc sync` would end with, when it fails.
        public var failure: String?
        /// `jqc --json sync`'s document for this pass (the `sync` schema), when it ran.
        public var document: JSONValue?

        public init(
            number: Int, startedAt: Timestamp, finishedAt: Timestamp, outcome: String, exitStatus: Int,
            lines: [String] = [], warnings: [String] = [], failure: String? = nil, document: JSONValue? = nil
        ) {
            self.number = number
            self.startedAt = startedAt
            self.finishedAt = finishedAt
            self.outcome = outcome
            self.exitStatus = exitStatus
            self.lines = lines
            self.warnings = warnings
            self.failure = failure
            self.document = document
        }
    }

    public var pid: Int32
    /// The process's start time in clock ticks after boot (`/proc/PID/stat`, field 22).
    public var processStart: String
    public var startedAt: Timestamp
    /// The systemd unit it runs under (`jqc-sync.service`), nil when started by hand.
    public var unit: String?
    public var state: State
    /// Since when it is in `state` (offline: since the first pass that found the server unreachable).
    public var since: Timestamp
    /// The latest time of its next pass (the periodic pass, the end of a back-off), nil: on a change only.
    public var until: Timestamp?
    /// Offline or backing off: the last error.
    public var lastError: String?
    /// Waiting: what it waits for and what to do (the daemon's own line).
    public var detail: String?
    /// Passes started so far; a `jqc sync` that asks waits for a pass numbered above what it read.
    public var passesStarted: Int
    public var lastPass: Pass?
    public var updatedAt: Timestamp

    public init(
        pid: Int32, processStart: String, startedAt: Timestamp, unit: String?, state: State, since: Timestamp,
        updatedAt: Timestamp
    ) {
        self.pid = pid
        self.processStart = processStart
        self.startedAt = startedAt
        self.unit = unit
        self.state = state
        self.since = since
        self.updatedAt = updatedAt
        passesStarted = 0
    }

    /// This process as a daemon starting at `now`.
    public static func thisProcess(at now: Timestamp) -> SyncDaemonStatus {
        let pid = getpid()
        return SyncDaemonStatus(
            pid: pid, processStart: processStart(of: pid) ?? "unknown", startedAt: now, unit: systemdUnit(),
            state: .idle, since: now, updatedAt: now)
    }

    // MARK: - Reading

    /// What a reader finds in the status file.
    public enum Reading: Sendable, Equatable {
        /// The daemon it names is running.
        case running(SyncDaemonStatus)
        /// The process it names is gone (or is another process now): the daemon died or was stopped.
        case notRunning(SyncDaemonStatus)
        /// The file is there but not a status file; `why` says what is wrong with it.
        case unreadable(String)
    }

    /// The status file of `directory`, nil when no daemon ever ran there.
    public static func read(_ directory: LedgerDirectory) -> Reading? {
        let path = directory.syncDaemonStatusPath
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            let status = try SyncDaemonStatus(json: try JSONValue(parsing: [UInt8](data)))
            return status.isAlive ? .running(status) : .notRunning(status)
        } catch {
            return .unreadable("\(path) is not a background sync's status file (\(error))")
        }
    }

    /// Whether the process named is still the one that wrote the file.
    public var isAlive: Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        return Self.processStart(of: pid) == processStart
    }

    /// Field 22 of `/proc/PID/stat` (after the command name, which may hold spaces and parentheses);
    /// nil for a process that has ended and waits to be reaped (state `Z` or `X`, field 3).
    static func processStart(of pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19, fields[0] != "Z", fields[0] != "X" else { return nil }
        return String(fields[19])
    }

    /// The systemd unit of this process (the last part of its cgroup, when it is a `.service` other
    /// than the user manager's own), nil when it was started from a shell.
    static func systemdUnit() -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/self/cgroup") else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            guard let last = line.split(separator: "/").last else { continue }
            if last.hasSuffix(".service"), !last.hasPrefix("user@") { return String(last) }
        }
        return nil
    }

    // MARK: - Writing

    /// Writes the file by rename, so a reader sees the old or the new one whole.
    public func write(to directory: LedgerDirectory) throws(SyncDaemonStatusError) {
        let path = directory.syncDaemonStatusPath
        do {
            try Data((json.serialized() + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .notWritten(path: path, why: "\(error)")
        }
    }
}

/// The background sync's status file could not be written, or is not one.
public enum SyncDaemonStatusError: Error, CustomStringConvertible {
    /// Writing `path` failed for `why`.
    case notWritten(path: String, why: String)
    /// A member of the file is missing or not as the daemon writes it.
    case malformed(String)

    public var description: String {
        switch self {
        case .notWritten(let path, let why):
            "could not write the background sync's status file \(path) (\(why)); 'jqc status' and 'jqc sync' "
                + "cannot see this daemon. Check that the ledger directory is writable and has space."
        case .malformed(let what): "\(what) is missing or not as a background sync writes it"
        }
    }
}
