import FoundationEssentials
import Glibc
import LedgerCore

/// The machine's real-time clock, read with microsecond precision.
public struct SystemClock: LedgerClock {
    public init() {}

    public func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(microsecondsSinceEpoch: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }
}
