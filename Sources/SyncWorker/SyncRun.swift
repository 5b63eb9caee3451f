import Dispatch
import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import Synchronization

/// One sync of a ledger's outbox to the server: the sync rules of
/// `docs/domain.md`, as implemented.
///
/// **Order.** The outbox view is ordered photos → inspections → issues (each
/// by submit time); a run sends in that order, then pulls reference data.
/// - An inspection is sent only when every one of its photos is settled:
///   uploaded, or failed for good (a refusal or a local fault). While any of
///   them can still be uploaded it waits, however long an outage lasts, and
///   says so ("waiting for photo 3d15a2b0: HTTP 503: …, next try …"). A photo
///   failed for good is sent as `""`, and every view then says "synced
///   without photo X: reason", never plain "synced". A photo whose record
///   already went out without it is not uploaded afterwards (nothing on the
///   server would point to it): it fails with a message saying so.
///   A re-inspection also waits for its parent's server id; if the parent
///   failed for good, it fails with that reason.
/// - An issue is sent only once its inspection has a server id and its photo
///   (if any) is settled, by the same rule. If the inspection failed for
///   good, the issue is given up with that reason instead of becoming an
///   orphan on the server.
///
/// **Outcomes are events.** Each outcome is appended through
/// `InspectionLedger.append` in one short write transaction of its own
/// (`sync.photo_uploaded`, `sync.inspection_accepted`, `sync.issue_accepted`,
/// `sync.attempt_failed`, `sync.gave_up`). The network thread never opens a
/// write transaction: an `OutcomeRecorder` appends each outcome, in order,
/// while the next request is in flight, so inspectors keep recording during
/// a sync and the disk's latency overlaps the network's.
///
/// **Failures.**
/// - Transient (timeout, lost connection, 5xx, 408, 429, an unreadable
///   answer): `sync.attempt_failed` with `will_retry` and `next_attempt_at`
///   from the `RetryPolicy` (backoff with jitter up to 5 minutes). Never
///   given up by count: after `SyncFailure.stalledAfterAttempts` failures
///   the item is shown as *stalled*, and retried on. Items whose next attempt
///   is in the future are skipped. After a timeout the run stops: the others
///   would only wait for the same timeout.
/// - No connection at all (offline, DNS, refused): nothing was sent, so the
///   run stops and records nothing. Inspectors are offline for long
///   stretches; being offline is not an attempt.
/// - A refusal (a 4xx other than 401, 408 and 429; or `ok: false` with an
///   `error` at any status): given up at once with the server's message
///   (the HTTP status is kept in the failure).
/// - A 401: the session refreshes once and the request is sent again. If the
///   refresh is refused the run stops, asks for `jqc login`, and records
///   nothing: no attempt is counted against any item.
/// - A transport refusal (TLS, a redirect, a bad URL) stops the run without
///   counting an attempt: it is the configuration's fault, not the item's.
/// - Local faults (a photo file missing from the store, or not matching its
///   hash) give the item up with a message saying what to restore.
///
/// **Exactly once.** Every write carries the key of the event that caused it
/// (`IdempotencyKeys`), so a retry after a lost response, a crash or a
/// `kill -9` is answered with the first response by a server that honours
/// the key. A server without idempotency (the reference backend) is covered
/// for inspections: an inspection whose send may have been applied (its last
/// recorded failure had no complete answer or was a 502/504, or the
/// `InFlightJournal` shows a send cut short by a crash) is
/// looked up in `GET /inspections` (same `client_id`, else what the summary
/// carries: `InspectionMatch`) before it is sent again, and the id found is
/// adopted; several alike records adopt nothing and send nothing (a failed
/// attempt naming them, `APIError.noUniqueMatch`). A copy another device may
/// have sent (`InspectionState.mayBeSentElsewhere`) is looked up before its
/// first photo upload (`SyncRun+Photos`): a record found settles it and the
/// field photos it names, so the submitter's photos are not uploaded twice;
/// none found, and the inspection goes without a second look-up (one per run). Issues cannot be looked up: no endpoint of the
/// reference backend returns issues, so exactly-once for an issue whose
/// answer was lost after the server committed it is impossible there. The
/// window is kept small (the journal notes an issue only right before its
/// request, so a run stopped earlier never makes it look sent), and an
/// issue sent again after a lost answer, whose answer is no replay
/// (`APIClient.Created.replayed`), is accepted with
/// `sentAgainAfterLostAnswer`: `show`, `audit`, `inspections --json` and the
/// run's report then say "issue X was sent again after its answer was lost;
/// this server offers no way to check, so it may hold it twice", never
/// silently. A server that honours `Idempotency-Key` answers such a send
/// with `Idempotent-Replayed: true`, and nothing is flagged.
///
/// **Passes.** After going through the outbox, the run goes through it again
/// while the previous pass achieved something and some retry has fallen due
/// (with a scale of 0 in tests, at once), up to `maximumPasses`, so one run
/// carries items as far as backoff allows; `--watch` comes back for the rest.
///
/// **How it is built.** This file schedules: passes, waves, and the workers
/// that take the wave's items in order. Everything the workers share is one
/// `SyncBook` behind one `Mutex`, which guards memory only: a worker holds
/// it while it decides, never while a request is on the network, a file is
/// written or the ledger is read. A wave's states and keys are read in one
/// snapshot before it (`readAhead`); the journal's notes, the outcomes for
/// the recorder and the progress a sender decided are handed off once the
/// lock is let go, in the order decided (`handOff`). Each kind has its
/// sender (`SyncRun+Photos`, `+Inspections`, `+Issues`): it decides under the
/// lock and names the request it wants as a `SyncCall`; the worker makes the
/// call with the lock let go and hands the `SyncAnswer` back to the sender,
/// under the lock again, to be settled (`SyncRun+Outcomes`).
///
/// One value makes one run: its report covers what that run did.
public final class SyncRun: Sendable {
    let ledger: InspectionLedger
    let session: ServerSession
    let device: UUID
    let clock: any LedgerClock
    let policy: RetryPolicy
    let pullsReferenceData: Bool
    let unitRandom: @Sendable () -> Double
    let shouldStop: @Sendable () -> Bool
    let actor: Actor

