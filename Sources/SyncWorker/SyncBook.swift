import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore

/// Everything a sync run's workers share, as one value: the run's stop, its
/// folded states, what it found and recorded, and the wave being sent.
/// `SyncRun` keeps it behind one `Mutex`, held while a worker decides and
/// records and never while a request is on the network.
struct SyncBook: Sendable {
    /// Why the run stopped early, if it did (set by whichever worker found it).
    var stop: SyncReport.Stop?
    /// The server's reason when it refused the session (`SyncReport.sessionRefusedBecause`).
    var sessionRefusedBecause: String?
    /// Items found on the server by a look-up in this run, not sent again.
    var adopted: [SyncItem] = []
    /// Issues sent again after a lost answer in this run, the server's answer no replay.
    var possiblySentTwice: [SyncItem] = []
    /// Inspections another device may have sent, looked up before their
    /// photos in this run: true once answered, false while in flight.
    var lookedUpBeforePhotos: [UUID: Bool] = [:]
    /// Inspections whose look-up before the photos found no record in this
    /// run: their send needs no second look-up (one per run).
    var foundNoneBeforePhotos: Set<UUID> = []
    /// Items of `adopted` another device sent (`SyncReport.sentElsewhere`).
    var sentElsewhere: [SyncReport.SentElsewhere] = []
    /// Folded states of this pass, kept in step with what the run records.
    var states: [UUID: InspectionState] = [:]
    var keys: [UUID: IdempotencyKeys] = [:]
    var outcomes: [SyncItem: SyncReport.Outcome] = [:]
    /// Items in the order their first outcome was recorded.
    var order: [SyncItem] = []
    /// The wave being sent.
    var wave = Wave()
    /// What waits for the lock to be let go: journal notes to write,
    /// outcomes for the recorder, progress to tell (`SyncRun.handOff`).
    var handoff = Handoff()
    /// Whether the run's caller asked for progress (else none is queued).
    var tellsProgress = false

    /// Work decided under the lock and done outside it, in the order decided.
    struct Handoff: Sendable {
        var journal: [SyncItem] = []
        var outcomes: [PendingOutcome] = []
        var progress: [SyncProgress] = []
        var isEmpty: Bool { journal.isEmpty && outcomes.isEmpty && progress.isEmpty }
    }

    /// Outcomes of one inspection for the recorder, decided on `known`.
    struct PendingOutcome: Sendable {
        var outcomes: [SyncOutcome]
        var inspection: UUID
        var known: InspectionState?
        var time: Timestamp
    }

    /// One wave's progress: the next item to take, each item's result, and
    /// the first error that ends it.
    struct Wave: Sendable {
        var next = 0
        var results: [Bool] = []
        var failure: (any Error)?
        /// Where its progress is queued for the run's thread.
        var told = ProgressQueue()
    }

    mutating func startWave(of count: Int, telling told: ProgressQueue) {
        wave = Wave(next: 0, results: Array(repeating: false, count: count), failure: nil, told: told)
    }
}

/// An outbox row with its place in the run's count ("3 of 12").
struct WaveItem: Sendable {
    let row: OutboxItem
    let position: (index: Int, total: Int)
}

/// What a sender does next with an item: it is finished (and says whether
/// anything was sent or recorded), or it needs one request made.
enum SendStep: Sendable {
    case finished(progressed: Bool)
    case request(SyncCall)
}

/// A request a sender asks the worker to make with the lock let go.
enum SyncCall: Sendable {
    case uploadPhoto(PhotoUpload, key: String)
    case lookUpInspection(body: JSONValue, key: String)
    /// The look-up of a photo's inspection that another device may have sent, before any upload.
    case lookUpBeforePhotos(body: JSONValue)
    case createInspection(body: JSONValue, key: String)
    /// `sentBefore`: an earlier send may have created it (a lost answer, or a crash in the journal).
    case createIssue(body: JSONValue, issueID: UUID, key: String, sentBefore: Bool)
}

/// The server's answer to a `SyncCall`.
enum SyncAnswer: Sendable {
    case uploaded(path: String)
    case found(serverID: String?)
    /// The one history record matching the inspection, or nil.
    case foundRecord(JSONValue?)
    case created(APIClient.Created)
    case failed(APIError)
}

// MARK: - Dispatching to the senders

extension SyncRun {
    /// Starts sending one item, under the lock: the sender of its kind decides.
    func begin(_ item: WaveItem, _ book: inout SyncBook) throws -> SendStep {
        let row = item.row
        guard let state = try state(of: row.inspectionID, &book) else { return .finished(progressed: false) }
        // The outbox row may lag behind what this pass recorded (it was read before).
        if case .synced = state.sync.status(of: row.item) { return .finished(progressed: false) }
        if case .failed = state.sync.status(of: row.item) { return .finished(progressed: false) }
        switch row.item.kind {
        case .photo: return try beginPhoto(item, state, &book)
        case .inspection: return try beginInspection(item, state, &book)
        case .issue: return try beginIssue(item, state, &book)
        }
    }

