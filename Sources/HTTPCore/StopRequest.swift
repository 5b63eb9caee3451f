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
}
