import ArgumentParsing
import CurlTransport
import Dispatch
import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker
import Synchronization

/// Turns SIGINT and SIGTERM into a request to stop that the worker checks
/// between items, so the item in flight is finished and recorded first.
final class StopSignals: Sendable {
    private let requested = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)
    /// The dispatch sources (not Sendable) and the handlers in place before,
    /// as `signal(2)` returned them; touched in `init` and `deinit` only.
    private let installed: Mutex<Installed>

    private struct Installed {
        var sources: [any DispatchSourceSignal] = []
        var previous: [(Int32, sighandler_t?)] = []
    }

    init() {
        var made = Installed()
        for number in [SIGINT, SIGTERM] {
            // The default action would kill the process at once; a dispatch
            // source sees the signal only once that action is ignored.
            made.previous.append((number, signal(number, SIG_IGN)))
            made.sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        installed = Mutex(made)
        installed.withLock { installed in
            for source in installed.sources {
                source.setEventHandler { [weak self] in self?.request() }
                source.resume()
            }
        }
    }

    deinit {
        installed.withLock { installed in
            for source in installed.sources { source.cancel() }
            // A caller running `jqc` in-process gets its own handling back.
            for (number, handler) in installed.previous { signal(number, handler) }
        }
    }

    var stopRequested: Bool {
        requested.withLock { $0 }
    }

    private func request() {
        requested.withLock { $0 = true }
        wake.signal()
    }

    /// Waits up to `seconds`; answers true when a stop was requested.
    func wait(seconds: Double) -> Bool {
        if stopRequested { return true }
        _ = wake.wait(timeout: .now() + .milliseconds(Int(seconds * 1000)))
        return stopRequested
    }
}
