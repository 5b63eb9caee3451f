import InspectionDomain
import LedgerCore
import LedgerTestSupport
import SyncWorker
import Testing

/// The backoff: base 2 s, doubling, capped at 5 minutes, ±20%, retried for as long as it takes.
@Suite struct RetryPolicyTests {
    static let nominal: [(failures: Int, seconds: Double)] = [
        (1, 2), (2, 4), (3, 8), (4, 16), (5, 32), (8, 256), (9, 300), (30, 300),
    ]

    @Test(arguments: nominal)
    func delayDoublesUpToTheCap(failures: Int, seconds: Double) {
        #expect(RetryPolicy.standard.delay(afterFailure: failures, unit: 0.5) == seconds)
    }

    @Test(arguments: [1, 3, 9])
    func jitterStaysWithinTwentyPercent(failures: Int) {
        let policy = RetryPolicy.standard
        let nominal = policy.delay(afterFailure: failures, unit: 0.5)
        #expect(abs(policy.delay(afterFailure: failures, unit: 0) - nominal * 0.8) < 1e-9)
        #expect(abs(policy.delay(afterFailure: failures, unit: 0.999_999_999) - nominal * 1.2) < 1e-6)
        var random = SeededRandom(seed: 42)
        for _ in 0..<200 {
            let delay = policy.delay(afterFailure: failures, unit: Double.random(in: 0..<1, using: &random))
            #expect(delay >= nominal * 0.8 && delay <= nominal * 1.2)
        }
    }

    @Test func aServersRetryAfterIsHonouredWhenLonger() {
        #expect(RetryPolicy.standard.delay(afterFailure: 1, unit: 0.5, retryAfter: 30) == 30)
        #expect(RetryPolicy.standard.delay(afterFailure: 3, unit: 0.5, retryAfter: 1) == 8)
    }

    @Test(arguments: [5, 9, 40, 1000])
    func aLongOutageKeepsRetryingEveryFiveMinutesAtMost(failures: Int) {
        let delay = RetryPolicy.standard.delay(afterFailure: failures, unit: 0.5)
        #expect(delay > 0 && delay <= 300)
        // Stalled from the fifth failure on, and never given up by count.
        #expect(SyncFailure(attempts: failures).isStalled)
        #expect(!SyncFailure(attempts: 4).isStalled)
    }

    @Test func aScaleOfZeroMakesEveryRetryDueAtOnce() {
        var policy = RetryPolicy.standard
        policy.scale = 0
        let now = Timestamp(microsecondsSinceEpoch: 1_000_000)
        #expect(policy.nextAttempt(afterFailure: 4, at: now, unit: 0.9, retryAfter: 60) == now)
    }

    @Test func theNextAttemptIsNowPlusTheDelay() {
        let now = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)
        let next = RetryPolicy.standard.nextAttempt(afterFailure: 2, at: now, unit: 0.5)
        #expect(next.microsecondsSinceEpoch - now.microsecondsSinceEpoch == 4_000_000)
    }
}

/// Which next attempts are due: the ones whose time has come, and the ones
/// set further ahead than any wait the policy sets (a wrong clock set them).
@Suite struct RetryDueTests {
    static let now = Timestamp(microsecondsSinceEpoch: 1_795_000_000_000_000)
    static let cases: [(seconds: Int64, due: Bool)] = [
        (-10, true), (0, true), (2, false), (300, false), (3600, false), (3602, true), (86_400, true),
        (31_536_000, true),
    ]

    @Test(arguments: cases)
    func dueWhenTheTimeHasComeOrTheTimeIsImpossible(seconds: Int64, due: Bool) {
        let next = Timestamp(microsecondsSinceEpoch: Self.now.microsecondsSinceEpoch + seconds * 1_000_000)
        #expect(RetryPolicy.standard.isDue(nextAttempt: next, at: Self.now) == due)
    }

    @Test func theLongestRetryAfterHonouredIsAnHour() {
        #expect(RetryPolicy.standard.delay(afterFailure: 1, unit: 0.5, retryAfter: 31_536_000) == 3600)
        #expect(RetryPolicy.standard.longestDelay == 3600)
    }
}
