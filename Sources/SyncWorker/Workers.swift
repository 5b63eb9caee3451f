import Dispatch
import FoundationEssentials
import LedgerStore
import Synchronization

/// Runs `body` on `count` threads of their own at once and returns when all
/// have finished; meanwhile the calling thread hands what they queue in
/// `told` to `deliver`, in the order queued, as it arrives. So `deliver`
/// (a terminal's progress line) never runs on a worker and need not be
/// `Sendable`.
///
/// Not `DispatchQueue.concurrentPerform`: it runs no more iterations at a
/// time than there are cores, and these workers mostly wait on the network,
/// so eight requests in flight on a two-core machine need eight threads.
///
/// When the system gives fewer threads than asked (`pthread_create`
/// fails), the ones started do the work (`body` takes its items from one
/// queue), or, with none, this thread does it before it delivers.
func onThreads(
    _ count: Int, delivering told: ProgressQueue, to deliver: (SyncProgress) -> Void,
    threads: DetachedThread.Starter = DetachedThread.start, _ body: @escaping @Sendable () -> Void
) {
    told.start(count)
    for index in 0..<count {
        do throws(ThreadStartFailure) {
            try threads("jqc.sync.worker.\(index)") {
                body()
                told.finishOne()
            }
        } catch {
            for _ in index..<count { told.finishOne() }
            if index == 0 { body() }
            break
        }
    }
    var running = count > 0
    while running {
        let news = told.next()
        news.steps.forEach(deliver)
        running = news.running
    }
}

/// The steps of progress a wave's workers decided, queued for the thread
/// that waits for them (`onThreads`), with how many workers still run.
final class ProgressQueue: Sendable {
    private let state = Mutex((steps: [SyncProgress](), running: 0))
    /// Signalled at each post and each worker's end: the waiting thread looks again.
    private let changed = DispatchSemaphore(value: 0)

    init() {}

    /// `count` workers begin.
    func start(_ count: Int) { state.withLock { $0.running += count } }

    /// A worker ended.
    func finishOne() {
        state.withLock { $0.running -= 1 }
        changed.signal()
    }

    /// Queues `steps` (by one worker at a time, in the order decided).
    func post(_ steps: [SyncProgress]) {
        guard !steps.isEmpty else { return }
        state.withLock { $0.steps += steps }
        changed.signal()
    }

    /// Waits for a post or a worker's end; answers the steps queued since
    /// the last call and whether any worker still runs.
    func next() -> (steps: [SyncProgress], running: Bool) {
        changed.wait()
        return state.withLock { state in
            defer { state.steps = [] }
            return (state.steps, state.running > 0)
        }
    }

    /// The steps queued since the last call, without waiting.
    func take() -> [SyncProgress] {
        state.withLock { state in
            defer { state.steps = [] }
            return state.steps
        }
    }
}
