import FoundationEssentials
import Glibc
import LMDB
import LedgerCore

// MARK: - Reading the log without trusting it

/// One step of a scan of the whole log in position order (`LedgerReader.scan`):
/// a record, a stored value that is not one, or positions the log skips.
public enum LogEntry: Sendable {
    case record(EventRecord)
    /// The value stored at `position` is not a record.
    case unreadable(position: UInt64, reason: String)
    /// No record is stored at these positions, though later ones are.
    case missing(ClosedRange<UInt64>)
}

extension LedgerReader {
    /// The stream's entries in version order, read through the stream index
    /// (never by scanning the log), keeping every hole: an index entry whose
    /// record is gone or unreadable is an entry, not an error. This is what
    /// an auditor replays; `records(inStream:)` is for callers that trust the
    /// store and want an error at the first hole.
    public func history(ofStream stream: UUID) throws -> [StreamEntry] {
        var named: [(version: UInt64, position: UInt64?)] = []
        let prefix = stream.bytes
        try transaction.forEach(tables.streamIndex, from: prefix + BigEndian.bytes(1)) { key, value in
            guard key.count == 24, key.starts(with: prefix), let version = BigEndian.uint64(key, at: 16) else {
                return false
            }
            named.append((version, value.count == 8 ? BigEndian.uint64(value) : nil))
            return true
        }
        var names = TextCache()
        return try named.map { version, position in
            guard let position else {
                return .unreadable(
                    streamVersion: version, position: 0, reason: "its stream index entry is not a position")
            }
            do {
                // Unverified: the audit checks every link itself and shows a
                // changed record as its finding, not as an error here.
                guard let record = try unverifiedRecord(at: position, names: &names) else {
                    return .missing(streamVersion: version, position: position)
                }
                return .record(record)
            } catch LedgerError.corruptRecord(_, let error) {
                return .unreadable(streamVersion: version, position: position, reason: "\(error)")
            }
        }
    }

    /// The streams of the log whose id starts with `prefix` (one hex digit
    /// is enough), at most `limit`, from the stream index: every stream the
    /// log holds, discarded drafts included, whatever the views say.
    public func streams(matching prefix: IDPrefix, limit: Int = 10) throws -> [UUID] {
        try transaction.withCursor(tables.streamIndex) { cursor in
            var found: [UUID] = []
            var entry = try cursor.seek(atLeast: prefix.lowestKey)
            // Ids matching a prefix are contiguous in key order: stop at the first that does not.
            while let (key, _) = entry, key.count >= 16, found.count < limit {
                let stream = Array(key[0..<16])
                guard let id = UUID(bytes: stream), prefix.matches(id) else { break }
                found.append(id)
                // Skip the rest of this stream's entries: seek past its last possible version.
                entry = try cursor.seek(atLeast: stream + [UInt8](repeating: 0xFF, count: 8))
                if let (next, _) = entry, next.starts(with: stream) { entry = try cursor.next() }
            }
            return found
        }
    }

    /// The type of the stream's first record (its version 1), read through
    /// the stream index without checking its link; nil when the index names
    /// none or its record cannot be read.
    public func firstRecordType(ofStream stream: UUID) throws -> String? {
        guard let value = try transaction.get(tables.streamIndex, stream.bytes + BigEndian.bytes(UInt64(1))),
            value.count == 8, let position = BigEndian.uint64(value)
        else { return nil }
        do {
            return try unverifiedRecord(at: position)?.type
        } catch LedgerError.corruptRecord {
            return nil
        }
    }

    /// Calls `body` with every position from `position` on, in order, until
    /// it returns false: each stored record decoded, each value that does
    /// not decode as `.unreadable`, each run of positions without a record
    /// (before a later one) as `.missing`. Nothing is skipped in silence.
    public func scan(from position: UInt64 = 1, _ body: (LogEntry) throws -> Bool) throws {
        var expected = max(1, position)
        var names = TextCache()
        try transaction.forEachBorrowed(tables.events, from: BigEndian.bytes(expected)) { key, value in
            guard let stored = BigEndian.uint64(key), key.byteCount == 8 else {
                let shown = Hex.encode(Transaction.copy(key))
                return try body(.unreadable(position: expected, reason: "the key \(shown) is not a position"))
            }
            if stored > expected, try !body(.missing(expected...(stored - 1))) { return false }
            expected = stored &+ 1
            do {
                return try body(.record(try Self.decode(value, position: stored, names: &names)))
            } catch LedgerError.corruptRecord(_, let error) {
                return try body(.unreadable(position: stored, reason: "\(error)"))
            }
        }
    }
}

