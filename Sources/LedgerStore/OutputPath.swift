import FoundationEssentials
import Glibc
import LedgerCore

/// Where a command may write a file or directory the user named (`audit -o`,
/// `backup DEST`, `salvage DEST`): never inside the ledger directory.
///
/// A mistyped `-o store/data.mdb` once replaced the store with an audit
/// report, and `jqc backup LEDGER/photos` copied the ledger into itself. The
/// check resolves symbolic links and `..` before comparing, so neither a
/// link that points into the ledger nor `x/../store` slips through. It is
/// the one place every such command asks.
public enum OutputPath {
    /// Refuses `path` when it is the ledger directory `ledger` or anything
    /// under it. `what` names the output in the message ("the audit report").
    public static func requireOutside(
        ledger: String, _ path: String, what: String
    ) throws(OutputPathError) {
        let target = resolved(path)
        let home = resolved(ledger)
        if target == home || target.hasPrefix(home == "/" ? "/" : home + "/") {
            throw OutputPathError(path: path, resolved: target, ledger: home, what: what)
        }
    }

    /// `path` made absolute, with every symbolic link of its existing part
    /// resolved (`realpath`) and `.`/`..` of the part that does not exist yet
    /// taken away by name.
    public static func resolved(_ path: String) -> String {
        var absolute = path
        if !absolute.hasPrefix("/") { absolute = FileManager.default.currentDirectoryPath + "/" + absolute }
        var components = absolute.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var rest: [String] = []
        // The longest prefix that exists is resolved by the kernel; the rest is taken by name.
        while true {
            let prefix = "/" + components.joined(separator: "/")
            if let real = realPath(prefix) {
                var parts = real.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
                for part in rest.reversed() {
                    switch part {
                    case ".": continue
                    case "..": if !parts.isEmpty { parts.removeLast() }
                    default: parts.append(part)
                    }
                }
                return "/" + parts.joined(separator: "/")
            }
            guard let last = components.popLast() else { return "/" + rest.reversed().joined(separator: "/") }
            rest.append(last)
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }
}

/// A file the user named for output lies inside the ledger directory.
public struct OutputPathError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var resolved: String
    public var ledger: String
    public var what: String

    public var description: String {
        let through = resolved == path ? "" : " (it resolves to \(resolved))"
        return "\(path)\(through) is inside the ledger directory \(ledger); \(what) was not written, so none of the "
            + "ledger's own files can be replaced. Name a path outside the ledger."
    }
}

/// The directory a backup or salvage writes into, claimed so that nobody
/// else writes there at the same time: `DEST` is made by this run (or is an
/// existing empty directory, not a symbolic link), and `DEST/store` and
/// `DEST/photos` are made with `mkdir`, which fails if they exist. Of two
/// runs into one directory, one makes `DEST/store` and the other is refused;
/// a failed run removes only what it made.
public struct CopyDestination: Sendable {
    public let path: String
    /// Whether this run made `path` itself (else it was an empty directory).
    public let madeDirectory: Bool

    /// Claims `path` for `command` ("backup", "salvage"), refusing a path
    /// inside `ledger`, one that exists and is not an empty directory, and
    /// one another run has claimed.
    public static func claim(_ path: String, ledger: String, for command: String) throws -> CopyDestination {
        try OutputPath.requireOutside(ledger: ledger, path, what: "the \(command)")
        let parent = PathText.parent(path)
        if !parent.isEmpty, !FileManager.default.fileExists(atPath: parent) {
            do {
                try FileManager.default.createDirectory(
                    atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw Self.failure(creating: parent, code: Self.systemCode(of: error))
            }
        }
        var made = true
        if mkdir(path, 0o700) != 0 {
            let code = errno
            guard code == EEXIST else { throw Self.failure(creating: path, code: code) }
            var status = stat()
            guard lstat(path, &status) == 0 else { throw CopyDestinationError.cannotCreate(path: path, code: errno) }
            switch status.st_mode & S_IFMT {
            case S_IFLNK: throw CopyDestinationError.symbolicLink(path: path, command: command)
            case S_IFDIR: break
            default: throw CopyDestinationError.notADirectory(path: path, command: command)
            }
            let entries: [String]
            do {
                entries = try FileManager.default.contentsOfDirectory(atPath: path)
            } catch {
                throw CopyDestinationError.cannotCreate(path: path, code: Self.systemCode(of: error))
            }
            guard entries.isEmpty else { throw CopyDestinationError.notEmpty(path: path, command: command) }
            made = false
        }
        let destination = CopyDestination(path: path, madeDirectory: made)
        for (index, part) in [LedgerLayout.store, LedgerLayout.photos].enumerated()
        where mkdir(path + "/" + part, 0o700) != 0 {
            let code = errno
            // What this run made before the refusal is its own; the rest belongs to the other run.
            if index == 1 { rmdir(path + "/" + LedgerLayout.store) }
            if made && index == 1 { rmdir(path) }
            if code == EEXIST { throw CopyDestinationError.claimed(path: path + "/" + part, command: command) }
            throw Self.failure(creating: path + "/" + part, code: code)
        }
        return destination
    }

    /// Removes what a failed run wrote: the whole directory if this run made
    /// it, else what it put into the empty directory it was given.
    public func remove() {
        let files = FileManager.default
        // After a failure, which the caller reports: what cannot be removed is left for a person to see.
        if madeDirectory {
            try? files.removeItem(atPath: path)
        } else if let entries = try? files.contentsOfDirectory(atPath: path) {
            for entry in entries { try? files.removeItem(atPath: path + "/" + entry) }
        }
    }

    /// A full disk is named as such (a full disk once came out as "No such file or directory").
    private static func failure(creating path: String, code: Int32) -> any Error {
        if code == ENOSPC || code == EDQUOT {
            return LedgerError.noSpace(path: path, freeBytes: LedgerError.freeSpace(at: path))
        }
        return CopyDestinationError.cannotCreate(path: path, code: code)
    }

    private static func systemCode(of error: any Error) -> Int32 {
        if let posix = (error as? CocoaError)?.underlying as? POSIXError { return posix.code.rawValue }
        return EIO
    }
}

/// Why a backup or salvage refused its destination.
public enum CopyDestinationError: Error, CustomStringConvertible, Equatable {
    case notEmpty(path: String, command: String)
    case notADirectory(path: String, command: String)
    case symbolicLink(path: String, command: String)
    /// Another run made `path` first.
    case claimed(path: String, command: String)
    case cannotCreate(path: String, code: Int32)

    public var description: String {
        switch self {
        case .notEmpty(let path, let command):
            "\(path) is not empty; nothing was written. Name a new (or empty) directory for the \(command), so "
                + "no earlier copy is overwritten."
        case .notADirectory(let path, let command):
            "\(path) exists and is not a directory; nothing was written. Name a new directory for the \(command)."
        case .symbolicLink(let path, let command):
            "\(path) is a symbolic link; nothing was written. Name the directory for the \(command) itself, not "
                + "a link to it."
        case .claimed(let path, let command):
            "\(path) already exists: another backup or salvage is writing into the same directory; nothing was "
                + "written. Name a new directory for the \(command)."
        case .cannotCreate(let path, let code):
            "could not create \(path): \(String(cString: strerror(code))); nothing was written."
        }
    }
}
