import Foundation
import InspectionStore

/// What `jqc sync --daemon` watches between runs, cheaply (a `stat` of a
/// few files a second, no reading of the store): the ledger's `store-head`
/// (rewritten in place by every commit, so a submit is seen within a
/// second), `credentials.json` (a new `jqc login`), `config.json` (a new
/// server or witness), and the kernel's routes and addresses
/// (`/proc/net/route`, `/proc/net/if_inet6`: the network coming back).
public struct LedgerWatch: Sendable {
    /// What changed since the last look.
    public struct Changes: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Something was recorded (a submit, an answer, the daemon's own outcomes).
        public static let ledger = Changes(rawValue: 1)
        /// The saved session was replaced or removed.
        public static let session = Changes(rawValue: 2)
        /// The configuration changed.
        public static let config = Changes(rawValue: 4)
        /// A route or an address came or went.
        public static let network = Changes(rawValue: 8)
    }

    let ledgerFiles: [String]
    let sessionFile: String
    let configFile: String
    let networkFiles: [String]
    private var seen: [String: String] = [:]

    public init(_ directory: LedgerDirectory, networkFiles: [String] = ["/proc/net/route", "/proc/net/if_inet6"]) {
        ledgerFiles = [directory.path + "/store-head", directory.storePath + "/data.mdb"]
        sessionFile = directory.credentialsPath
        configFile = directory.configPath
        self.networkFiles = networkFiles
        _ = look()
    }

    /// What changed since the previous call (or since `init`).
    public mutating func look() -> Changes {
        var changes: Changes = []
        for path in ledgerFiles where note(path, Self.stamp(path)) { changes.insert(.ledger) }
        if note(sessionFile, Self.stamp(sessionFile)) { changes.insert(.session) }
        if note(configFile, Self.stamp(configFile)) { changes.insert(.config) }
        // procfs files have no useful times: their (small) text is the state.
        for path in networkFiles where note(path, Self.content(path)) { changes.insert(.network) }
        return changes
    }

    /// Records `value` for `path`; answers whether it differs from the last one.
    private mutating func note(_ path: String, _ value: String) -> Bool {
        defer { seen[path] = value }
        guard let previous = seen[path] else { return false }
        return previous != value
    }

    /// The file's modification time (ns), size and inode; "absent" when there is none.
    static func stamp(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "absent" }
        return "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_size) \(info.st_ino)"
    }

    /// A procfs file's text, without the counters that change on their own (none in these two).
    /// Read with `read(2)` to the end: procfs reports a size of 0.
    static func content(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "absent" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65_536 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
