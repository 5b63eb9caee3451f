import Synchronization

/// A value that `@Sendable` closures in a test share (a notice collected, a
/// flag set by another thread), owned by its `Mutex`. A class, so a closure
/// can capture it (a `Mutex` itself cannot be captured by an escaping one).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, under the lock.
    public func withLock<R: Sendable, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E) -> R {
        try mutex.withLock(body)
    }

    /// A copy of the value as it is now.
    public var value: Value { mutex.withLock { $0 } }
}

extension Locked where Value == Int {
    /// The count so far, then one more: the number of calls before this one
    /// (a stand-in thread starter that refuses after so many, say).
    public func next() -> Int {
        mutex.withLock { count in
            defer { count += 1 }
            return count
        }
    }
}
