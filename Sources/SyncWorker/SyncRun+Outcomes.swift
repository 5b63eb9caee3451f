import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore

extension SyncRun {
    // MARK: - Outcomes, as events

    /// Classifies a failed request and records it; answers whether anything was recorded.
    func failed(_ item: WaveItem, _ error: APIError, _ state: InspectionState, _ book: inout SyncBook) throws -> Bool {
        let row = item.row
        switch error {
        case .loginRequired, .unauthorized:
            // Not the item's fault: nothing is recorded, no attempt counted.
            let message = error.description
            book.stop = .loginRequired(
                message.contains("jqc login") ? message : message + " Log in again with 'jqc login'.")
            book.sessionRefusedBecause = error.serverMessage
            return false
        case .transport(.stopped):
            // SIGINT/SIGTERM cut the request short: nothing is recorded; the next sync sends it again.
            book.stop = .interrupted
            return false
        case .transport(let transport) where !transport.isTransient:
            book.stop = .transportRefused(transport.description)
            return false
        case .refreshInterrupted:
            // The session's fault, not the item's: nothing counted; the next sync refreshes again.
            book.stop = .serverUnreachable(error.description)
            return false
        case .transport(.couldNotConnect):
            // Nothing was sent: the device is offline or the server is down.
            // Inspectors work offline for days; that must not use up items' attempts.
            book.stop = .serverUnreachable(
                "The server could not be reached, so nothing was sent and no attempt was counted: "
                    + "\(error.description) Everything waits for the next sync.")
            return false
        case .refused(let status, _):
            try giveUp(item, error: error.serverMessage, httpStatus: status, state, &book, attempted: true)
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
                ], item, &book)
            book.outcomes[row.item] = .retrying(
                .init(
                    item: row.item, inspectionID: row.inspectionID, error: error.serverMessage,
                    httpStatus: error.status, nextAttemptAt: next, attempts: failures))
            tell(item, .willRetry(error.serverMessage), &book)
            if case .transport(.timedOut) = error {
                // The next request would only wait out the same timeout.
                book.stop = .serverUnreachable(
                    "The server did not answer in time: \(error.description) The remaining items wait for the "
                        + "next sync.")
            }
            return true
        }
    }

    /// Records a failure for good (with the attempt that found it, when there was one).
    func giveUp(
        _ item: WaveItem, error: String, httpStatus: Int?, _ state: InspectionState, _ book: inout SyncBook,
        attempted: Bool = false
    ) throws {
        let row = item.row
        var events: [InspectionEvent] = []
        if attempted {
            let attempt = (state.sync.failures[row.item]?.attempts ?? 0) + 1
            events.append(
                .syncAttemptFailed(
                    SyncAttemptFailed(
                        item: row.item, attempt: attempt, error: error, httpStatus: httpStatus, willRetry: false)))
        }
        events.append(.syncGaveUp(SyncGaveUp(item: row.item, error: error)))
        try record(events, item, &book)
        book.outcomes[row.item] = .gaveUp(
            .init(
                item: row.item, inspectionID: row.inspectionID, error: error, httpStatus: httpStatus,
                nextAttemptAt: nil, attempts: (state.sync.failures[row.item]?.attempts ?? 0) + (attempted ? 1 : 0)))
        tell(item, .gaveUp(error), &book)
    }

    /// Appends one outcome in a write transaction of its own (through the
    /// recorder, in order), and keeps the run's folded state in step with it.
    func record(_ events: [InspectionEvent], _ item: WaveItem, _ book: inout SyncBook) throws {
        let row = item.row
        let now = clock.now()
        // Decided on the run's own state of the inspection (no read), and
        // recorded through the ledger's door at the time applied here.
        let outcomes = events.compactMap(SyncOutcome.init)
        precondition(outcomes.count == events.count, "the sync run records only sync outcomes: \(events)")
        // Handed to the recorder once the lock is let go (`handOff`), in the order decided.
        book.handoff.outcomes.append(
            SyncBook.PendingOutcome(
                outcomes: outcomes, inspection: row.inspectionID, known: book.states[row.inspectionID], time: now))
        if var state = book.states[row.inspectionID] {
            for event in events { state.apply(event, recordedAt: now, actor: actor) }
            book.states[row.inspectionID] = state
        }
        if book.outcomes[row.item] == nil { book.order.append(row.item) }
        let accepted: Set<InspectionEventType> = [.photoUploaded, .inspectionAccepted, .issueAccepted]
        if events.contains(where: { $0.eventType.map(accepted.contains) ?? false }) {
            book.outcomes[row.item] = .sent
        }
    }

    /// Whether the last recorded failure left the outcome unknown: no HTTP
    /// status (a timeout, a lost answer), or a gateway's 502/504.
    static func mayHaveBeenApplied(_ failure: SyncFailure?) -> Bool {
        guard let failure, failure.attempts > 0, !failure.gaveUp else { return false }
        guard let status = failure.lastHTTPStatus else { return true }
        return status == 502 || status == 504
    }
}
