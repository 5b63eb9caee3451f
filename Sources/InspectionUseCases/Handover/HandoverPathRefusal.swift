import FoundationEssentials
import Glibc
import LedgerStore

/// Why `jqc receive` read nothing at the path it was given: nothing is
/// there, it is not a kind of file a handover can be (a directory, a FIFO,
/// a socket, a device), or it is larger than any handover file may be.
///
/// `Reception.read` judges the path by its kind and size before opening it,
/// so a FIFO nobody writes to cannot hang `receive` and `/dev/zero` or a
/// sparse file of gigabytes is not read first; the reason is said in words,
/// never as a Foundation error string.
public struct HandoverPathRefusal: Error, CustomStringConvertible, Equatable {
    /// The path as it was given.
    public var path: String
    /// What the path is, completing "PATH …".
    public var why: String
    /// What to do instead.
    public var advice: String

    public var description: String { "UNREADABLE: \(path) \(why); nothing was read or recorded. \(advice)" }

    static let nameTheFile = "Name the handover file itself, as 'jqc handover ID -o FILE' wrote it."

    /// A path that is there but is no regular file, by its kind.
    static func kind(_ type: FileAttributeType, path: String) -> HandoverPathRefusal {
        let what =
            switch type {
            case .typeDirectory: "a directory"
            case .typeSocket: "a socket"
            case .typeCharacterSpecial, .typeBlockSpecial: "a device"
            case .typeSymbolicLink: "a symbolic link to nothing (its target does not exist)"
            // Foundation names a FIFO no other way on Linux.
            default: "a FIFO (a named pipe) or another special file"
            }
        let advice =
            type == .typeDirectory || type == .typeSymbolicLink
            ? nameTheFile : "Save the handover file to disk first, then receive that file."
        return HandoverPathRefusal(path: path, why: "is \(what), not a handover file", advice: advice)
    }

    static func tooLarge(_ size: Int, limit: Int, path: String) -> HandoverPathRefusal {
        HandoverPathRefusal(
            path: path,
            why: "is \((size + (1 << 20) - 1) >> 20) MiB (\(size) bytes), larger than the \(limit >> 20) MiB a "
                + "handover file may be (photos are at most 50 MiB each)",
            advice: "Check that it is the handover file; ask the sender for it again ('jqc handover ID -o FILE').")
    }

    /// A path that cannot be examined or opened, by the system's reason.
    static func failure(_ error: any Error, path: String) -> HandoverPathRefusal {
        switch systemCode(of: error) {
        case ENOENT, ENOTDIR:
            HandoverPathRefusal(path: path, why: "does not exist", advice: "Check the path.")
        case EACCES, EPERM:
            HandoverPathRefusal(
                path: path, why: "cannot be read by this user (permission denied)",
                advice: "Check the file's permissions, or receive a copy this user may read.")
        case let code:
            HandoverPathRefusal(
                path: path, why: "cannot be read (\(String(cString: strerror(code)).lowercased()))",
                advice: "Check the path and the disk.")
        }
    }

    /// The POSIX reason behind a Foundation file error: its own code for
    /// the common cases, else the underlying `errno`, else EIO.
    static func systemCode(of error: any Error) -> Int32 {
        if let posix = error as? POSIXError { return posix.code.rawValue }
        if let file = error as? OpenFileError { return file.code }
        if let cocoa = error as? CocoaError {
            if let posix = cocoa.underlying as? POSIXError { return posix.code.rawValue }
            switch cocoa.code {
            case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
            case .fileReadNoPermission, .fileWriteNoPermission: return EACCES
            default: break
            }
        }
        return EIO
    }
}
