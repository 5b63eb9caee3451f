import Dispatch
import Foundation

/// Runs `body` on `count` threads of their own at once and returns when all
/// have finished.
///
/// Not `DispatchQueue.concurrentPerform`: it runs no more iterations at a
/// time than there are cores, and these workers mostly wait on the network,
/// so eight requests in flight on a two-core machine need eight threads.
func onThreads(_ count: Int, _ body: @escaping @Sendable () -> Void) {
    let finished = DispatchSemaphore(value: 0)
    for index in 0..<count {
        let thread = Thread {
            body()
            finished.signal()
        }
        thread.name = "jqc.sync.worker.\(index)"
        thread.start()
    }
    for _ in 0..<count { finished.wait() }
}
