import FoundationEssentials
import Glibc
import LedgerCore

/// Replaces a small file so that a crash leaves either the old contents or
/// the new, never a mix: written to a temporary file with the mode asked
/// for, fsynced, renamed into place, and the directory fsynced so the rename
/// itself survives a power cut. Used for photos, the config and credentials.
///
/// The temporary file is created with `O_CREAT | O_EXCL | O_NOFOLLOW` under a
/// name nobody can guess (the PID and 64 random bits): in a directory another
/// user can write (a backup's destination), a symbolic link planted at the
/// temporary name is never followed, so nobody can make this write (and its
/// `fchmod`) land on a file of theirs choosing.
public enum DurableFile {
    /// Writes `data` to `path` with permissions `mode` (applied explicitly:
    /// open() would subject it to the umask). Throws the failing step and the
    /// operating system's reason.
    ///
    /// The temporary file (`NAME.tmp-PID.RANDOM`) is made beside `path`, or in
    /// `staging` (a directory on the same filesystem, so the rename stays
    /// atomic) when one is given: then a directory of many files never has to
    /// be listed to find what a killed writer left behind. A missing staging
    /// directory is made (mode 0700).
    public static func write(
        _ data: Data, to path: String, mode: mode_t, staging: String? = nil
    ) throws(DurableFileError) {
        let name = PathText.lastComponent(path)
        if let staging, mkdir(staging, 0o700) != 0 && errno != EEXIST {
            throw DurableFileError(path: path, step: "creating \(staging)", code: errno)
        }
        let base = (staging.map { $0 + "/" + name } ?? path) + ".tmp-\(getpid())."
        var temporary = ""
        var fd: Int32 = -1
        // A name already taken is someone else's file (or link): never opened, another name is drawn.
        for _ in 0..<4 {
            temporary = base + String(UInt64.random(in: 0...UInt64.max), radix: 16)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw DurableFileError(path: path, step: "creating \(temporary)", code: errno) }
        var failure: DurableFileError?
        if fchmod(fd, mode) != 0 {
            failure = DurableFileError(path: path, step: "setting its mode", code: errno)
        } else if let code = writeAll(data, to: fd) {
            failure = DurableFileError(path: path, step: "writing", code: code)
        } else if fsync(fd) != 0 {
            failure = DurableFileError(path: path, step: "flushing to disk", code: errno)
        }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 {
            failure = DurableFileError(path: path, step: "renaming into place", code: errno)
        }
        if let failure {
            unlink(temporary)
            throw failure
        }
        let directory = PathText.parent(path)
        let dir = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dir >= 0 {
            // A directory that cannot be fsynced (some filesystems) still holds the renamed file.
            _ = fsync(dir)
            close(dir)
        }
    }
}

extension DurableFile {
    /// Writes all of `data` to `fd` (a file, or standard output); the
    /// `errno` of the write that failed, else nil. A short write (a disk that fills up part way) sets no
    /// `errno`, so it is continued until a write fails and says why: taking
    /// `errno` after a short write once named a stale "File exists" for a
    /// full disk.
    public static func writeAll(_ data: some ContiguousBytes, to fd: Int32) -> Int32? {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                let written = Glibc.write(fd, rest.baseAddress, rest.count)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                // write(2) gives 0 only for a count of 0; never spin on it.
                if written == 0 { return EIO }
                offset += written
            }
            return nil
        }
    }
}

/// Why a file could not be replaced.
public struct DurableFileError: Error, CustomStringConvertible {
    public var path: String
    public var step: String
    public var code: Int32

    public var description: String {
        "could not write \(path) (\(step)): \(String(cString: strerror(code)))"
    }
}
