/// A value reached only while its `PosixLock` is held, for state that a
/// thread must wait on (`Synchronization.Mutex` has no condition to wait on).
///
/// `@unchecked Sendable` because the compiler cannot see a lock: `value` is
/// private and read or written only inside `withLock`, between `lock()` and
/// `unlock()` of the condition this object owns, so no two threads reach it
/// at once. Every `withLock` wakes all waiters when it ends, so a waiter sees
/// each change.
public final class ConditionLocked<Value>: @unchecked Sendable {
    private let condition = PosixLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&value)
    }

    /// Waits until `ready` holds of the value, then runs `body` with it, all
    /// under the lock.
    public func withLock<R, E: Error>(when ready: (Value) -> Bool, _ body: (inout Value) throws(E) -> R) throws(E) -> R
    {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        while !ready(value) { condition.wait() }
        return try body(&value)
    }
}