    /// Requests in flight at once (`--concurrency`; 1 is one at a time).
    let concurrency: Int
    /// The run's state, shared by its workers (see "How it is built").
    let book = Mutex(SyncBook())
    /// Appends outcomes while the next request is in flight.
    let recorder: OutcomeRecorder
    /// Held by the worker handing off what was decided under `book`'s lock (`handOff`).
    let handing = Mutex(())
    /// Inspections whose creation may have reached the server unseen.
    let journal: InFlightJournal

    /// - Parameters:
    ///   - device: the ledger's device id, recorded in every outcome event.
    ///   - clock: recorded-at times, and what "due" means for retries.
    ///   - random: numbers in 0..<1 that place each delay within the jitter.
    ///   - shouldStop: asked before each item (SIGINT/SIGTERM in `--watch`),
    ///     by whichever worker takes it.
    ///   - concurrency: how many requests may be in flight at once; the
    ///     transport must allow as many (`CurlHTTPClient(connections:)`).
    ///   - journalPath: where the in-flight journal is kept between runs
    ///     (`InFlightJournal`); nil keeps it in memory for this run only.
    public init(
        ledger: InspectionLedger, session: ServerSession, device: UUID, clock: any LedgerClock,
        policy: RetryPolicy = .standard, pullsReferenceData: Bool = true,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        shouldStop: @escaping @Sendable () -> Bool = { false }, journalPath: String? = nil, concurrency: Int = 1
    ) throws {
        self.concurrency = max(1, concurrency)
        self.ledger = ledger
        self.session = session
        self.device = device
        self.clock = clock
        self.policy = policy
        self.pullsReferenceData = pullsReferenceData
        self.unitRandom = random
        self.shouldStop = shouldStop
        let user = session.user
        actor = Actor(id: user.id, name: user.displayName, verified: true)
        recorder = OutcomeRecorder(ledger: ledger)
        journal = try InFlightJournal(path: journalPath)
    }

    /// Sends what is due, records every outcome, pulls reference data,
    /// sends the device's checkpoint to `witness` when one is given
    /// (`CheckpointWitness`), and reports. `progress` is told about each
    /// item as it goes, always on the thread that called `run` (the workers
    /// queue their steps for it: `ProgressQueue`), so it need not be
    /// `Sendable`. Throws only when the ledger itself cannot be read or written.
    public func run(witness: CheckpointWitness? = nil, progress: ((SyncProgress) -> Void)? = nil) throws
        -> SyncReport
    {
        book.withLock { $0.tellsProgress = progress != nil }
        do {
            return try runPasses(witness: witness, progress: progress ?? { _ in })
        } catch {
            // Whatever failed, no append may still be running once `run` returns.
            recorder.waitUntilIdle()
            throw error
        }
    }

    private var stop: SyncReport.Stop? { book.withLock { $0.stop } }

