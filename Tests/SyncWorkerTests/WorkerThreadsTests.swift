import Foundation
import LedgerStore
import LedgerTestSupport
import Synchronization
import Testing

@testable import SyncWorker

/// A sync wave's workers run on threads of their own; when the system gives
/// fewer than asked, the ones it gave (or the calling thread) still send
/// every item, and the wave still ends.
@Suite struct WorkerThreadsTests {
    final class Items: Sendable {
        private let state = Mutex((next: 0, done: [Int]()))
        let count: Int
        init(_ count: Int) { self.count = count }

        /// A worker's loop: takes items until none is left.
        func work() {
            while let item = state.withLock({ state -> Int? in
                guard state.next < count else { return nil }
                defer { state.next += 1 }
                return state.next
            }) {
                state.withLock { $0.done.append(item) }
            }
        }

        var done: [Int] { state.withLock { $0.done } }
    }

    /// Threads given before the system refuses one: all, some, or none.
    @Test(arguments: [8, 3, 1, 0])
    func everyItemIsSentWhateverThreadsTheSystemGives(given: Int) {
        let items = Items(200)
        let starts = Locked(0)
        let threads: DetachedThread.Starter = { name, body throws(ThreadStartFailure) in
            guard starts.next() < given else { throw ThreadStartFailure(name: name, code: EAGAIN) }
            try DetachedThread.start(named: name, body)
        }
        let told = ProgressQueue()
        onThreads(8, delivering: told, to: { _ in }, threads: threads) { items.work() }
        #expect(items.done.sorted() == Array(0..<200))
    }
}
