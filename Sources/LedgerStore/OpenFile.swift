import FoundationEssentials
import Glibc

/// A file descriptor this process reads or writes, closed when the value
/// goes (if it owns the descriptor): what Foundation's `FileHandle` was for,
/// which the jqc binary cannot use since it links only FoundationEssentials.
/// Every read and write goes round `EINTR` and ends only when done or failed.
public final class OpenFile {
    /// The descriptor, valid until `close()`.
    public let descriptor: Int32
    /// What the messages call the file.
    public let name: String
    private let owned: Bool
    private var closed = false

    /// The process's standard streams (never closed by this value).
    public static var standardInput: OpenFile { OpenFile(borrowing: 0, name: "standard input") }
    public static var standardOutput: OpenFile { OpenFile(borrowing: 1, name: "standard output") }
    public static var standardError: OpenFile { OpenFile(borrowing: 2, name: "standard error") }

    /// Takes `descriptor` over: it is closed with this value.
    public init(owning descriptor: Int32, name: String) {
        precondition(descriptor >= 0, "an open file needs a descriptor")
        self.descriptor = descriptor
        self.name = name
        self.owned = true
    }

    private init(borrowing descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
        self.owned = false
    }

    /// Opens `path` to read (following no symbolic link only when asked).
    public convenience init(reading path: String) throws(OpenFileError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw OpenFileError(name: path, step: "opening", code: errno) }
        self.init(owning: descriptor, name: path)
    }

    /// Opens the existing file `path` to add to its end.
    public convenience init(appendingTo path: String) throws(OpenFileError) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw OpenFileError(name: path, step: "opening", code: errno) }
        self.init(owning: descriptor, name: path)
    }

    deinit {
        if owned && !closed { Glibc.close(descriptor) }
    }

    /// Up to `count` bytes, fewer only at the end of the file: none there.
    public func read(upTo count: Int) throws(OpenFileError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + filled, count - filled) }
            if got < 0 {
                if errno == EINTR { continue }
                throw OpenFileError(name: name, step: "reading", code: errno)
            }
            if got == 0 { break }
            filled += got
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Every byte left, to the end of the file.
    public func readToEnd() throws(OpenFileError) -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = try read(upTo: 65_536)
            all += chunk
            if chunk.count < 65_536 { return all }
        }
    }

    /// Writes every byte of `bytes` (`DurableFile.writeAll`: round `EINTR`
    /// and short writes, until done or a write says why not).
    public func write(_ bytes: some Collection<UInt8>) throws(OpenFileError) {
        if let code = DurableFile.writeAll(Array(bytes), to: descriptor) {
            throw OpenFileError(name: name, step: "writing", code: code)
        }
    }

    /// Writes `text` as UTF-8.
    public func write(_ text: String) throws(OpenFileError) { try write(Array(text.utf8)) }

    /// Closes the descriptor now, to hear of a failure (a write the disk refused late).
    public func close() throws(OpenFileError) {
        guard owned, !closed else { return }
        closed = true
        guard Glibc.close(descriptor) == 0 else { throw OpenFileError(name: name, step: "closing", code: errno) }
    }
}

/// A read, write, open or close of an `OpenFile` that failed, with the system's reason.
public struct OpenFileError: Error, CustomStringConvertible {
    public let name: String
    public let step: String
    public let code: Int32

    public init(name: String, step: String, code: Int32) {
        self.name = name
        self.step = step
        self.code = code
    }

    /// The system's reason, e.g. "No such file or directory".
    public var reason: String { String(cString: strerror(code)) }

    public var description: String { "\(step) \(name) failed: \(reason)" }
}