extension LedgerReader {
    /// The chain hash stored with the record at `position` (the first 32
    /// bytes of its value), as stored: `verify` is what checks it.
    public func chainHash(at position: UInt64) throws -> Digest256? {
        guard let value = try transaction.get(tables.events, BigEndian.bytes(position)), value.count >= 32 else {
            return nil
        }
        return Digest256(bytes: Array(value[0..<32]))
    }
}

extension EventLog {
    /// The stored chain hashes of `positions`, in one snapshot; positions
    /// without a record (or with a value too short to hold one) are left out.
    public func chainHashes(at positions: [UInt64]) throws -> [UInt64: Digest256] {
        try read { reader in
            var found: [UInt64: Digest256] = [:]
            for position in positions { found[position] = try reader.chainHash(at: position) }
            return found
        }
    }

    /// `LedgerReader.history(ofStream:)` in a snapshot of its own.
    public func history(ofStream stream: UUID) throws -> [StreamEntry] {
        try read { try $0.history(ofStream: stream) }
    }

    /// `LedgerReader.streams(matching:limit:)` in a snapshot of its own.
    public func streams(matching prefix: IDPrefix, limit: Int = 10) throws -> [UUID] {
        try read { try $0.streams(matching: prefix, limit: limit) }
    }
}

// MARK: - Opening for reading only

/// Opening a ledger that may be a copy on a read-only medium, or in a
/// directory made read-only (`chmod -R a-w`).
///
/// LMDB records readers in its lock file; when the directory is read-only
/// it cannot open (or create) that file, so the store is opened again
/// without it (`MDB_NOLOCK`). That is safe because nobody writes to a copy;
/// on a live ledger the lock file is writable and is used.
public enum ReadOnlyOpening {
    /// Runs `open` with `.reading` and, when it fails because the lock file
    /// cannot be opened or made, once more with `.readingWithoutLockFile`.
    /// Returns what `open` made and whether the lock file was skipped.
    public static func open<T>(_ open: (StoreAccess) throws -> T) throws -> (value: T, withoutLock: Bool) {
        do {
            return (try open(.reading), false)
        } catch let error where isLockRefusal(error) {
            return (try open(.readingWithoutLockFile), true)
        }
    }

    /// Whether opening failed because the lock file cannot be opened or made
    /// (a read-only directory or medium), which opening without it cures.
    public static func isLockRefusal(_ error: any Error) -> Bool {
        let lmdb: LMDBError
        switch error {
        case let error as LMDBError: lmdb = error
        case LedgerError.storage(let error): lmdb = error
        case LedgerError.unwritable: return true
        default: return false
        }
        return lmdb.code == EACCES || lmdb.code == EROFS || lmdb.code == EPERM
    }

    /// Fails with `ReadAccessError.permissionDenied` when any of `paths`
    /// exists but cannot be read by this process (a directory also needs
    /// search permission), so that an unreadable ledger is not mistaken for
    /// a missing one. Paths that do not exist are left to the caller.
    public static func checkReadable(_ paths: [String]) throws(ReadAccessError) {
        for path in paths {
            var info = stat()
            if stat(path, &info) != 0 {
                if errno == EACCES { throw .permissionDenied(path: path) }
                continue
            }
            let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
            if access(path, isDirectory ? R_OK | X_OK : R_OK) != 0, errno == EACCES || errno == EPERM {
                throw .permissionDenied(path: path)
            }
        }
    }

    /// `EventLog` opened read-only, without its lock file if need be.
    public static func log(directory: String) throws -> (log: EventLog, withoutLock: Bool) {
        let (log, withoutLock) = try open { try EventLog(directory: directory, access: $0) }
        return (log, withoutLock)
    }
}

/// A ledger this process may not read.
public enum ReadAccessError: Error, Equatable, CustomStringConvertible {
    case permissionDenied(path: String)

    public var description: String {
        switch self {
        case .permissionDenied(let path):
            "permission denied: \(path) cannot be read by this user. Ask its owner for read access "
                + "(for a copy: chmod -R a+rX), or run as a user who may read it."
        }
    }
}
