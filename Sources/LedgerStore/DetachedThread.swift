import Glibc

/// A thread of its own for work that mostly waits (a request in flight, a
/// watch on the ledger's files), started and left to end by itself: what
/// Foundation's `Thread` was for, which the jqc binary cannot use since it
/// links only FoundationEssentials. Dispatch's pool runs no more blocks at
/// once than there are cores, so waiting work needs threads of its own.
public enum DetachedThread {
    /// Starts `body` on a new detached thread called `name` (as `top -H`
    /// shows it: its first 15 bytes), or throws when the system has no
    /// thread to give (`pthread_create` fails: a limit on processes or on
    /// memory), having run nothing; each caller says what it does instead.
    public static func start(
        named name: String, _ body: @escaping @Sendable () -> Void
    ) throws(ThreadStartFailure) {
        let context = Unmanaged.passRetained(Work(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, run, context)
        guard rc == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            throw ThreadStartFailure(name: name, code: rc)
        }
        pthread_detach(thread)
    }

    /// Starts threads: `start`, or a stand-in that a test makes fail.
    public typealias Starter = @Sendable (String, @escaping @Sendable () -> Void) throws(ThreadStartFailure) -> Void

    /// The new thread's start: takes the work over (its retain) and runs it.
    private static let run: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
        let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
        nameThisThread(work.name)
        work.body()
        return nil
    }

    /// What `pthread_setname_np` does for the calling thread (which Swift
    /// cannot import without `_GNU_SOURCE`): its name in /proc. Only a
    /// diagnostic, so a system without /proc leaves the thread unnamed.
    private static func nameThisThread(_ name: String) {
        let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard file >= 0 else { return }
        defer { close(file) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
    }

    private final class Work: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

/// A thread that could not be started, and the system's reason.
public struct ThreadStartFailure: Error, CustomStringConvertible {
    public let name: String
    /// `pthread_create`'s error number.
    public let code: Int32

    public init(name: String, code: Int32) {
        self.name = name
        self.code = code
    }

    public var description: String {
        "could not start the thread \(name): \(String(cString: strerror(code)))"
    }
}
