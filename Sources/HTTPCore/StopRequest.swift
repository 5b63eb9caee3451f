import Synchronization

/// A request to stop, raised once (by a signal handler's thread, say) and
/// polled by a transport while a transfer is in progress, so a stalled
/// request ends within a second instead of waiting out its timeout.
///
/// Raising it never interrupts anything by itself: the transport checks it
/// between its own steps and gives up the transfer, reporting
/// `TransportError.stopped`, so whatever the caller does next (record an
/// outcome, or nothing) happens in order, never half-way.
public final class StopRequest: Sendable {
    private let raisedBy = Mutex<String?>(nil)
    private let cut = Mutex(false)

    public init() {}

    /// Asks every transfer polling this to stop; `reason` names what asked
    /// (`SIGTERM`). The first reason is kept.
    public func raise(_ reason: String) {
        raisedBy.withLock { current in
            if current == nil { current = reason }
        }
    }

    /// What asked to stop, or nil while nothing has.
    public var reason: String? { raisedBy.withLock { $0 } }

    public var isRaised: Bool { reason != nil }

    /// Called by a transport that gave up a transfer in progress for this
    /// request: the command then ends saying so, with a non-zero status.
    public func noteTransferStopped() { cut.withLock { $0 = true } }

    /// Whether a transfer was given up half-way because of this request.
    public var stoppedATransfer: Bool { cut.withLock { $0 } }
}
