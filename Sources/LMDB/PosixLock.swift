import Glibc

/// A pthread mutex, locked and unlocked by hand, with a condition to wait on.
///
/// `Synchronization.Mutex` has no condition and only a closure's shape; the
/// fault slots are locked across calls that return early (`StoreFaults`) and
/// the environment's state is waited on (`ConditionLocked`). Foundation's
/// `NSLock` and `NSCondition` are these same two pthread objects, but the
/// jqc binary links only FoundationEssentials, which has neither.
///
/// `@unchecked Sendable`: the pthread objects are what makes sharing safe;
/// they live at fixed addresses for the object's whole life.
final class PosixLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        let madeMutex = pthread_mutex_init(mutex, nil)
        let madeCondition = pthread_cond_init(condition, nil)
        precondition(madeMutex == 0 && madeCondition == 0, "pthread mutex/condition init failed")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() {
        let rc = pthread_mutex_lock(mutex)
        assert(rc == 0, "pthread_mutex_lock: \(rc)")
    }

    func unlock() {
        let rc = pthread_mutex_unlock(mutex)
        assert(rc == 0, "pthread_mutex_unlock: \(rc)")
    }

    /// Waits for a `broadcast()`; the caller holds the lock, and holds it again on return.
    func wait() {
        let rc = pthread_cond_wait(condition, mutex)
        assert(rc == 0, "pthread_cond_wait: \(rc)")
    }

    /// Wakes every waiter.
    func broadcast() {
        let rc = pthread_cond_broadcast(condition)
        assert(rc == 0, "pthread_cond_broadcast: \(rc)")
    }
}
