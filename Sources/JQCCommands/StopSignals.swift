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

/// Turns SIGINT and SIGTERM into a request to stop that the worker checks
/// between items, so the item in flight is finished and recorded first.
final class StopSignals: @unchecked Sendable {
    /// `@unchecked Sendable` rests on this: `requested` is only touched under `lock`.
    private let lock = NSLock()
    private var requested = false
    private let wake = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceSignal] = []
    private var previous: [(Int32, sighandler_t?)] = []

    init() {
        for number in [SIGINT, SIGTERM] {
            // The default action would kill the process at once; a dispatch
            // source sees the signal only once that action is ignored.
            previous.append((number, signal(number, SIG_IGN)))
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.request() }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
        // A caller running `jqc` in-process gets its own handling back.
        for (number, handler) in previous { signal(number, handler) }
    }

    var stopRequested: Bool {
        lock.lock()
        defer { lock.unlock() }
        return requested
    }

    private func request() {
        lock.lock()
        requested = true
        lock.unlock()
        wake.signal()
    }

    /// Waits up to `seconds`; answers true when a stop was requested.
    func wait(seconds: Double) -> Bool {
        if stopRequested { return true }
        _ = wake.wait(timeout: .now() + .milliseconds(Int(seconds * 1000)))
        return stopRequested
    }
}
