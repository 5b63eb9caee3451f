import Dispatch
import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

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
/// looked up in `GET /inspections` (same `client_id`, else the same template,
/// facility, `started_at` and `completed_at`) before it is sent again, and
/// the id found is adopted. Issues cannot be looked up: no endpoint of the
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
/// One value makes one run: its report covers what that run did.
public final class SyncRun {
    let ledger: InspectionLedger
    let session: ServerSession
    let device: UUID
    let clock: any LedgerClock
    let policy: RetryPolicy
    let pullsReferenceData: Bool
    let unitRandom: () -> Double
    let shouldStop: () -> Bool
    let progress: ((SyncProgress) -> Void)?
    let actor: Actor
    /// Sends the device's checkpoint to the server after the outbox (`CheckpointWitness`), when set.
    public var witness: CheckpointWitness?

    /// Requests in flight at once (`--concurrency`; 1 is one at a time).
    let concurrency: Int
    /// Held by a worker while it decides and records; let go only while its
    /// request is on the network. Guards every `var` below and the reads of
    /// the ledger, so the workers see the run's state one at a time.
    private let lock = NSLock()
    /// Why the run stopped early, if it did (set by whichever worker found it).
    private var stop: SyncReport.Stop?
    /// Appends outcomes while the next request is in flight.
    private let recorder: OutcomeRecorder
    /// Inspections whose creation may have reached the server unseen.
    private let journal: InFlightJournal
    /// Items found on the server by a look-up in this run, not sent again.
    private var adopted: [SyncItem] = []
    /// Issues sent again after a lost answer in this run, the server's answer no replay.
    private var possiblySentTwice: [SyncItem] = []
    /// Folded states of this pass, kept in step with what the run records.
    private var states: [UUID: InspectionState] = [:]
    private var keys: [UUID: IdempotencyKeys] = [:]
    private var outcomes: [SyncItem: SyncReport.Outcome] = [:]
    private var order: [SyncItem] = []

    /// - Parameters:
    ///   - device: the ledger's device id, recorded in every outcome event.
    ///   - clock: recorded-at times, and what "due" means for retries.
    ///   - random: numbers in 0..<1 that place each delay within the jitter.
    ///   - shouldStop: asked before each item (SIGINT/SIGTERM in `--watch`).
    ///   - progress: told about each item as it goes.
    ///   - concurrency: how many requests may be in flight at once; the
    ///     transport must allow as many (`CurlHTTPClient(connections:)`).
    ///   - journalPath: where the in-flight journal is kept between runs
    ///     (`InFlightJournal`); nil keeps it in memory for this run only.
    public init(
        ledger: InspectionLedger, session: ServerSession, device: UUID, clock: any LedgerClock,
        policy: RetryPolicy = .standard, pullsReferenceData: Bool = true,
        random: @escaping () -> Double = { Double.random(in: 0..<1) },
        shouldStop: @escaping () -> Bool = { false }, progress: ((SyncProgress) -> Void)? = nil,
        journalPath: String? = nil, concurrency: Int = 1
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
        self.progress = progress
        let user = session.user
        actor = Actor(id: user.id, name: user.displayName, verified: true)
        recorder = OutcomeRecorder(ledger: ledger)
        journal = try InFlightJournal(path: journalPath)
    }

    /// Sends what is due, records every outcome, pulls reference data, and
    /// reports. Throws only when the ledger itself cannot be read or written.
    public func run() throws -> SyncReport {
        do {
            return try runPasses()
        } catch {
            // Whatever failed, no append may still be running once `run` returns.
            recorder.waitUntilIdle()
            throw error
        }
    }

