import FoundationEssentials
import Glibc
import InspectionDomain
import LedgerCore
@_spi(RawAppend) import LedgerStore

/// Why recording commands recorded nothing, beyond the domain's own
/// refusals: a batch with answers that do not fit, or an inspection that
/// another writer changed so that the commands no longer apply.
public enum RecordingError: Error, CustomStringConvertible {
    /// Some commands of a batch were refused; nothing of the batch was recorded.
    case batchRefused(inspection: UUID, refusals: [DomainError], accepted: Int)
    /// Another writer recorded to the inspection first, and the commands,
    /// decided again on what it recorded, are refused.
    case noLongerApplies(inspection: UUID, any Error)
    /// Other writers kept recording to the inspection: every attempt lost the race.
    case keptChanging(inspection: UUID, attempts: Int)

    public var description: String {
        switch self {
        case .batchRefused(let id, let refusals, let accepted):
            "nothing was recorded on inspection \(id.lowercased): \(refusals.count) of "
                + "\(refusals.count + accepted) answers do not fit:\n"
                + refusals.map { "  - \($0)" }.joined(separator: "\n")
                + "\nCorrect them and run the command again: the whole batch is recorded or none of it."
        case .noLongerApplies(let id, let refusal):
            "another command recorded to inspection \(id.lowercased) at the same moment, and after it this "
                + "command no longer applies, so nothing was recorded: \(refusal)"
        case .keptChanging(let id, let attempts):
            "inspection \(id.lowercased) was changed by other commands on each of \(attempts) attempts; nothing "
                + "was recorded. Run the command again once the other jqc (a script, 'jqc fill' in another "
                + "window) has finished."
        }
    }
}

/// What a recording reads before it decides (`InspectionLedger.record(on:…planning:)`):
/// the inspection's state and the log, in one read snapshot. Valid only
/// while the plan runs.
public struct RecordingSnapshot {
    /// The inspection's state, folded from its stream in this snapshot.
    public let state: InspectionState
    /// The log as this snapshot sees it.
    public let reader: LedgerReader
    let tables: InspectionTables

    /// A template pinned in the log, by content hash, in this snapshot.
    public func pinnedTemplate(hash: String) throws -> Template? {
        try InspectionFold.pinnedTemplate(hash, reader.transaction, tables)
    }
}

/// What a recording decided to ask, from its snapshot: the inspection
/// commands (none: nothing to record), the bytes a reception among them
/// carries, and the events of this device's own stream recorded in the same
/// transaction (a sender's key pinned with its reception).
public struct RecordingPlan: Sendable {
    public var commands: [InspectionCommand]
    public var carrying: CarriedRecords
    /// Decided on this device's own stream (`DeviceState`) in the same snapshot.
    public var beside: [DeviceCommand]

    public init(
        _ commands: [InspectionCommand], carrying: CarriedRecords = CarriedRecords(), beside: [DeviceCommand] = []
    ) {
        self.commands = commands
        self.carrying = carrying
        self.beside = beside
    }

    /// Nothing to record.
    public static let nothing = RecordingPlan([])
}

extension InspectionLedger {
    /// How many times commands are decided again after another writer
    /// recorded to the same inspection first.
    public static let recordingAttempts = 8

    /// Counts one more attempt that another writer overtook on `stream`,
    /// and pauses before the next, or refuses once `recordingAttempts` were
    /// overtaken: the retry of every recording loop.
    static func waitToDecideAgain(after conflicts: inout Int, on stream: UUID) throws(RecordingError) {
        conflicts += 1
        guard conflicts < recordingAttempts else {
            throw .keptChanging(inspection: stream, attempts: conflicts)
        }
        // Random, growing pauses of a few milliseconds: the other writer's
        // transaction is that short.
        usleep(UInt32.random(in: 500...4_000) * UInt32(conflicts))
    }

    /// What `record` recorded, and the state it leaves.
    public typealias Recorded = (events: [InspectionEvent], state: InspectionState)