    /// Makes a sender's request, with the lock let go: other workers go on meanwhile.
    func perform(_ call: SyncCall) -> SyncAnswer {
        do throws(APIError) {
            switch call {
            case .uploadPhoto(let upload, let key):
                return .uploaded(
                    path: try session.authorized { token throws(APIError) in
                        try session.api.uploadPhoto(upload, accessToken: token, idempotencyKey: key)
                    })
            case .lookUpInspection(let body, _):
                return .found(
                    serverID: try session.authorized { token throws(APIError) in
                        try session.api.findInspection(like: body, accessToken: token)
                    })
            case .lookUpBeforePhotos(let body):
                return .foundRecord(
                    try session.authorized { token throws(APIError) in
                        try session.api.findInspectionRecord(like: body, accessToken: token)
                    })
            case .createInspection(let body, let key):
                return .created(
                    try session.authorized { token throws(APIError) in
                        try session.api.create(.inspections, body: body, accessToken: token, idempotencyKey: key)
                    })
            case .createIssue(let body, _, let key, _):
                return .created(
                    try session.authorized { token throws(APIError) in
                        try session.api.create(.issues, body: body, accessToken: token, idempotencyKey: key)
                    })
            }
        } catch {
            return .failed(error)
        }
    }

    /// Settles an answer, under the lock, with the sender that asked for it.
    func settle(_ call: SyncCall, _ answer: SyncAnswer, _ item: WaveItem, _ book: inout SyncBook) throws
        -> SendStep
    {
        guard let state = try state(of: item.row.inspectionID, &book) else { return .finished(progressed: false) }
        switch call {
        case .uploadPhoto: return try settlePhoto(answer, item, state, &book)
        case .lookUpInspection(let body, let key):
            return try settleLookUp(answer, body: body, key: key, item, state, &book)
        case .lookUpBeforePhotos: return try settleLookUpBeforePhotos(answer, item, state, &book)
        case .createInspection: return try settleInspection(answer, item, state, &book)
        case .createIssue(_, let issueID, _, let sentBefore):
            return try settleIssue(answer, issueID: issueID, sentBefore: sentBefore, item, state, &book)
        }
    }

    /// Queues an item's step for the run's `progress` (under the lock),
    /// told once the lock is let go (`handOff`).
    func tell(_ item: WaveItem, _ step: SyncProgress.Step, _ book: inout SyncBook) {
        guard book.tellsProgress else { return }
        book.handoff.progress.append(
            SyncProgress(
                item: item.row.item, inspectionID: item.row.inspectionID, index: item.position.index,
                total: item.position.total, step: step))
    }

    /// Notes `item` as about to be sent (under the lock); the note is
    /// written to the journal's file by `handOff`, before the request goes out.
    func willSend(_ item: SyncItem, _ book: inout SyncBook) {
        if journal.note(item) { book.handoff.journal.append(item) }
    }

    /// Does what the workers decided under the lock, with it let go and in
    /// the order decided: writes the journal's notes, hands the outcomes to
    /// the recorder, tells the progress. One worker at a time (`handing`),
    /// so no outcome overtakes one decided before it.
    func handOff() throws {
        try handing.withLock { _ in
            let (work, told) = book.withLock { book in
                defer { book.handoff = SyncBook.Handoff() }
                return (book.handoff, book.wave.told)
            }
            guard !work.isEmpty else { return }
            for item in work.journal { try journal.write(item) }
            for pending in work.outcomes {
                try recorder.record(
                    pending.outcomes, on: pending.inspection, decidingOn: pending.known, by: actor, device: device,
                    at: pending.time)
            }
            // Queued with `handing` held, so the run's thread tells the steps in the order decided.
            told.post(work.progress)
        }
    }

    /// Reads the states and idempotency keys of a wave's inspections (and
    /// of their parents) not yet known, in one read snapshot, before the
    /// lock is taken: the lock guards memory only.
    func readAhead(_ wave: [WaveItem]) throws {
        let known = book.withLock { book in (Set(book.states.keys), Set(book.keys.keys)) }
        let wanted = Set(wave.map(\.row.inspectionID))
        guard !wanted.subtracting(known.0).isEmpty || !wanted.subtracting(known.1).isEmpty else { return }
        let (states, keys) = try ledger.log.read { reader in
            var states: [UUID: InspectionState] = [:]
            var keys: [UUID: IdempotencyKeys] = [:]
            var queue = Array(wanted.subtracting(known.0))
            while let id = queue.popLast() {
                guard states[id] == nil, !known.0.contains(id),
                    let state = try ledger.state(of: id, reader: reader)
                else { continue }
                states[id] = state
                if let parent = state.parentInspectionID { queue.append(parent) }
            }
            for id in wanted.subtracting(known.1) {
                keys[id] = try IdempotencyKeys(records: try reader.records(inStream: id), reader: reader)
            }
            return (states, keys)
        }
        book.withLock { book in
            book.states.merge(states) { kept, _ in kept }
            book.keys.merge(keys) { kept, _ in kept }
        }
    }

    // MARK: - Reading the ledger

    func state(of id: UUID, _ book: inout SyncBook) throws -> InspectionState? {
        if let cached = book.states[id] { return cached }
        guard let state = try ledger.state(of: id) else { return nil }
        book.states[id] = state
        return state
    }

    func idempotencyKey(for row: OutboxItem, _ book: inout SyncBook) throws -> String {
        if let known = book.keys[row.inspectionID] { return known.key(for: row.item) }
        let found = try ledger.log.read { reader in
            try IdempotencyKeys(records: try reader.records(inStream: row.inspectionID), reader: reader)
        }
        book.keys[row.inspectionID] = found
        return found.key(for: row.item)
    }
}
