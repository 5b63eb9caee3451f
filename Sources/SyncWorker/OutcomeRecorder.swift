import Dispatch
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import Synchronization

/// Appends a run's outcome events in order, each in a write transaction of
/// its own, on a thread of its own: the next request goes out while the last
/// outcome is made durable, instead of waiting for its fsync and its views.
///
/// Why this is safe: the worker keeps its own folded state up to date at
/// once, so nothing it decides waits for the disk; and an outcome lost to a
/// crash before it was appended is only a request sent again with the same
/// idempotency key, which the server answers with its first response. The
/// worker waits for the recorder (`drain`) before it reads the ledger again
/// (a new pass, the report, the reference pull) and before `run` returns. At
/// most `capacity` outcomes wait at a time.
final class OutcomeRecorder: Sendable {
    private let ledger: InspectionLedger
    private let queue = DispatchQueue(label: "jqc.sync.outcomes")
    private let slots: DispatchSemaphore
    /// The first append that failed; later ones are not tried.
    private let failure = Mutex<(any Error)?>(nil)

    init(ledger: InspectionLedger, capacity: Int = 16) {
        self.ledger = ledger
        slots = DispatchSemaphore(value: capacity)
    }

    /// Queues `outcomes` of one inspection to be decided and recorded in
    /// one transaction, at `time`, through the ledger's door
    /// (`InspectionLedger.record`): decided on `known`, the run's state of
    /// the inspection before them, when it has one (no read), else on a
    /// fold; throws the failure of an earlier outcome, if any.
    func record(
        _ outcomes: [SyncOutcome], on inspection: UUID, decidingOn known: InspectionState?, by actor: Actor,
        device: UUID, at time: Timestamp
    ) throws {
        try rethrowFailure()
        slots.wait()
        queue.async { [self] in
            defer { slots.signal() }
            guard currentFailure == nil else { return }
            let commands = outcomes.map(InspectionCommand.settleSync)
            let clock = OutcomeTime(time: time)
            do {
                if let known {
                    try ledger.record(commands, decidingOn: known, by: actor, device: device, clock: clock)
                } else {
                    try ledger.record(commands, on: inspection, by: actor, device: device, clock: clock)
                }
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
        }
    }

    /// Waits until every queued outcome is appended; throws if one could not be.
    func drain() throws {
        waitUntilIdle()
        try rethrowFailure()
    }

    /// Waits until every queued outcome is appended or failed.
    func waitUntilIdle() {
        queue.sync {}
    }

    private var currentFailure: (any Error)? {
        failure.withLock { $0 }
    }

    private func rethrowFailure() throws {
        if let failure = currentFailure { throw failure }
    }
}

/// The moment the run recorded an outcome in its own state: the log records
/// it at the same time, so the run's state and the log's fold agree.
struct OutcomeTime: LedgerClock {
    let time: Timestamp
    func now() -> Timestamp { time }
}
