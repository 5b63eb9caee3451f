import FoundationEssentials
import Glibc
import LedgerCore
import LedgerStore

/// The ledger's own photo store: each captured file is copied into
/// `photos/<sha256>` so the log can reference it by hash, never by a path
/// that may move or be edited later.
public struct PhotoStore: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// What was stored.
    public struct StoredPhoto: Hashable, Sendable {
        public var sha256: String
        public var size: Int
        public var mediaType: String
    }

    /// Why a file cannot be captured.
    public enum Failure: Error, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case notAnImage(path: String)
        case empty(path: String)
        case tooLarge(path: String, size: Int)
        case cannotStore(String)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason):
                "cannot read \(path): \(reason); nothing was recorded. Check the path."
            case .notAnImage(let path):
                "\(path) is not a JPEG, PNG, GIF, WebP or HEIC image; nothing was recorded. Capture an image file."
            case .empty(let path): "\(path) is empty; nothing was recorded."
            case .tooLarge(let path, let size):
                "\(path) is \(size / 1_048_576) MiB, over the 50 MiB limit; nothing was recorded. Resize it first."
            case .cannotStore(let why): "could not store the photo: \(why)"
            }
        }
    }

    public static let maximumSize = 50 << 20

    /// A file read and described, not yet kept: a command decides first and
    /// keeps the file only when the event will be recorded.
    public struct PreparedPhoto: Sendable {
        public let description: StoredPhoto
        let data: Data
    }

    /// Copies the file at `path` into the store (durably) and describes it.
    public func store(fileAt path: String) throws -> StoredPhoto {
        let prepared = try prepare(fileAt: path)
        try keep(prepared)
        return prepared.description
    }

    /// Reads and checks the file at `path` without storing anything.
    ///
    /// `exactPath` is the path's bytes when they are not valid UTF-8 (a
    /// name in another encoding): the file is opened by them, and messages
    /// show the name with each invalid byte as `\xHH`.
    public func prepare(fileAt path: String, exactPath: [UInt8]? = nil) throws -> PreparedPhoto {
        let data = try Self.readRegularFile(path, exactPath: exactPath)
        let shown = exactPath.map(Self.shownName) ?? TerminalText.singleLine(path)
        guard !data.isEmpty else { throw Failure.empty(path: shown) }
        guard data.count <= Self.maximumSize else { throw Failure.tooLarge(path: shown, size: data.count) }
        guard let mediaType = Self.mediaType(of: data) else { throw Failure.notAnImage(path: shown) }
        let hash = SHA256Hasher().digest(Array(data)).hex
        return PreparedPhoto(description: StoredPhoto(sha256: hash, size: data.count, mediaType: mediaType), data: data)
    }

    /// Checks bytes that arrived without a file of their own (a handover
    /// file's photos) as `prepare(fileAt:)` checks a file; `name` says which.
    public func prepare(data: Data, name: String) throws -> PreparedPhoto {
        guard !data.isEmpty else { throw Failure.empty(path: name) }
        guard data.count <= Self.maximumSize else { throw Failure.tooLarge(path: name, size: data.count) }
        guard let mediaType = Self.mediaType(of: data) else { throw Failure.notAnImage(path: name) }
        let hash = SHA256Hasher().digest(Array(data)).hex
        return PreparedPhoto(description: StoredPhoto(sha256: hash, size: data.count, mediaType: mediaType), data: data)
    }

    /// Whether the store has a file named `sha256` (its contents unread).
    public func holds(sha256: String) -> Bool {
        PhotoStore.isPhotoName(sha256) && FileManager.default.fileExists(atPath: directory + "/" + sha256)
    }

    /// Stores a prepared file under its hash (once: the same bytes are kept
    /// once). Answers whether this call wrote the file, so that a caller
    /// whose event then fails to commit can `discard` exactly what it added.
    @discardableResult
    public func keep(_ prepared: PreparedPhoto) throws -> Bool {
        let target = directory + "/" + prepared.description.sha256
        guard !FileManager.default.fileExists(atPath: target) else { return false }
        do {
            try DurableFile.write(prepared.data, to: target, mode: 0o600, staging: stagingDirectory)
        } catch {
            if error.code == ENOSPC || error.code == EDQUOT {
                throw LedgerError.noSpace(path: directory, freeBytes: LedgerError.freeSpace(at: directory))
            }
            throw Failure.cannotStore(error.description)
        }
        return true
    }

    /// Removes a file `keep` just wrote, when the event that was to name it
    /// did not commit: a photo file stays only once its event is in the log.
    public func discard(_ prepared: PreparedPhoto) {
        unlink(directory + "/" + prepared.description.sha256)
    }

    /// The same, by the description of what `keep` wrote (a caller that
    /// holds no photo's bytes any longer).
    public func discard(_ photo: StoredPhoto) {
        unlink(directory + "/" + photo.sha256)
    }

    /// Where a capture writes its file before renaming it into place: a
    /// directory of its own, so that finding what a killed capture left
    /// behind lists a few names, not every photo of the ledger (which made
    /// every recording command pay for the size of the photo store).
    public var stagingDirectory: String { directory + "/" + LedgerLayout.photoStaging }

    /// Removes the temporary files (`NAME.tmp-PID.RANDOM`) that a capture or
    /// a reception killed mid-write left behind in `stagingDirectory`
    /// (`staleTemporaries`). Answers the names removed.
    @discardableResult
    public func removeStaleTemporaries() -> [String] {
        // Housekeeping at a writable open, which a staging directory that
        // cannot be listed must not stop: `jqc check --photos` names it.
        ((try? staleTemporaries()) ?? []).map(\.name).filter { unlink(stagingDirectory + "/" + $0) == 0 }
    }

    /// A temporary file whose writer is gone: its name, and the process
    /// that wrote it.
    public struct StaleTemporary: Equatable, Sendable {
        public var name: String
        public var pid: Int32
    }

    /// The temporary files of `stagingDirectory` whose process PID (in
    /// their name, `NAME.tmp-PID.RANDOM`) is no longer running: what a
    /// capture or a reception killed mid-write (kill -9, a power cut) left.
    /// A running writer's files are never among them. A staging directory
    /// that cannot be listed is an error, never "nothing stale".
    public func staleTemporaries() throws -> [StaleTemporary] {
        // No staging directory: no capture ever started, nothing stale.
        guard FileManager.default.fileExists(atPath: stagingDirectory) else { return [] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: stagingDirectory)
        } catch {
            throw Failure.unreadable(path: stagingDirectory, reason: "the staging directory cannot be listed")
        }
        var stale: [StaleTemporary] = []
        for name in names.sorted() {
            // `NAME.tmp-PID.RANDOM` (or `NAME.tmp-PID`, as earlier builds named them).
            guard let marker = name.utf8.ranges(of: ".tmp-".utf8).last,
                let pid = Int32(name[marker.upperBound...].prefix { $0 != "." }), pid > 0
            else { continue }
            // ESRCH: no such process. A live writer's file is left alone.
            if kill(pid, 0) != 0 && errno == ESRCH { stale.append(StaleTemporary(name: name, pid: pid)) }
        }
        return stale
    }

    /// The stored photo files (names of 64 hex digits), sorted. A photo
    /// directory that does not exist holds none; one that cannot be listed is
    /// an error, not an empty store.
    public func storedNames() throws -> [String] {
        guard FileManager.default.fileExists(atPath: directory) else { return [] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory).filter(Self.isPhotoName).sorted()
        } catch {
            throw Failure.unreadable(path: directory, reason: "the photo directory cannot be listed")
        }
    }

    /// Whether `name` is a stored photo's file name (64 lowercase hex digits),
    /// as opposed to a temporary file of an unfinished capture.
    public static func isPhotoName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The stored bytes of a photo, if present.
    public func contents(sha256: String) -> Data? {
        FileManager.default.contents(atPath: directory + "/" + sha256)
    }

    /// Whether the stored file still hashes to its name.
    public enum Check: Equatable, Sendable {
        case matches
        case missing
        case altered(actual: String)
    }

    public func check(sha256: String) -> Check {
        guard let data = contents(sha256: sha256) else { return .missing }
        let actual = SHA256Hasher().digest(Array(data)).hex
        return actual == sha256 ? .matches : .altered(actual: actual)
    }

    /// Reads a regular file of at most `maximumSize` (+1, to tell "too large")
    /// bytes. What is not a regular file is named as what it is: a directory,
    /// a FIFO (which would block) or a device like /dev/zero (which never
    /// ends) is refused before a byte is read, and the reason is the real one.
    static func readRegularFile(_ path: String, exactPath: [UInt8]? = nil) throws -> Data {
        let shown = exactPath.map(Self.shownName) ?? TerminalText.singleLine(path)
        // O_NONBLOCK: opening a FIFO nobody writes to must not hang.
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK
        let fd =
            // The path and its terminating zero: never empty, so never without an address.
            exactPath.map { bytes in
                (bytes + [0]).withUnsafeBufferPointer { raw in
                    raw.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, flags) }
                }
            } ?? open(path, flags)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT && path.contains("\u{FFFD}") {
                throw Failure.unreadable(
                    path: shown,
                    reason: "its name contains bytes that are not UTF-8 (shown as \u{FFFD}), which jqc cannot pass on "
                        + "as typed; rename the file")
            }
            throw Failure.unreadable(path: shown, reason: String(cString: strerror(code)).lowercased())
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw Failure.unreadable(path: shown, reason: String(cString: strerror(errno)).lowercased())
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw Failure.unreadable(path: shown, reason: "it is a directory, not an image file")
        case S_IFIFO: throw Failure.unreadable(path: shown, reason: "it is a FIFO (a pipe), not an image file")
        case S_IFCHR, S_IFBLK: throw Failure.unreadable(path: shown, reason: "it is a device, not an image file")
        case S_IFSOCK: throw Failure.unreadable(path: shown, reason: "it is a socket, not an image file")
        default: throw Failure.unreadable(path: shown, reason: "it is not a regular file")
        }
        if Int(status.st_size) > maximumSize { throw Failure.tooLarge(path: shown, size: Int(status.st_size)) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while data.count <= maximumSize {
            let count = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress, raw.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure.unreadable(path: shown, reason: String(cString: strerror(errno)).lowercased())
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// A file name's bytes as text to show: its valid UTF-8 as it is (with
    /// controls escaped, `TerminalText`), each invalid byte as `\xHH`.
    static func shownName(_ bytes: [UInt8]) -> String {
        var shown = ""
        var start = 0
        while start < bytes.count {
            // The longest valid prefix from `start` is kept as text.
            var end = bytes.count
            while end > start, String(validating: bytes[start..<end], as: UTF8.self) == nil { end -= 1 }
            if end > start {
                shown += TerminalText.singleLine(String(decoding: bytes[start..<end], as: UTF8.self))
                start = end
            } else {
                shown += "\\x" + String(bytes[start], radix: 16, uppercase: true).leftPadded(to: 2)
                start += 1
            }
        }
        return shown
    }

    /// Recognises images by their first bytes, not their file name.
    static func mediaType(of data: Data) -> String? {
        let b = [UInt8](data.prefix(12))
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if b.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if b.count >= 12, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) {
            return "image/webp"
        }
        if b.count >= 12, Array(b[4..<8]) == Array("ftyp".utf8),
            ["heic", "heix", "mif1", "heif"].contains(String(decoding: b[8..<12], as: UTF8.self))
        {
            return "image/heic"
        }
        return nil
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension PhotoStore.Failure {

    /// What is wrong with bytes that arrived without a file of their own
    /// (`prepare(data:name:)`), as a clause after their name: a handover
    /// file's photo is refused with it.
    public var refusedFile: String {
        switch self {
        case .notAnImage: "is not a JPEG, PNG, GIF, WebP or HEIC image"
        case .empty: "is empty"
        case .tooLarge(_, let size): "is \(size / 1_048_576) MiB, over the 50 MiB limit of a photo"
        case .unreadable(_, let reason): "cannot be read: \(reason)"
        case .cannotStore(let why): "cannot be stored: \(why)"
        }
    }
}
