import Foundation

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
/// keeps working.
public struct SessionStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// Why the credentials file could not be used.
    public enum Failure: Error, CustomStringConvertible {
        case unreadable(String)
        case insecure(String, mode: mode_t)
        case cannotWrite(String)

        public var description: String {
            switch self {
            case .unreadable(let why): "the saved session cannot be read (\(why)). Log in again with 'jqc login'."
            case .insecure(let path, let mode):
                "\(path) is readable by others (mode \(String(mode, radix: 8))); it was not used. "
                    + "Run 'chmod 600 \(path)' or log in again."
            case .cannotWrite(let why): "the session could not be saved: \(why)"
            }
        }
    }

    /// The saved session, or nil when nobody is logged in.
    public func load() throws -> StoredSession? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        // A token file others can read is refused rather than trusted.
        guard info.st_mode & 0o077 == 0 else { throw Failure.insecure(path, mode: info.st_mode & 0o777) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure.unreadable("permission denied")
        }
        do {
            return try JSONDecoder().decode(StoredSession.self, from: data)
        } catch {
            throw Failure.unreadable("\(error)")
        }
    }

    public func save(_ session: StoredSession) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(session)
        } catch {
            throw Failure.cannotWrite("\(error)")
        }
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw Failure.cannotWrite(String(cString: strerror(errno))) }
        fchmod(fd, 0o600)
        let written = data.withUnsafeBytes { raw in write(fd, raw.baseAddress, raw.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw Failure.cannotWrite(String(cString: strerror(errno)))
        }
    }

    public func remove() throws {
        if unlink(path) != 0 && errno != ENOENT { throw Failure.cannotWrite(String(cString: strerror(errno))) }
    }
}
