import Foundation
import Synchronization

/// A fresh directory under the system's temporary directory, removed when the
/// value is deinitialised, so every test gets its own ledger and tests can run
/// in parallel.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "ledger-test") {
        let base = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString.prefix(8))"
        // Created with 0700 like a real ledger directory.
        mkdir(base, 0o700)
        path = base
    }

    /// A path inside the directory.
    public func appending(_ component: String) -> String { path + "/" + component }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Paths a test process keeps for its whole life (a fixture a suite shares,
/// a verifier it built), removed when the process exits. `atexit` takes no
/// closure that captures, so the paths are kept here, and one handler
/// removes them all.
public enum ExitCleanup {
    private static let paths = Mutex<[String]>([])
    private static let handler: Void = { atexit { ExitCleanup.removeAll() } }()

    /// Removes `path` (a file or a whole directory) when the process exits.
    public static func remove(atExit path: String) {
        handler
        paths.withLock { $0.append(path) }
    }

    private static func removeAll() {
        for path in paths.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