    private func runPasses() throws -> SyncReport {
        var report = SyncReport()
        // Transient failures are retried for as long as they last, so with
        // a backoff scale of 0 (tests) passes would never end by themselves.
        while report.passes < Self.maximumPasses {
            report.passes += 1
            let progressed = try pass(try ledger.outbox())
            // The next reads of the ledger must see every outcome of this pass.
            try recorder.drain()
            guard stop == nil, progressed else { break }
            let now = clock.now()
            guard try ledger.outbox().contains(where: { isDue($0, at: now) }) else { break }
        }
        report.stop = stop
        if report.stop == nil, pullsReferenceData {
            try pullReferenceData(&report)
        }
        try journal.save()
        if report.stop == nil { try witness?.run(ledger: ledger, session: session, clock: clock) }
        report.finish(outcomes: outcomes, order: order, remaining: try ledger.outbox())
        report.adopted = adopted
        report.possiblySentTwice = possiblySentTwice
        return report
    }

    // MARK: - One pass over the outbox

    /// Goes through the outbox once, in waves: each wave sends every item
    /// that is ready (up to `concurrency` at a time); the items that waited
    /// for something sent in that wave go in the next. Answers whether
    /// anything was sent or recorded.
    private func pass(_ outbox: [OutboxItem]) throws -> Bool {
        states = [:]
        let now = clock.now()
        var wave = outbox.enumerated().filter { isDue($0.element, at: now) }.map {
            (row: $0.element, position: (index: $0.offset + 1, total: outbox.count))
        }
        var progressed = false
        while !wave.isEmpty {
            let results = try sendAll(wave)
            if results.contains(true) { progressed = true }
            guard stop == nil, results.contains(true) else { break }
            wave = zip(wave, results).filter { !$0.1 }.map(\.0)
        }
        return progressed
    }

    /// Sends the items of one wave, in outbox order as they are taken, by
    /// `concurrency` workers; answers, for each, whether it progressed.
    ///
    /// Each worker holds `lock` while it decides and records, and lets go of
    /// it only while its request is on the network (`unlocked`), so the
    /// run's state, the ledger's reads and the recorder see one thread at a
    /// time, and the outcomes reach the one recorder in the order they end.
    private func sendAll(_ wave: [(row: OutboxItem, position: (index: Int, total: Int))]) throws -> [Bool] {
        var results = Array(repeating: false, count: wave.count)
        var next = 0
        var failure: (any Error)?
        // The workers share `results`, `next`, `failure` and the run's state,
        // all touched only while `lock` is held (see above), which the
        // compiler cannot see through the closure: hence `nonisolated(unsafe)`.
        nonisolated(unsafe) let work = {
            self.lock.lock()
            defer { self.lock.unlock() }
            while next < wave.count, failure == nil, self.stop == nil {
                if self.shouldStop() {
                    self.stop = .interrupted
                    break
                }
                let index = next
                next += 1
                do {
                    results[index] = try self.send(wave[index].row, wave[index].position)
                } catch {
                    failure = error
                }
            }
        }
        let workers = min(concurrency, wave.count)
        if workers <= 1 {
            work()
        } else {
            onThreads(workers) { work() }
        }
        if let failure { throw failure }
        return results
    }

    /// Runs a request with `lock` let go, so other workers go on meanwhile.
    private func unlocked<T>(_ request: () throws(APIError) -> T) throws(APIError) -> T {
        lock.unlock()
        defer { lock.lock() }
        return try request()
    }