    private func runPasses(witness: CheckpointWitness?, progress: (SyncProgress) -> Void) throws -> SyncReport {
        var report = SyncReport()
        // Transient failures are retried for as long as they last, so with
        // a backoff scale of 0 (tests) passes would never end by themselves.
        while report.passes < Self.maximumPasses {
            report.passes += 1
            let progressed = try pass(try ledger.outbox(), progress: progress)
            // The next reads of the ledger must see every outcome of this pass.
            try recorder.drain()
            guard stop == nil, progressed else { break }
            let now = clock.now()
            guard try ledger.outbox().contains(where: { isDue($0, at: now) }) else { break }
        }
        report.stop = stop
        report.sessionRefusedBecause = book.withLock { $0.sessionRefusedBecause }
        if report.stop == nil, pullsReferenceData {
            try pullReferenceData(&report)
        }
        try journal.save()
        if report.stop == nil { try witness?.run(ledger: ledger, session: session, clock: clock) }
        let ended = book.withLock { ($0.outcomes, $0.order, $0.adopted, $0.possiblySentTwice, $0.sentElsewhere) }
        report.finish(outcomes: ended.0, order: ended.1, remaining: try ledger.outbox())
        report.adopted = ended.2
        report.possiblySentTwice = ended.3
        report.sentElsewhere = ended.4
        return report
    }

    // MARK: - One pass over the outbox

    /// Goes through the outbox once, in waves: each wave sends every item
    /// that is ready (up to `concurrency` at a time); the items that waited
    /// for something sent in that wave go in the next. Answers whether
    /// anything was sent or recorded.
    private func pass(_ outbox: [OutboxItem], progress: (SyncProgress) -> Void) throws -> Bool {
        book.withLock { $0.states = [:] }
        let now = clock.now()
        var wave = outbox.enumerated().filter { isDue($0.element, at: now) }.map {
            WaveItem(row: $0.element, position: (index: $0.offset + 1, total: outbox.count))
        }
        var progressed = false
        while !wave.isEmpty {
            let results = try sendAll(wave, progress: progress)
            if results.contains(true) { progressed = true }
            guard stop == nil, results.contains(true) else { break }
            wave = zip(wave, results).filter { !$0.1 }.map(\.0)
        }
        return progressed
    }

    /// Sends the items of one wave, taken in outbox order by `concurrency`
    /// workers on threads of their own, while this thread tells `progress`
    /// what they queue; answers, for each, whether it progressed.
    private func sendAll(_ wave: [WaveItem], progress: (SyncProgress) -> Void) throws -> [Bool] {
        try readAhead(wave)
        let told = ProgressQueue()
        book.withLock { $0.startWave(of: wave.count, telling: told) }
        // The workers share only this run (`Sendable`: its state is `book`,
        // the rest constants) and `told`, where they queue progress for this thread.
        onThreads(min(concurrency, wave.count), delivering: told, to: progress) { [self] in work(wave) }
        // What a worker decided before a failure ended the wave is still recorded.
        try handOff()
        told.take().forEach(progress)
        let ended = book.withLock { $0.wave }
        if let failure = ended.failure { throw failure }
        return ended.results
    }

    /// One worker: takes the wave's items in order until none is left, the
    /// wave failed or the run stops.
    private func work(_ wave: [WaveItem]) {
        while let index = takeNext(of: wave.count) {
            do {
                let progressed = try send(wave[index])
                book.withLock { $0.wave.results[index] = progressed }
            } catch {
                book.withLock { $0.wave.failure = $0.wave.failure ?? error }
            }
        }
    }

    /// The wave's next item for a worker, or nil when the wave is over or the run stops.
    private func takeNext(of count: Int) -> Int? {
        book.withLock { book in
            guard book.wave.next < count, book.wave.failure == nil, book.stop == nil else { return nil }
            if shouldStop() {
                book.stop = .interrupted
                return nil
            }
            defer { book.wave.next += 1 }
            return book.wave.next
        }
    }

    /// Sends one item: its sender decides under the lock, the request it
    /// names goes out with the lock let go, and its answer is settled under
    /// the lock again, until the sender is finished with the item. Answers
    /// whether anything was sent or recorded.
    private func send(_ item: WaveItem) throws -> Bool {
        var step = try book.withLock { book throws -> SendStep in try begin(item, &book) }
        try handOff()
        while case .request(let call) = step {
            let answer = perform(call)
            step = try book.withLock { book throws -> SendStep in try settle(call, answer, item, &book) }
            try handOff()
        }
        guard case .finished(let progressed) = step else { return false }
        return progressed
    }

    /// Passes over the outbox in one run at most: enough for an item to be
    /// retried until it shows as stalled when retries are due at once.
    static let maximumPasses = SyncFailure.stalledAfterAttempts + 3

    /// Pending, or retrying (stalled too) with its next attempt due (or set
    /// impossibly far ahead, by a wrong clock); never an item given up.
    func isDue(_ row: OutboxItem, at now: Timestamp) -> Bool {
        switch row.state {
        case .pending: true
        case .retrying, .stalled: policy.isDue(nextAttempt: row.nextAttemptAt ?? now, at: now)
        default: false
        }
    }

    /// "inspection", or "issue 3d15a2b0": the record a photo belongs to.
    static func ownerName(_ owner: SyncItem) -> String {
        owner.kind == .issue ? "issue \(owner.id.lowercased.prefix(8))" : "inspection"
    }
}
