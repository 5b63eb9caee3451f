import FoundationEssentials
import Glibc
import InspectionStore
import SyncWorker

/// `jqc sync` (and `jqc sync retry`) while a background sync holds the sync
/// lock: instead of refusing, it asks the daemon to sync now and waits for
/// that pass's outcome, which it prints as its own.
///
/// The request is a signal (`SIGUSR1`) to the pid of `sync-daemon.json`; the
/// daemon cuts its back-off, runs a pass at once (after the one under way,
/// if any) and writes the pass's outcome into the status file. The asker
/// notes how many passes had started before it signalled and waits for a
/// finished pass numbered above that: a pass that started after the asker
/// read the count reads the outbox after everything recorded before the
/// asker ran. The waits are bounded: the daemon must be seen starting the
/// pass (or busy with one) within `answerWithin` seconds, and finish within
/// `finishWithin`.
public enum SyncNowRequest {
    /// The signal that asks a daemon to sync now.
    public static let signal = SIGUSR1

    /// Why no answer came.
    public enum Failure: Error, CustomStringConvertible {
        /// The daemon did not start a pass (nor was busy with one) in time.
        case noAnswer(pid: Int32, seconds: Int)
        /// The daemon ended before answering.
        case stopped(pid: Int32)
        /// The pass did not finish in time.
        case unfinished(pid: Int32, seconds: Int)
        /// The signal could not be sent.
        case notSignalled(pid: Int32, why: String)

        public var description: String {
            switch self {
            case .noAnswer(let pid, let seconds):
                "The background sync (pid \(pid)) holds this ledger's sync lock but did not answer a request to sync "
                    + "now within \(seconds) s. Its journal says what it is doing ('journalctl --user -u "
                    + "\(SyncServiceUnit.unitName)', or the terminal it runs in); stop it and run 'jqc sync' again to "
                    + "sync yourself."
            case .stopped(let pid):
                "The background sync (pid \(pid)) stopped before it finished the pass it was asked for. Run 'jqc "
                    + "sync' again: with no background sync running it syncs by itself."
            case .unfinished(let pid, let seconds):
                "The background sync (pid \(pid)) did not finish the pass it was asked for within \(seconds) s; it "
                    + "goes on by itself. 'jqc status' shows what it is doing and what is left."
            case .notSignalled(let pid, let why):
                "Could not ask the background sync (pid \(pid)) to sync now (\(why)). 'jqc status' shows what it is "
                    + "doing; it sends the outbox by itself."
            }
        }
    }

    /// Asks the daemon whose status file is in `directory` for a pass and
    /// answers that pass's outcome.
    public static func ask(
        _ directory: LedgerDirectory, answerWithin: Double = 10, finishWithin: Double = 600
    ) throws(Failure) -> SyncDaemonStatus.Pass? {
        guard case .running(let before)? = SyncDaemonStatus.read(directory) else { return nil }
        let asked = before.passesStarted
        guard kill(before.pid, signal) == 0 else {
            throw .notSignalled(pid: before.pid, why: String(cString: strerror(errno)))
        }
        let start = ContinuousClock.now
        var answering = false
        while true {
            let waited = BackgroundSync.seconds(ContinuousClock.now - start)
            guard case .running(let status)? = SyncDaemonStatus.read(directory), status.pid == before.pid else {
                throw .stopped(pid: before.pid)
            }
            if let pass = status.lastPass, pass.number > asked { return pass }
            answering = answering || status.passesStarted > asked || status.state == .sending
            if !answering, waited > answerWithin { throw .noAnswer(pid: before.pid, seconds: Int(answerWithin)) }
            if waited > finishWithin { throw .unfinished(pid: before.pid, seconds: Int(finishWithin)) }
            usleep(50_000)
        }
    }
}
