import FoundationEssentials
import Glibc

/// A program run to its end (posix_spawn, then waitpid): what Foundation's
/// `Process` was for, which the jqc binary cannot use since it links only
/// FoundationEssentials. Nothing is left running in the background: the
/// child is reaped before `run` returns.
public enum ChildProcess {
    /// Where the child's standard output and error go.
    public enum Output: Sendable {
        /// To this process's own (a terminal, for an editor).
        case inherited
        /// Into `Ending.output` and `Ending.errors`, read side by side so neither pipe fills.
        case captured
        /// Both into `Ending.output`, interleaved as written.
        case capturedTogether
    }

    /// How the child ended and what it wrote.
    public struct Ending: Sendable {
        /// The exit status, nil when a signal ended it.
        public var status: Int32?
        /// The signal that ended it, if one did.
        public var signal: Int32?
        public var output: [UInt8]
        public var errors: [UInt8]

        /// Exited with status 0.
        public var succeeded: Bool { status == 0 }
    }

    /// Runs `path` with `arguments` (not including the program's name),
    /// `environment` (this process's own when nil), standard input from
    /// /dev/null unless `inheritingInput`.
    public static func run(
        _ path: String, arguments: [String], environment: [String: String]? = nil, output: Output,
        inheritingInput: Bool = false
    ) throws(ChildProcessError) -> Ending {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if !inheritingInput { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }

        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        defer { for fd in outPipe + errPipe where fd >= 0 { close(fd) } }
        if output != .inherited {
            guard makePipe(&outPipe) else { throw .cannotStart(path, errno) }
            posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
            if output == .captured {
                guard makePipe(&errPipe) else { throw .cannotStart(path, errno) }
                posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
            } else {
                posix_spawn_file_actions_adddup2(&actions, outPipe[1], 2)
            }
        }

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }

        // Every signal at its default and none blocked, as a shell starts a
        // program: jqc ignores SIGPIPE, which a child would otherwise keep.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        var none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var pid: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { args in
            if let envp {
                return envp.withUnsafeBufferPointer { env in
                    posix_spawn(&pid, path, &actions, &attributes, args.baseAddress!, env.baseAddress!)
                }
            }
            return posix_spawn(&pid, path, &actions, &attributes, args.baseAddress!, environ)
        }
        guard rc == 0 else { throw .cannotStart(path, rc) }

        // The parent's copies of the write ends go, so the reads end with the child.
        closeEnd(&outPipe, 1)
        closeEnd(&errPipe, 1)
        let (out, err) = drain(outPipe[0], errPipe[0])
        // Closed before the wait: should the reading have stopped early, a
        // child still writing gets EPIPE and ends rather than waiting forever.
        closeEnd(&outPipe, 0)
        closeEnd(&errPipe, 0)

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw .cannotWait(path, errno) }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift cannot import as macros.
        let signal = status & 0x7F
        return Ending(
            status: signal == 0 ? (status >> 8) & 0xFF : nil, signal: signal == 0 ? nil : signal, output: out,
            errors: err)
    }

    /// Closes one end of a pipe, if open, and marks it closed (-1).
    private static func closeEnd(_ ends: inout [Int32], _ index: Int) {
        guard ends[index] >= 0 else { return }
        close(ends[index])
        ends[index] = -1
    }

    /// A pipe whose ends this process's other children do not inherit
    /// (posix_spawn's dup2 gives the child its own copies).
    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    /// Reads both descriptors (either may be -1) to their ends, whichever has something first.
    private static func drain(_ first: Int32, _ second: Int32) -> ([UInt8], [UInt8]) {
        var results: [[UInt8]] = [[], []]
        var fds = [
            pollfd(fd: first, events: Int16(POLLIN), revents: 0), pollfd(fd: second, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while fds.contains(where: { $0.fd >= 0 }) {
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let got = buffer.withUnsafeMutableBytes { Glibc.read(fds[index].fd, $0.baseAddress, $0.count) }
                if got > 0 {
                    results[index] += buffer[..<got]
                } else if got == 0 || errno != EINTR {
                    fds[index].fd = -1  // poll ignores a negative descriptor
                }
            }
        }
        return (results[0], results[1])
    }
}

/// A child process that could not be started or waited for.
public enum ChildProcessError: Error, CustomStringConvertible {
    case cannotStart(String, Int32)
    case cannotWait(String, Int32)

    public var description: String {
        switch self {
        case .cannotStart(let path, let code): "\(path) could not be started: \(String(cString: strerror(code)))"
        case .cannotWait(let path, let code): "waiting for \(path) failed: \(String(cString: strerror(code)))"
        }
    }
}
