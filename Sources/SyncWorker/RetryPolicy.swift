import InspectionDomain
import LedgerCore

/// When a transient failure is tried again.
///
/// The delay before attempt `n + 1` (after `n` failures) is
/// `min(cap, base × factor^(n-1))`, spread by ±`jitter` so that devices that
/// failed together do not all come back at the same moment; a server's
/// `Retry-After` is honoured when it asks for longer (up to an hour). A next
/// attempt set further ahead than any such wait is due at once (`isDue`):
/// the clock was wrong when it was set. A transient failure is
/// retried for as long as it lasts: an outage of minutes or hours must never
/// need a person. After `SyncFailure.stalledAfterAttempts` failures the item
/// is shown as stalled (with its last error and next try), still retried
/// every `cap` seconds; only a refusal or a local fault fails it for good.
public struct RetryPolicy: Sendable, Equatable {
    /// The delay after the first failure, in seconds.
    public var base: Double
    public var factor: Double
    /// The longest delay, in seconds.
    public var cap: Double
    /// The share (0...1) by which a delay may be shortened or lengthened at random.
    public var jitter: Double
    /// Multiplies every delay. 1 in use; tests set 0 (every retry due at once)
    /// through the test-only environment variable `JQC_SYNC_BACKOFF_SCALE`.
    public var scale: Double

    public init(
        base: Double = 2, factor: Double = 2, cap: Double = 300, jitter: Double = 0.2, scale: Double = 1
    ) {
        self.base = base
        self.factor = factor
        self.cap = cap
        self.jitter = jitter
        self.scale = scale
    }

    /// Base 2 s, doubling, capped at 5 minutes, ±20%, retried for as long as it takes.
    public static let standard = RetryPolicy()

    /// The delay in seconds after the `failures`th failure (1 for the first).
    ///
    /// - Parameters:
    ///   - unit: a random number in 0..<1, which places the delay within the jitter.
    ///   - retryAfter: the server's `Retry-After`, in seconds, if it sent one.
    public func delay(afterFailure failures: Int, unit: Double, retryAfter: Int? = nil) -> Double {
        let exponent = Double(max(0, failures - 1))
        let nominal = min(cap, base * Self.power(factor, exponent))
        let spread = nominal * (1 + jitter * (2 * min(max(unit, 0), 1) - 1))
        let wanted = max(spread, Double(min(retryAfter ?? 0, Self.longestRetryAfter)))
        return max(0, wanted * scale)
    }

    /// The longest `Retry-After` honoured, in seconds: a server asking for
    /// more (a year) is waited for this long, so no inspection is parked
    /// because of one answer.
    public static let longestRetryAfter = 3600

    /// The longest wait `delay` can ask for, in seconds: the cap with its
    /// jitter, or the longest `Retry-After` honoured.
    public var longestDelay: Double {
        max(cap * (1 + jitter), Double(Self.longestRetryAfter)) * max(scale, 1)
    }

    /// Whether an item whose next attempt was set for `next` may be sent at
    /// `now`: when that moment has come, and also when it lies further ahead
    /// than any wait this policy sets. Such a time was computed while the
    /// clock was wrong (a year ahead); keeping it would park the evidence
    /// for a year after the clock is put right.
    public func isDue(nextAttempt next: Timestamp, at now: Timestamp) -> Bool {
        let ahead = Double(next.microsecondsSinceEpoch) - Double(now.microsecondsSinceEpoch)
        return ahead <= 0 || ahead > (longestDelay + 1) * 1_000_000
    }

    /// When the next attempt is due after the `failures`th failure at `now`.
    public func nextAttempt(
        afterFailure failures: Int, at now: Timestamp, unit: Double, retryAfter: Int? = nil
    ) -> Timestamp {
        let seconds = delay(afterFailure: failures, unit: unit, retryAfter: retryAfter)
        return Timestamp(microsecondsSinceEpoch: now.microsecondsSinceEpoch + Int64((seconds * 1_000_000).rounded()))
    }

    /// `x^y` for the small whole exponents used here, without Foundation's `pow`.
    static func power(_ x: Double, _ y: Double) -> Double {
        var result = 1.0
        var remaining = Int(min(y, 64))
        while remaining > 0 {
            result *= x
            remaining -= 1
        }
        return result
    }
}

extension RetryPolicy {
    /// A `JQC_SYNC_BACKOFF_SCALE` that is no number ≥ 0.
    public struct ScaleRefusal: Error, Equatable, CustomStringConvertible {
        public var text: String
        public var description: String {
            "JQC_SYNC_BACKOFF_SCALE is '\(text)', not a number ≥ 0. It is for tests only; unset it."
        }
    }

    /// The standard policy; `JQC_SYNC_BACKOFF_SCALE` in `environment` (tests only) multiplies every delay.
    public static func standard(_ environment: [String: String]) throws(ScaleRefusal) -> RetryPolicy {
        var policy = RetryPolicy.standard
        if let text = environment["JQC_SYNC_BACKOFF_SCALE"] {
            guard let scale = Double(text), scale >= 0, scale.isFinite else { throw ScaleRefusal(text: text) }
            policy.scale = scale
        }
        return policy
    }
}
