import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// `sync-daemon.json` (`SyncDaemonStatus`): written and read back whole, a
/// file naming a process that is gone (or a pid now used by another
/// process) read as not running, and a file that is not one said so.
@Suite struct SyncDaemonStatusTests {
    static let now = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)

    static func sample(state: SyncDaemonStatus.State) -> SyncDaemonStatus {
        var status = SyncDaemonStatus.thisProcess(at: now)
        status.state = state
        status.until = Timestamp(microsecondsSinceEpoch: now.microsecondsSinceEpoch + 5_000_000)
        status.lastError = state == .offline ? "Could not connect to the server" : nil
        status.detail = state == .waitingForLogin ? "log in again with 'jqc login'" : nil
        status.passesStarted = 3
        status.lastPass = .init(
            number: 3, startedAt: now, finishedAt: now, outcome: "sent 1 inspection", exitStatus: 0,
            lines: ["Sent 1"], warnings: ["a warning"], failure: nil, document: .object(["sent": .integer(1)]))
        return status
    }

    @Test(arguments: SyncDaemonStatus.State.allCases)
    func aStatusIsReadBackWholeAndThisProcessIsRunning(state: SyncDaemonStatus.State) throws {
        let directory = TemporaryDirectory(prefix: "daemon-status")
        let home = LedgerDirectory(path: directory.path)
        let status = Self.sample(state: state)
        try status.write(to: home)
        #expect(SyncDaemonStatus.read(home) == .running(status))
    }

    @Test(arguments: [
        ("a pid no process has", Int32(0x3FFF_FFF0), nil as String?),
        ("this pid with another start time (a reused pid)", getpid(), "1"),
    ])
    func aFileNamingAProcessThatIsGoneIsNotRunning(what: String, pid: Int32, start: String?) throws {
        let directory = TemporaryDirectory(prefix: "daemon-status")
        let home = LedgerDirectory(path: directory.path)
        var status = Self.sample(state: .idle)
        status.pid = pid
        if let start { status.processStart = start }
        try status.write(to: home)
        #expect(SyncDaemonStatus.read(home) == .notRunning(status), "\(what)")
        let json = SyncDaemonStatus.statusJSON(SyncDaemonStatus.read(home))
        #expect(json["running"]?.boolValue == false)
        #expect(json["state"]?.isNull == true)
        #expect(json["last_seen_at"]?.stringValue == Self.now.iso8601)
    }

    @Test(arguments: ["", "{}", "[1]", #"{"format":"jqc-sync-daemon/1","pid":"one"}"#])
    func aFileThatIsNoStatusIsSaidToBeUnreadable(text: String) throws {
        let directory = TemporaryDirectory(prefix: "daemon-status")
        let home = LedgerDirectory(path: directory.path)
        try Data(text.utf8).write(to: URL(fileURLWithPath: home.syncDaemonStatusPath))
        guard case .unreadable(let why)? = SyncDaemonStatus.read(home) else {
            Issue.record("read as a status: \(text)")
            return
        }
        #expect(why.contains("sync-daemon.json is not a background sync's status file"), "\(why)")
        #expect(SyncDaemonStatus.read(LedgerDirectory(path: directory.appending("none"))) == nil)
    }
}
