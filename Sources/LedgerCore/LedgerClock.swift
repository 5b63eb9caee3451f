/// Where recorded-at times come from. The core never reads a clock itself;
/// the CLI passes the system clock and tests pass one they set.
public protocol LedgerClock: Sendable {
    func now() -> Timestamp
}