    /// "inspection", or "issue 3d15a2b0": the record a photo belongs to.
    static func ownerName(_ owner: SyncItem) -> String {
        owner.kind == .issue ? "issue \(owner.id.lowercased.prefix(8))" : "inspection"
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

    /// Sends one item if what it depends on is settled; answers whether
    /// anything was sent or recorded.
    private func send(_ row: OutboxItem, _ position: (index: Int, total: Int)) throws -> Bool {
        guard let state = try state(of: row.inspectionID) else { return false }
        // The outbox row may lag behind what this pass recorded (it was read before).
        if case .synced = state.sync.status(of: row.item) { return false }
        if case .failed = state.sync.status(of: row.item) { return false }
        let tell = { (step: SyncProgress.Step) -> Void in
            guard let progress = self.progress else { return }
            progress(
                SyncProgress(
                    item: row.item, inspectionID: row.inspectionID, index: position.index, total: position.total,
                    step: step))
        }
        switch row.item.kind {
        case .photo: return try sendPhoto(row, state, tell)
        case .inspection: return try sendInspection(row, state, tell)
        case .issue: return try sendIssue(row, state, tell)
        }
    }

    // MARK: - Photos

    private func sendPhoto(
        _ row: OutboxItem, _ state: InspectionState, _ tell: (SyncProgress.Step) -> Void
    ) throws -> Bool {
        guard let photo = state.photo(id: row.item.id) else { return false }
        let owner = state.owner(ofPhoto: photo)
        if case .synced = state.sync.status(of: owner) {
            // Nothing on the server would point to the file: its record went out without it.
            let record = Self.ownerName(owner)
            let error =
                "The \(record) already went to the server without this photo, so it was not uploaded: nothing "
                + "there would point to it. The photo stays in this ledger (photos/\(photo.photo.sha256.hex); "
                + "'jqc audit \(state.id.lowercased.prefix(8))' shows it). To put it on the server, record it in a new "
                + "inspection ('jqc start', then 'jqc photo'), or give the file to the server's administrator."
            try giveUp(row, error: error, httpStatus: nil, state, tell)
            return true
        }
        let hash = photo.photo.sha256.hex
        guard let data = ledger.photos.contents(sha256: hash) else {
            let error =
                "The photo's file photos/\(hash) is missing from the ledger's photo store, so it cannot be "
                + "uploaded, and its \(Self.ownerName(owner)) goes to the server without it. Restore the file "
                + "from a backup to keep it in this ledger."
            try giveUp(row, error: error, httpStatus: nil, state, tell)
            return true
        }
        let bytes = [UInt8](data)
        let actual = SHA256Hasher().digest(bytes).hex
        guard actual == hash else {
            let error =
                "The photo's file photos/\(hash) no longer matches the hash recorded when it was captured (it "
                + "hashes to \(actual.prefix(12))…), so it was not uploaded, and its \(Self.ownerName(owner)) goes "
                + "to the server without it. Restore the original file from a backup to keep it in this ledger."
            try giveUp(row, error: error, httpStatus: nil, state, tell)
            return true
        }
        let upload = SyncRequests.upload(photo, bytes: bytes)
        let key = try idempotencyKey(for: row)
        tell(.sending)
        do {
            let path = try unlocked { () throws(APIError) in
                try session.authorized { token throws(APIError) in
                    try session.api.uploadPhoto(upload, accessToken: token, idempotencyKey: key)
                }
            }
            try record([.photoUploaded(PhotoUploaded(photoID: photo.photo.photoID, serverPath: path))], row)
            tell(.sent("uploaded"))
            return true
        } catch let error as APIError {
            return try failed(row, error, state, tell)
        }
    }

    // MARK: - Inspections

    private func sendInspection(
        _ row: OutboxItem, _ state: InspectionState, _ tell: (SyncProgress.Step) -> Void
    ) throws -> Bool {
        // Every photo settled: uploaded, or failed for good (then sent as "").
        if let waiting = state.waitingReason(for: row.item) {
            tell(.waiting(waiting))
            return false
        }
        var parentServerID: String?
        if let parentID = state.parentInspectionID {
            guard let parent = try self.state(of: parentID) else {
                try giveUp(
                    row,
                    error: "Its parent inspection \(parentID.lowercased) is not in this ledger, so the link cannot be "
                        + "sent. Restore the ledger the parent was recorded in.", httpStatus: nil, state, tell)
                return true
            }
            switch parent.sync.status(of: SyncItem(kind: .inspection, id: parentID)) {
            case .synced:
                parentServerID = parent.sync.serverID
            case .failed(let failure):
                try giveUp(
                    row,
                    error:
                        "Its parent inspection \(parentID.lowercased.prefix(8)) failed to sync (\(failure.lastError)), "
                        + "and a re-inspection cannot be sent without it. Run 'jqc sync retry "
                        + "\(parentID.lowercased.prefix(8))', then 'jqc sync retry \(row.item.id.lowercased.prefix(8))'.",
                    httpStatus: nil, state, tell)
                return true
            case .pending, .retrying:
                tell(.waiting("waiting for its parent inspection \(parentID.lowercased.prefix(8)) to reach the server"))
                return false
            }
        }
        let body = SyncRequests.inspection(
            state, photoPath: { state.sync.uploadedPhotos[$0] }, parentServerID: parentServerID)
        let key = try idempotencyKey(for: row)
        if journal.isAmbiguous(row.item) || Self.mayHaveBeenApplied(state.sync.failures[row.item]) {
            // An earlier send may have created it: look before sending again.
            tell(.lookingUp)
            do {
                let found = try unlocked { () throws(APIError) in
                    try session.authorized { token throws(APIError) in
                        try session.api.findInspection(like: body, accessToken: token)
                    }
                }
                if let found {
                    journal.settled(row.item)
                    adopted.append(row.item)
                    try record([.inspectionAccepted(InspectionAccepted(serverID: found))], row)
                    tell(.sent("already on the server as id \(found), not sent again"))
                    return true
                }
            } catch let error as APIError {
                return try failed(row, error, state, tell)
            }
        }
        try journal.willSend(row.item)
        tell(.sending)
        do {
            let id = try unlocked { () throws(APIError) in
                try session.authorized { token throws(APIError) in
                    try session.api.create(.inspections, body: body, accessToken: token, idempotencyKey: key)
                }
            }.id
            journal.settled(row.item)
            try record([.inspectionAccepted(InspectionAccepted(serverID: id))], row)
            tell(.sent("server id \(id)"))
            return true
        } catch let error as APIError {
            if !error.mayHaveBeenApplied { journal.settled(row.item) }
            return try failed(row, error, state, tell)
        }
    }

    // MARK: - Issues

    private func sendIssue(
        _ row: OutboxItem, _ state: InspectionState, _ tell: (SyncProgress.Step) -> Void
    ) throws -> Bool {
        guard let issue = state.issue(id: row.item.id) else { return false }
        let inspectionItem = SyncItem(kind: .inspection, id: state.id)
        let inspectionServerID: String
        switch state.sync.status(of: inspectionItem) {
        case .synced:
            guard let id = state.sync.serverID else { return false }
            inspectionServerID = id
        case .failed(let failure):
            try giveUp(
                row,
                error: "Its inspection \(state.id.lowercased.prefix(8)) failed to sync (\(failure.lastError)), so the "
                    + "issue was not sent: it would be an orphan on the server. Run 'jqc sync retry "
                    + "\(state.id.lowercased.prefix(8))' once the inspection can be sent.",
                httpStatus: nil, state, tell)
            return true
        case .pending, .retrying:
            tell(.waiting("waiting for its inspection \(state.id.lowercased.prefix(8)) to reach the server"))
            return false
        }
        var photoPath: String?
        if let photoID = issue.photoID {
            switch state.sync.status(of: SyncItem(kind: .photo, id: photoID)) {
            case .synced: photoPath = state.sync.uploadedPhotos[photoID]
            case .failed: photoPath = nil
            case .pending, .retrying:
                let next = state.waitingReason(for: row.item)
                tell(.waiting(next ?? "waiting for photo \(photoID.lowercased.prefix(8))"))
                return false
            }
        }
        let body = SyncRequests.issue(
            issue, of: state, inspectionServerID: inspectionServerID, photoPath: photoPath)
        let key = try idempotencyKey(for: row)
        // Whether an earlier send may have created it: a lost answer (or a
        // gateway's 502/504) in the ledger, or a send a crash cut short in
        // the journal. No endpoint lists issues, so it cannot be looked up.
        let sentBefore = journal.isAmbiguous(row.item) || Self.mayHaveBeenApplied(state.sync.failures[row.item])
        // Noted only now, right before the request: a run stopped before
        // this point never makes the issue look sent.
        try journal.willSend(row.item)
        tell(.sending)
        do {
            let created = try unlocked { () throws(APIError) in
                try session.authorized { token throws(APIError) in
                    try session.api.create(.issues, body: body, accessToken: token, idempotencyKey: key)
                }
            }
            journal.settled(row.item)
            let again = sentBefore && !created.replayed
            try record(
                [
                    .issueAccepted(
                        IssueAccepted(issueID: issue.id, serverID: created.id, sentAgainAfterLostAnswer: again))
                ], row)
            if again {
                possiblySentTwice.append(row.item)
                tell(.sent("server id \(created.id); \(InspectionState.possiblySentTwiceNote(issue.id))"))
            } else {
                tell(.sent("server id \(created.id)"))
            }
            return true
        } catch let error as APIError {
            // A clear answer (a 500, a refusal) settles the note only if no earlier send may have applied.
            if !error.mayHaveBeenApplied && !sentBefore { journal.settled(row.item) }
            return try failed(row, error, state, tell)
        }
    }

    // MARK: - Reference data

    private func pullReferenceData(_ report: inout SyncReport) throws {
        let pulled: ReferencePull
        do {
            pulled = try ReferencePull.fetch(session)
        } catch .loginRequired(let message) {
            report.stop = .loginRequired(APIError.loginRequired(message).description)
            return
        } catch .transport(.stopped) {
            report.stop = .interrupted
            return
        } catch .transport(.couldNotConnect(let detail)) {
            report.stop = .serverUnreachable(
                "The server could not be reached, so reference data was not refreshed: "
                    + "\(TransportError.couldNotConnect(detail: detail).description)")
            return
        } catch {
            report.reference = .failed(error.description)
            return
        }
        do {
            try ledger.replaceReference(with: pulled.snapshot, skipped: pulled.warnings, at: clock.now())
        } catch let refusal as ReferenceDataError {
            report.reference = .failed(refusal.description)
            report.referenceWarnings = pulled.warnings
            return
        }
        report.reference = .refreshed(
            facilities: pulled.snapshot.facilities.count, templates: pulled.snapshot.templates.count)
        report.referenceWarnings = pulled.warnings
    }

    // MARK: - Outcomes, as events

    /// Classifies a failed request and records it; answers whether anything was recorded.
    private func failed(
        _ row: OutboxItem, _ error: APIError, _ state: InspectionState, _ tell: (SyncProgress.Step) -> Void
    ) throws -> Bool {
        switch error {
        case .loginRequired, .unauthorized:
            // Not the item's fault: nothing is recorded, no attempt counted.
            let message = error.description
            stop = .loginRequired(
                message.contains("jqc login") ? message : message + " Log in again with 'jqc login'.")
            return false
        case .transport(.stopped):
            // SIGINT/SIGTERM cut the request short: nothing is recorded; the next sync sends it again.
            stop = .interrupted
            return false
        case .transport(let transport) where !transport.isTransient:
            stop = .transportRefused(transport.description)
            return false
        case .refreshInterrupted:
            // The session's fault, not the item's: nothing counted; the next sync refreshes again.
            stop = .serverUnreachable(error.description)
            return false
        case .transport(.couldNotConnect):
            // Nothing was sent: the device is offline or the server is down.
            // Inspectors work offline for days; that must not use up items' attempts.
            stop = .serverUnreachable(
                "The server could not be reached, so nothing was sent and no attempt was counted: "
                    + "\(error.description) Everything waits for the next sync.")
            return false
        case .refused(let status, _):
            try giveUp(row, error: error.serverMessage, httpStatus: status, state, tell, attempted: true)
            return true
        default:
            let failures = (state.sync.failures[row.item]?.attempts ?? 0) + 1
            let now = clock.now()
            var retryAfter: Int?
            if case .unavailable(_, _, let seconds) = error { retryAfter = seconds }
            // Never given up by count: an outage of any length is waited out.
            let next = policy.nextAttempt(afterFailure: failures, at: now, unit: unitRandom(), retryAfter: retryAfter)
            try record(
                [
                    .syncAttemptFailed(
                        SyncAttemptFailed(
                            item: row.item, attempt: failures, error: error.serverMessage,
                            httpStatus: error.status, willRetry: true, nextAttemptAt: next))
                ], row)
            outcomes[row.item] = .retrying(
                .init(
                    item: row.item, inspectionID: row.inspectionID, error: error.serverMessage,
                    httpStatus: error.status, nextAttemptAt: next, attempts: failures))
            tell(.willRetry(error.serverMessage))
            if case .transport(.timedOut) = error {
                // The next request would only wait out the same timeout.
                stop = .serverUnreachable(
                    "The server did not answer in time: \(error.description) The remaining items wait for the "
                        + "next sync.")
            }
            return true
        }
    }

    /// Records a failure for good (with the attempt that found it, when there was one).
    private func giveUp(
        _ row: OutboxItem, error: String, httpStatus: Int?, _ state: InspectionState,
        _ tell: (SyncProgress.Step) -> Void, attempted: Bool = false
    ) throws {
        var events: [InspectionEvent] = []
        if attempted {
            let attempt = (state.sync.failures[row.item]?.attempts ?? 0) + 1
            events.append(
                .syncAttemptFailed(
                    SyncAttemptFailed(
                        item: row.item, attempt: attempt, error: error, httpStatus: httpStatus, willRetry: false)))
        }
        events.append(.syncGaveUp(SyncGaveUp(item: row.item, error: error)))
        try record(events, row)
        outcomes[row.item] = .gaveUp(
            .init(
                item: row.item, inspectionID: row.inspectionID, error: error, httpStatus: httpStatus,
                nextAttemptAt: nil, attempts: (state.sync.failures[row.item]?.attempts ?? 0) + (attempted ? 1 : 0)))
        tell(.gaveUp(error))
    }

    /// Appends one outcome in a write transaction of its own (through the
    /// recorder, in order), and keeps the run's folded state in step with it.
    private func record(_ events: [InspectionEvent], _ row: OutboxItem) throws {
        let now = clock.now()
        let pending = events.map { $0.pending(stream: row.inspectionID, actor: actor, device: device, recordedAt: now) }
        try recorder.append(pending)
        if var state = states[row.inspectionID] {
            for event in events { state.apply(event, recordedAt: now, actor: actor) }
            states[row.inspectionID] = state
        }
        if outcomes[row.item] == nil { order.append(row.item) }
        let accepted: Set<InspectionEventType> = [.photoUploaded, .inspectionAccepted, .issueAccepted]
        if events.contains(where: { $0.eventType.map(accepted.contains) ?? false }) {
            outcomes[row.item] = .sent
        }
    }

    // MARK: - Reading the ledger

    private func state(of id: UUID) throws -> InspectionState? {
        if let cached = states[id] { return cached }
        guard let state = try ledger.state(of: id) else { return nil }
        states[id] = state
        return state
    }

    /// Whether the last recorded failure left the outcome unknown: no HTTP
    /// status (a timeout, a lost answer), or a gateway's 502/504.
    static func mayHaveBeenApplied(_ failure: SyncFailure?) -> Bool {
        guard let failure, failure.attempts > 0, !failure.gaveUp else { return false }
        guard let status = failure.lastHTTPStatus else { return true }
        return status == 502 || status == 504
    }

    private func idempotencyKey(for row: OutboxItem) throws -> String {
        if let known = keys[row.inspectionID] { return known.key(for: row.item) }
        let found = try IdempotencyKeys(records: try ledger.log.records(inStream: row.inspectionID))
        keys[row.inspectionID] = found
        return found.key(for: row.item)
    }
}