    /// Decides `commands` in order, each on the state the previous ones
    /// leave, and records all their events in one durable transaction (one
    /// commit), or nothing: when any command is refused, every refusal is
    /// reported. This is the one way inspection commands become events.
    ///
    /// The append expects the stream version the decision read (as an
    /// expected-version append does): another writer recording in between
    /// makes it fail, and the commands are decided again on the new state (up
    /// to `recordingAttempts` times, with a short random pause so two loops
    /// do not collide in step). Only commands that no longer apply are
    /// refused, as `RecordingError.noLongerApplies`.
    ///
    /// - Parameters:
    ///   - advise: turns a domain refusal into the error to report (the CLI
    ///     names the command that does what the person may have meant).
    ///   - keep: runs after a decision and before its append, on every
    ///     attempt (a capture keeps its photo file there).
    @discardableResult
    public func record(
        _ commands: [InspectionCommand], on id: UUID, by actor: Actor, device: UUID, clock: any LedgerClock,
        advise: (DomainError, InspectionState) -> any Error = { refusal, _ in refusal },
        before keep: (() throws -> Void)? = nil
    ) throws -> Recorded {
        try record(on: id, by: actor, device: device, clock: clock, advise: advise, before: keep) { _ in
            RecordingPlan(commands)
        }
    }

    /// `record(_:on:by:…)` for a use case that must read more than the
    /// inspection's state before it knows what to decide (a reception
    /// compares a file with the stream's records and with what this ledger
    /// pinned): `plan` runs on each attempt inside the one read snapshot the
    /// state is folded in, and what it plans is decided on that state and
    /// appended expecting the versions that snapshot read, of the
    /// inspection's stream and, when the plan adds device-stream events
    /// beside it, of this device's stream; a lost race plans and decides again.
    @discardableResult
    public func record(
        on id: UUID, by actor: Actor, device: UUID, clock: any LedgerClock,
        advise: (DomainError, InspectionState) -> any Error = { refusal, _ in refusal },
        before keep: (() throws -> Void)? = nil, planning plan: (RecordingSnapshot) throws -> RecordingPlan
    ) throws -> Recorded {
        var conflicts = 0
        while true {
            let (state, planned, beside) = try healing {
                try log.read { reader in
                    let state =
                        try InspectionFold.state(of: id, reader: reader, tables: tables) ?? InspectionState(id: id)
                    let planned = try plan(RecordingSnapshot(state: state, reader: reader, tables: tables))
                    // Only a plan with device-stream commands reads that stream.
                    guard !planned.beside.isEmpty else { return (state, planned, DecidedBeside?.none) }
                    let deviceState = try Self.deviceState(of: device, reader: reader)
                    let events = try Self.decide(planned.beside, on: deviceState)
                    return (state, planned, DecidedBeside(events: events, version: UInt64(deviceState.eventCount)))
                }
            }
            // One reading of the clock: the state returned (and echoed by
            // `--json`) carries exactly the timestamp the log records.
            let now = clock.now()
            let decided: Decided
            do {
                decided = try Self.decideEach(planned.commands, on: state, at: now, by: actor, device: device)
            } catch let refusal as DomainError {
                let advised = advise(refusal, state)
                if conflicts > 0 { throw RecordingError.noLongerApplies(inspection: id, advised) }
                throw advised
            } catch let refusals as RecordingError where conflicts > 0 {
                throw RecordingError.noLongerApplies(inspection: id, refusals)
            }
            let recorded: Recorded = (decided.events, decided.states.last ?? state)
            if decided.events.isEmpty { return recorded }
            try keep?()
            do {
                var expected = [id: UInt64(state.eventCount)]
                if let beside, !beside.events.isEmpty { expected[device] = beside.version }
                // The views take the states the decision left after each
                // event: one fold of the stream per recorded action (the
                // one above), not one more per appended record.
                let outcomes = try appendDecided(
                    decided, stream: id, expected: expected, actor: actor, device: device, at: now, plan: planned,
                    beside: beside?.events ?? [])
                assert(
                    outcomes.prefix(decided.events.count).enumerated().allSatisfy {
                        $0.element.streamVersion == UInt64(state.eventCount + $0.offset + 1)
                    },
                    "an expected-version append landed at other stream versions than the decision read")
                return recorded
            } catch LedgerError.versionConflict {
                try Self.waitToDecideAgain(after: &conflicts, on: id)
            }
        }
    }

