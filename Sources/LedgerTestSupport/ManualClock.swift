import Foundation
import LedgerCore

/// A clock a test sets and advances, so recorded times are exact and known.
public final class ManualClock: LedgerClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Timestamp

    public init(_ start: Timestamp = Timestamp(microsecondsSinceEpoch: 1_795_000_000_123_456)) {
        current = start
    }

    public func now() -> Timestamp {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Moves the clock forward by `microseconds`.
    public func advance(microseconds: Int64) {
        lock.lock()
        current.microsecondsSinceEpoch += microseconds
        lock.unlock()
    }
}
