import LedgerCore
import Synchronization

/// A clock a test sets and advances, so recorded times are exact and known.
public final class ManualClock: LedgerClock, Sendable {
    private let current: Mutex<Timestamp>

    public init(_ start: Timestamp = Timestamp(microsecondsSinceEpoch: 1_795_000_000_123_456)) {
        current = Mutex(start)
    }

    public func now() -> Timestamp {
        current.withLock { $0 }
    }

    /// Moves the clock forward by `microseconds`.
    public func advance(microseconds: Int64) {
        current.withLock { $0.microsecondsSinceEpoch += microseconds }
    }
}
