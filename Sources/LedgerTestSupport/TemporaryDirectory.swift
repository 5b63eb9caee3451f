import Foundation

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
