import LedgerCore

/// One moment as a clock: a use case given the time its command was typed
/// records every event at that time, whatever attempt records it.
struct RecordedAt: LedgerClock {
    let time: Timestamp
    init(_ time: Timestamp) { self.time = time }
    func now() -> Timestamp { time }
}
