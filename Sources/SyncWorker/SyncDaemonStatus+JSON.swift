import FoundationEssentials
import InspectionDomain
import LedgerCore

/// The status file's JSON (`Schemas/ledger-format.md` § The ledger directory,
/// `sync-daemon.json`), read strictly: a member of the wrong kind makes the
/// file unreadable rather than half-read.
extension SyncDaemonStatus {
    /// The file's format tag.
    static let format = "jqc-sync-daemon/1"

    public var json: JSONValue {
        .object([
            "format": .string(Self.format), "pid": .integer(pid), "process_start": .string(processStart),
            "started_at": .string(startedAt.iso8601), "unit": .optional(unit), "state": .string(state.rawValue),
            "since": .string(since.iso8601), "until": .optional(until?.iso8601), "last_error": .optional(lastError),
            "detail": .optional(detail), "passes_started": .integer(passesStarted),
            "last_pass": lastPass?.fileJSON ?? .null, "updated_at": .string(updatedAt.iso8601),
        ])
    }

    init(json: JSONValue) throws(SyncDaemonStatusError) {
        let read = FieldReader(json)
        guard read.string("format") == Self.format else { throw read.wrong("format") }
        guard let pid = read.integer("pid"), let start = read.string("process_start"),
            let startedAt = read.time("started_at"), let since = read.time("since"),
            let updated = read.time("updated_at"), let stateWord = read.string("state"),
            let state = State(rawValue: stateWord), let passes = read.integer("passes_started")
        else { throw read.wrong("pid, process_start, started_at, since, updated_at, state or passes_started") }
        self.init(
            pid: Int32(clamping: pid), processStart: start, startedAt: startedAt, unit: read.string("unit"),
            state: state, since: since, updatedAt: updated)
        until = read.time("until")
        lastError = read.string("last_error")
        detail = read.string("detail")
        passesStarted = Int(passes)
        if let pass = json["last_pass"], !pass.isNull { lastPass = try Pass(json: pass) }
    }

    /// `jqc status --json`'s `background_sync` (`Schemas/cli/jqc-json.schema.json`).
    public static func statusJSON(_ reading: Reading?) -> JSONValue {
        switch reading {
        case nil: return .null
        case .unreadable(let why):
            return .object(["running": .bool(false), "problem": .string(why)])
        case .running(let status), .notRunning(let status):
            let running = reading == .running(status)
            return .object([
                "running": .bool(running), "pid": .integer(status.pid), "started_at": .string(status.startedAt.iso8601),
                "unit": .optional(status.unit), "state": running ? .string(status.state.rawValue) : .null,
                "since": .string(status.since.iso8601), "until": .optional(status.until?.iso8601),
                "last_error": .optional(status.lastError), "detail": .optional(status.detail),
                "last_seen_at": .string(status.updatedAt.iso8601),
                "last_pass": status.lastPass.map {
                    .object([
                        "started_at": .string($0.startedAt.iso8601), "finished_at": .string($0.finishedAt.iso8601),
                        "outcome": .string($0.outcome), "exit_status": .integer($0.exitStatus),
                    ])
                } ?? .null,
            ])
        }
    }
}

extension SyncDaemonStatus.Pass {
    var fileJSON: JSONValue {
        .object([
            "number": .integer(number), "started_at": .string(startedAt.iso8601),
            "finished_at": .string(finishedAt.iso8601), "outcome": .string(outcome),
            "exit_status": .integer(exitStatus), "lines": .array(lines.map(JSONValue.string)),
            "warnings": .array(warnings.map(JSONValue.string)), "failure": .optional(failure),
            "json": document ?? .null,
        ])
    }

    init(json value: JSONValue) throws(SyncDaemonStatusError) {
        let read = FieldReader(value)
        guard let number = read.integer("number"), let started = read.time("started_at"),
            let finished = read.time("finished_at"), let outcome = read.string("outcome"),
            let status = read.integer("exit_status"),
            let lines = value["lines"]?.arrayValue?.compactMap(\.stringValue),
            let warnings = value["warnings"]?.arrayValue?.compactMap(\.stringValue)
        else { throw read.wrong("last_pass") }
        let document = value["json"].flatMap { $0.isNull ? nil : $0 }
        self.init(
            number: Int(number), startedAt: started, finishedAt: finished, outcome: outcome, exitStatus: Int(status),
            lines: lines, warnings: warnings, failure: read.string("failure"), document: document)
    }
}

/// Members of one object of the status file, each nil when absent or of another kind.
private struct FieldReader {
    let value: JSONValue
    init(_ value: JSONValue) { self.value = value }

    func string(_ key: String) -> String? { value[key]?.stringValue }
    func integer(_ key: String) -> Int64? { value[key]?.integerValue }
    func time(_ key: String) -> Timestamp? { string(key).flatMap { Timestamp(iso8601: $0) } }
    func wrong(_ what: String) -> SyncDaemonStatusError {
        .malformed(what)
    }
}
