import FoundationEssentials
import Glibc
import InspectionStore
import LedgerStore

/// The session kept between commands: who is logged in and their tokens.
public struct StoredSession: Codable, Sendable {
    public var user: ServerUser
    public var tokens: SessionTokens
    public var serverURL: String
    public var savedAt: String

    enum CodingKeys: String, CodingKey {
        case user, tokens
        case serverURL = "server_url"
        case savedAt = "saved_at"
    }

    public init(user: ServerUser, tokens: SessionTokens, serverURL: String, savedAt: String) {
        self.user = user
        self.tokens = tokens
        self.serverURL = serverURL
        self.savedAt = savedAt
    }
}

/// `credentials.json` beside the ledger's config: mode 0600, written
/// atomically, never copied into the log. Offline, the last known identity
/// keeps working: nothing here needs the network, and a refused or failed
/// request never removes the file (only `jqc logout` does).
public struct SessionStore: Sendable {
    public let path: String
    /// The lock a token refresh holds (`whileLocked`), beside the file.
    public let lockPath: String

    /// A session file at `path`; without `lockPath` (a session kept outside a
    /// ledger, a test's) the lock is `path` with `.lock` appended, which for a
    /// ledger's `credentials.json` is its `credentialsLockPath`.
    public init(path: String, lockPath: String? = nil) {
        self.path = path
        self.lockPath = lockPath ?? path + ".lock"
    }

    /// The session of the ledger in `home`.
    public init(_ home: LedgerDirectory) { self.init(path: home.credentialsPath, lockPath: home.credentialsLockPath) }

    /// Why the credentials file could not be used.
    public enum Failure: Error, CustomStringConvertible {
        /// The file exists but cannot be read or parsed.
        case unreadable(String, why: String)
        /// The file is readable by others, so it is not trusted.
        case insecure(String, mode: mode_t)
        /// The session could not be saved.
        case cannotWrite(String, why: String)

        public var description: String {
            switch self {
            case .unreadable(let path, let why):
                "The saved session in \(path) cannot be read (\(why)). Log in again with 'jqc login'."
            case .insecure(let path, let mode):
                "The saved session in \(path) is readable by others (mode \(String(mode, radix: 8))), so it was "
                    + "not used. Run 'chmod 600 \(path)', or log in again with 'jqc login'."
            case .cannotWrite(let path, let why):
                "The session could not be saved to \(path) (\(why)). Check that the ledger directory is writable "
                    + "and the disk is not full, then log in again."
            }
        }
    }

    /// The saved session, or nil when nobody is logged in.
    public func load() throws(Failure) -> StoredSession? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(path, why: String(cString: strerror(errno)))
        }
        // A token file others can read is refused rather than trusted.
        guard info.st_mode & 0o077 == 0 else { throw .insecure(path, mode: info.st_mode & 0o777) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable(path, why: "permission denied")
        }
        do {
            return try JSONDecoder().decode(StoredSession.self, from: data)
        } catch {
            // The decoder's message names keys and types, never values.
            throw .unreadable(path, why: "not a saved session: \(error)")
        }
    }

    /// Writes the session to a temporary file with mode 0600, fsyncs it and
    /// renames it into place, so a crash leaves the old session or the new one.
    public func save(_ session: StoredSession) throws(Failure) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do {
            data = try encoder.encode(session)
        } catch {
            throw .cannotWrite(path, why: "\(error)")
        }
        do {
            try DurableFile.write(data, to: path, mode: 0o600)
        } catch {
            throw .cannotWrite(path, why: "\(error.step): \(String(cString: strerror(error.code)))")
        }
    }

    /// Removes the saved session (logging out); no file is not an error.
    public func remove() throws(Failure) {
        if unlink(path) != 0 && errno != ENOENT {
            throw .cannotWrite(path, why: String(cString: strerror(errno)))
        }
    }

    /// Runs `body` holding an exclusive lock on `credentials.json.lock`.
    ///
    /// A refresh token is used up by its first use, so two processes that
    /// refresh at once would lock one of them out; under this lock the second
    /// one reloads the file and finds the tokens the first one saved.
    public func whileLocked<T>(_ body: () throws -> T) throws -> T {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure.cannotWrite(lockPath, why: String(cString: strerror(errno))) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw Failure.cannotWrite(lockPath, why: String(cString: strerror(errno)))
            }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
