import FoundationEssentials
import Glibc

/// The exclusive `flock` on `<ledger>/sync.lock` that makes one sync at a
/// time per ledger.
///
/// Two workers would send the same items at once; their idempotency keys
/// would keep the server right, but both would record outcomes and count
/// attempts twice. The lock is taken without waiting, held for a whole run
/// (or a whole `--watch`), and released by the kernel if the process dies,
/// so a killed sync never leaves a stale lock behind. Recording commands do
/// not take it: they never wait for a sync.
public final class SyncLock {
    private var descriptor: Int32

    /// Why the lock was not taken.
    public enum Failure: Error, CustomStringConvertible {
        /// Another process holds it.
        case held(String)
        /// The lock file could not be opened or locked.
        case unavailable(String, why: String)

        public var description: String {
            switch self {
            case .held(let path):
                "Another sync of this ledger is running (it holds \(path)). Only one runs at a time. Wait for it "
                    + "to finish, or stop it (Ctrl-C for 'jqc sync --watch'). If it is the background service "
                    + "('jqc service status'), it sends the outbox by itself: 'jqc status' shows what is left."
            case .unavailable(let path, let why):
                "The sync lock \(path) could not be taken (\(why)). Check that the ledger directory is writable."
            }
        }
    }

    /// Takes the lock at `path`, or fails at once if another process holds it.
    public init(path: String) throws(Failure) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .unavailable(path, why: String(cString: strerror(errno))) }
        var result = flock(fd, LOCK_EX | LOCK_NB)
        while result != 0 && errno == EINTR { result = flock(fd, LOCK_EX | LOCK_NB) }
        if result != 0 {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw .held(path) }
            throw .unavailable(path, why: String(cString: strerror(code)))
        }
        descriptor = fd
    }

    /// Releases the lock; also done when the value goes away.
    public func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
