import FoundationEssentials
import InspectionDomain
import LedgerCore
@_spi(RawAppend) import LedgerStore

extension InspectionLedger {
    /// The device's own stream folded (`DeviceState`).
    public func deviceState(of device: UUID) throws -> DeviceState {
        try healing { try log.read { reader in try Self.deviceState(of: device, reader: reader) } }
    }

    /// The device's own stream folded in the snapshot `reader`.
    static func deviceState(of device: UUID, reader: LedgerReader) throws -> DeviceState {
        var state = DeviceState(device: device)
        for record in try reader.records(inStream: device) {
            state.apply(
                try DeviceStreamEvent.decode(
                    type: record.type, schemaVersion: record.schemaVersion, payload: record.payload))
        }
        return state
    }

    /// The events of `commands`, decided one after another on the device
    /// stream's state, and that state after them.
    static func decide(_ commands: [DeviceCommand], on state: DeviceState) throws -> [DeviceStreamEvent] {
        var after = state
        var events: [DeviceStreamEvent] = []
        for command in commands {
            for event in try after.decide(command) {
                after.apply(event)
                events.append(event)
            }
        }
        return events
    }

    /// Decides `commands` on this device's own stream (`DeviceState`) and
    /// records their events in one durable transaction, expecting the
    /// stream version the decision read; another writer recording to the
    /// stream in between makes them be decided again (up to
    /// `recordingAttempts` times): the one way a key, a pin, a fork or a
    /// witness's answer is recorded. Answers the events recorded (none when
    /// the stream held them already).
    @discardableResult
    public func record(_ commands: [DeviceCommand], onStreamOf device: UUID, by actor: Actor, clock: any LedgerClock)
        throws -> [DeviceStreamEvent]
    {
        var conflicts = 0
        while true {
            let state = try deviceState(of: device)
            let events = try Self.decide(commands, on: state)
            guard !events.isEmpty else { return [] }
            let now = clock.now()
            do {
                try healing {
                    _ = try views.append(
                        events.map { $0.pending(device: device, actor: actor, recordedAt: now) },
                        expectedVersions: [device: UInt64(state.eventCount)])
                }
                return events
            } catch LedgerError.versionConflict {
                try Self.waitToDecideAgain(after: &conflicts, on: device)
            }
        }
    }
}
