import LMDB

/// How a store is opened: the one choice a caller outside the storage layer
/// makes, so none of them spells LMDB's options.
public enum StoreAccess: Sendable, Equatable {
    /// A missing store is created (`jqc init`, library callers, tests).
    case creating
    /// The store must exist and may be written: a lost or replaced store is
    /// reported, never silently started over (every recording command).
    case recording
    /// Read-only: nothing is created or written, no writer lock is taken
    /// (listings, `verify`, backups, completion on a Tab).
    case reading
    /// Read-only without LMDB's lock file, for a copy on a read-only medium
    /// (`ReadOnlyOpening` falls back to it). Safe only when nobody writes.
    case readingWithoutLockFile

    /// Whether nothing may be written.
    public var isReadOnly: Bool { self == .reading || self == .readingWithoutLockFile }

    /// LMDB's options for this access, in the storage layer only.
    package var options: Environment.Options {
        var options = Environment.Options()
        switch self {
        case .creating:
            break
        case .recording:
            options.create = false
        case .reading:
            options.readOnly = true
            options.create = false
        case .readingWithoutLockFile:
            options.readOnly = true
            options.create = false
            options.noLock = true
        }
        return options
    }
}

extension EventLog {
    /// Opens the log stored in `directory` with `access` (see `StoreAccess`).
    public convenience init(directory: String, access: StoreAccess) throws {
        try self.init(directory: directory, options: access.options)
    }
}

/// What the storage says of itself (`jqc stats`).
public struct StorageInfo: Sendable, Equatable {
    /// The map size: the most the store can hold.
    public var mapSize: Int
    /// Bytes of the map in use (up to the last page written).
    public var usedBytes: Int
    /// Reader slots taken now, by every process.
    public var readersUsed: Int
}

extension EventLog {
    /// The storage's size and use.
    public func storageInfo() throws -> StorageInfo {
        let info: Environment.Info
        do {
            info = try environment.info()
        } catch {
            throw LedgerError.from(error, store: environment.path)
        }
        return StorageInfo(
            mapSize: info.mapSize, usedBytes: (info.lastPage + 1) * info.pageSize, readersUsed: info.readersUsed)
    }

    /// Copies the store, compacted, into the new directory `directory`, as
    /// one committed state even while another process records (LMDB's own
    /// copy inside one read transaction).
    public func copyStore(to directory: String) throws {
        do {
            try environment.copy(to: directory)
        } catch {
            throw LedgerError.from(error, store: directory)
        }
    }
}

extension EventLog {
    /// Whether the log was opened read-only (`StoreAccess.reading`…): nothing
    /// may be written through it.
    public var isReadOnly: Bool { environment.options.readOnly }
}

extension EventLog {
    /// The stores a salvage reads: the store itself when its file passes the
    /// pre-flight check, else copies of it in `scratch`, one for each meta
    /// page LMDB could start from (`StoreFile.salvageCopies`).
    public static func salvageSources(of directory: String, scratch: String) throws -> [String] {
        if case .success = StoreFile.check(directory: directory) { return [directory] }
        return try StoreFile.salvageCopies(of: directory, into: scratch)
    }
}