    /// `record(_:on:by:…)` decided first on `known`, a state of the
    /// inspection the caller folded and kept in step with what it recorded
    /// itself (the sync run's): no read when it is current, the append
    /// expecting its version; when another writer recorded since, the
    /// commands are decided again on a fresh fold, as `record` does.
    @discardableResult
    public func record(
        _ commands: [InspectionCommand], decidingOn known: InspectionState, by actor: Actor, device: UUID,
        clock: any LedgerClock
    ) throws -> Recorded {
        let now = clock.now()
        let decided = try Self.decideEach(commands, on: known, at: now, by: actor, device: device)
        guard !decided.events.isEmpty else { return ([], known) }
        do {
            _ = try appendDecided(
                decided, stream: known.id, expected: [known.id: UInt64(known.eventCount)], actor: actor,
                device: device, at: now, plan: RecordingPlan(commands))
            return (decided.events, decided.states.last ?? known)
        } catch LedgerError.versionConflict {
            return try record(commands, on: known.id, by: actor, device: device, clock: clock)
        }
    }

    /// A plan's device-stream commands decided, and the stream version they expect.
    private struct DecidedBeside {
        var events: [DeviceStreamEvent]
        var version: UInt64
    }

    /// The decided events, and the plan's device-stream events beside them,
    /// appended in one transaction expecting the versions read.
    private func appendDecided(
        _ decided: Decided, stream id: UUID, expected: [UUID: UInt64], actor: Actor, device: UUID,
        at now: Timestamp, plan: RecordingPlan, beside events: [DeviceStreamEvent] = []
    ) throws -> [AppendOutcome] {
        let own = decided.events.map { $0.pending(stream: id, actor: actor, device: device, recordedAt: now) }
        let beside = events.map { $0.pending(device: device, actor: actor, recordedAt: now) }
        return try healing {
            // A fresh scratch per attempt: a retry after healing a view folds anew.
            let scratch = ProjectionScratch()
            DecidedStates.keep(decided.states, of: own, in: scratch)
            return try views.append(
                own + beside, expectedVersions: expected, carrying: Self.ordered(plan.carrying), scratch: scratch)
        }
    }

    /// The events of `commands` decided one after another, and the state they
    /// leave. Pure. A single refused command is thrown as it is; several
    /// refusals in a batch are thrown together (the same refusal for every
    /// command, such as "the inspection is completed", once).
    ///
    /// `device`: the device that records them, applied with them as the
    /// fold of the log applies it (nil leaves the state's own).
    public static func decide(
        _ commands: [InspectionCommand], on state: InspectionState, at time: Timestamp, by actor: Actor,
        device: UUID? = nil
    ) throws -> Recorded {
        let decided = try decideEach(commands, on: state, at: time, by: actor, device: device)
        return (decided.events, decided.states.last ?? state)
    }

    /// The events a decision produced and the state after each of them
    /// (`states[i]` is the state once `events[i]` is applied).
    typealias Decided = (events: [InspectionEvent], states: [InspectionState])

    /// `decide`, keeping the state after every event: what the views write
    /// for each appended record.
    static func decideEach(
        _ commands: [InspectionCommand], on state: InspectionState, at time: Timestamp, by actor: Actor,
        device: UUID?
    ) throws -> Decided {
        var after = state
        var events: [InspectionEvent] = []
        var states: [InspectionState] = []
        var refusals: [DomainError] = []
        for command in commands {
            do {
                let decided = try after.decide(command)
                // A start whose template is pinned already records no
                // `template.pinned`: the fold of the log takes the template
                // from the pinned ones, and so does this state.
                var pinned: [String: Template] = [:]
                if case .start(let start) = command, start.templateAlreadyPinned {
                    pinned[start.template.contentHash] = start.template
                }
                if case .receive(let copy) = command, copy.templateAlreadyPinned {
                    pinned[copy.template.templateHash] = copy.template.template
                }
                for event in decided {
                    after.apply(event, recordedAt: time, actor: actor, device: device, pinnedTemplates: pinned)
                    states.append(after)
                }
                events += decided
            } catch {
                refusals.append(error)
            }
        }
        if let first = refusals.first, refusals.count == 1 || refusals.allSatisfy({ $0 == first }) { throw first }
        if !refusals.isEmpty {
            throw RecordingError.batchRefused(
                inspection: state.id, refusals: refusals, accepted: commands.count - refusals.count)
        }
        return (events, states)
    }
}
