import Dispatch
import FoundationEssentials
import Glibc
import HTTPCore
import Synchronization

/// Turns SIGINT and SIGTERM into a `StopRequest` while a command talks to a
/// server: the worker checks it between items, and the transport polls it
/// during a transfer (ending a stalled request within about a second), so
/// the process is never ended by the signal's default action mid-write.
///
/// One per process at a time, installed by the first `watching()` (a
/// command's first HTTP client) and removed by `release()` when the command
/// ends (`JQC.main`), which gives a caller running `jqc` in-process its own
/// handling back.
final class StopSignals: Sendable {
    /// What the signals raise; the transport and the sync worker poll it.
    let request = StopRequest()
    private let wake = DispatchSemaphore(value: 0)
    /// The dispatch sources (not Sendable) and the handlers in place before,
    /// as `signal(2)` returned them; touched in `init` and `deinit` only.
    private let installed: Mutex<Installed>

    private struct Installed {
        var sources: [any DispatchSourceSignal] = []
        var previous: [(Int32, sighandler_t?)] = []
    }

    private static let current = Mutex<StopSignals?>(nil)

    /// The watcher of this command, installed on first use.
    static func watching() -> StopSignals {
        current.withLock { current in
            if let watcher = current { return watcher }
            let watcher = StopSignals()
            current = watcher
            return watcher
        }
    }

    /// Removes the watcher (restoring the signals' handling), answering what
    /// a signal did while it watched: nil, or the message the command ends
    /// with ("stopped by SIGTERM; …") when it cut a transfer short or the
    /// command failed after it.
    static func release(commandFailed: Bool) -> String? {
        let watcher = current.withLock { current in
            defer { current = nil }
            return current
        }
        guard let watcher, let reason = watcher.request.reason,
            commandFailed || watcher.request.stoppedATransfer
        else { return nil }
        return "stopped by \(reason); nothing half-done was recorded. Run the command again to finish."
    }

    private init() {
        var made = Installed()
        for number in [SIGINT, SIGTERM] {
            // The default action would kill the process at once; a dispatch
            // source sees the signal only once that action is ignored.
            made.previous.append((number, signal(number, SIG_IGN)))
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            made.sources.append(source)
        }
        installed = Mutex(made)
        installed.withLock { installed in
            for (source, name) in zip(installed.sources, ["SIGINT", "SIGTERM"]) {
                source.setEventHandler { [weak self] in self?.raise(name) }
                source.resume()
            }
        }
    }

    deinit {
        installed.withLock { installed in
            for source in installed.sources { source.cancel() }
            for (number, handler) in installed.previous { signal(number, handler) }
        }
    }

    var stopRequested: Bool { request.isRaised }

    private func raise(_ name: String) {
        request.raise(name)
        wake.signal()
    }

    /// Ends a `wait` under way (or the next one) early without a stop: the
    /// background sync's request to sync now (`SyncNowSignal`).
    func wakeUp() { wake.signal() }

    /// Waits up to `seconds`; answers true when a stop was requested.
    func wait(seconds: Double) -> Bool {
        if stopRequested { return true }
        _ = wake.wait(timeout: .now() + .milliseconds(Int(seconds * 1000)))
        return stopRequested
    }
}
