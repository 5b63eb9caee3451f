import FoundationEssentials
import LedgerCore
import SyncWorker

/// What `jqc status` says of the background sync (`jqc sync --daemon`)
/// from its status file (`SyncDaemonStatus`): whether it runs (pid, since
/// when, under which systemd unit or by hand), what it is doing (idle,
/// sending, offline since T with the last error, waiting for a login,
/// backing off until T) and its last pass; "not running (last seen T)" when
/// the process the file names is gone.
public enum BackgroundSyncLines {
    public static func lines(_ reading: SyncDaemonStatus.Reading?) -> [String] {
        switch reading {
        case nil: return []
        case .unreadable(let why): return ["Background " + TerminalText.singleLine(why)]
        case .notRunning(let status):
            return [
                "Background not running (last seen \(time(status.updatedAt)), pid \(status.pid), "
                    + "\(who(status))); 'jqc sync --daemon' or 'jqc service install' starts one"
            ]
        case .running(let status):
            var lines = [
                "Background running since \(time(status.startedAt)) (pid \(status.pid), \(who(status))): "
                    + state(status)
            ]
            // Offline, the last pass said only what the state line says.
            if let pass = status.lastPass, status.state != .offline || !pass.outcome.hasPrefix("offline: ") {
                lines.append(
                    "           last pass \(time(pass.startedAt)): " + TerminalText.singleLine(pass.outcome))
            }
            return lines
        }
    }

    /// "by hand" or "unit jqc-sync.service".
    static func who(_ status: SyncDaemonStatus) -> String {
        status.unit.map { "unit " + TerminalText.singleLine($0) } ?? "started by hand"
    }

    /// The state in words, with its times and its last error.
    static func state(_ status: SyncDaemonStatus) -> String {
        let error = status.lastError.map { " (" + TerminalText.singleLine($0) + ")" } ?? ""
        let detail = status.detail.map { ": " + TerminalText.singleLine($0) } ?? ""
        switch status.state {
        case .sending: return "sending since \(time(status.since))"
        case .idle: return "idle" + (status.until.map { ", next pass by \(time($0)) or on a change" } ?? "")
        case .offline:
            return "offline since \(time(status.since))\(error); trying again "
                + (status.until.map { "by \(time($0)) or " } ?? "") + "on a network change"
        case .backingOff:
            return "backing off until \(status.until.map(time) ?? "the next change")\(error)"
        case .waitingForLogin: return "waiting for a login since \(time(status.since))\(detail)"
        case .waiting: return "waiting since \(time(status.since))\(detail)"
        }
    }

    static func time(_ moment: Timestamp) -> String { String(moment.iso8601.prefix(19)) + "Z" }
}
