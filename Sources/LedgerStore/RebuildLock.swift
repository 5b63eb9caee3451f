import FoundationEssentials
import Glibc
import LMDB
import LedgerCore

/// The advisory lock a rebuild holds on a file beside the store, so that a
/// command waiting for the writer lock behind it can say why. LMDB's own
/// writer lock cannot be tried without waiting; this one can.
public final class RebuildLock: Sendable {
    private let descriptor: Int32

    /// Opens (creating) the lock file; nil when that is impossible (a
    /// read-only copy of a ledger, where nothing is rebuilt or recorded).
    public init?(path: String) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        descriptor = fd
    }

    private func lock(_ operation: Int32) -> Bool {
        var result = flock(descriptor, operation)
        while result != 0 && errno == EINTR { result = flock(descriptor, operation) }
        return result == 0
    }

    /// Takes the lock exclusively (a rebuild), calling `waiting` first if
    /// another process holds it.
    public func exclusive(waiting: () -> Void) {
        if lock(LOCK_EX | LOCK_NB) { return }
        waiting()
        _ = lock(LOCK_EX)
    }

    /// Waits until no rebuild holds the lock (calling `waiting` first if one
    /// does), then lets go at once: a recording command only needs to know
    /// it is not queued behind a rebuild.
    public func waitForRebuilds(waiting: () -> Void) {
        if !lock(LOCK_SH | LOCK_NB) {
            waiting()
            _ = lock(LOCK_SH)
        }
        _ = lock(LOCK_UN)
    }

    public func unlock() { _ = lock(LOCK_UN) }

    deinit { close(descriptor) }
}
