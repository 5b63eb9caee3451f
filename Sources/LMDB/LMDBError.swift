import CLMDB
import FoundationEssentials
import Glibc

/// A failed LMDB call: which operation, LMDB's return code and its message.
///
/// Every return code of the C library goes through `check(_:_:)`, so no call
/// can be forgotten and every error says what was being done.
public struct LMDBError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the caller can do about a failure.
    public enum Kind: Equatable, Sendable {
        /// The map is full (it is fixed and 1 TiB, so this means a huge store).
        case mapFull
        /// Another process grew the map; `Environment` adopts the new size and retries.
        case mapResized
        /// `MDB_NOOVERWRITE` found the key already stored.
        case keyExists
        /// Too many concurrent readers; readers left by dead processes are
        /// cleared on open, so this means real load.
        case readersFull
        /// The file is not an LMDB environment, or one of another version.
        case invalidFile
        /// The store is damaged: the pre-flight check of `data.mdb` or LMDB
        /// itself found an inconsistency.
        case damaged
        /// There is no store where one was opened without `Options.create`.
        case missing
        /// The disk (or the user's quota) is full.
        case noSpace
        /// The store's map does not fit the process's address-space limit
        /// (`ENOMEM`; the message gives the limit and what is needed).
        case addressSpace
        /// Permission or I/O failure from the operating system.
        case system
        /// Anything else LMDB reports.
        case other
    }

    public var code: Int32
    public var message: String
    public var operation: String
    /// The table the failed call worked on, when it was one table's
    /// (emptying it: its name after a U+0001, see `damagedTable`).
    public var table: String?

    /// The table whose page a damage was met in, and whether the table was
    /// being emptied (`Transaction.empty`, a rebuild's first step).
    public var damagedTable: (name: String, emptying: Bool)? {
        guard kind == .damaged, let table else { return nil }
        return table.hasPrefix("\u{1}") ? (String(table.dropFirst()), true) : (table, false)
    }

    public var kind: Kind {
        switch code {
        case MDB_MAP_FULL: .mapFull
        case MDB_MAP_RESIZED: .mapResized
        case MDB_KEYEXIST: .keyExists
        case MDB_READERS_FULL: .readersFull
        case MDB_INVALID, MDB_VERSION_MISMATCH: .invalidFile
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND: .damaged
        case ENOENT: .missing
        case ENOSPC, EDQUOT: .noSpace
        case ENOMEM: .addressSpace
        case let c where c > 0: .system
        default: .other
        }
    }

    public init(code: Int32, operation: String, table: String? = nil) {
        self.code = code
        self.operation = operation
        self.message = String(cString: mdb_strerror(code))
        self.table = table
    }

    /// An error with its own message (the pre-flight check's findings).
    public init(code: Int32, operation: String, message: String) {
        self.code = code
        self.operation = operation
        self.message = message
    }

    public var description: String { "\(operation) failed: \(message) (LMDB code \(code))" }
}

/// Throws an `LMDBError` for any non-zero return code.
@inline(__always)
func check(_ rc: Int32, _ operation: @autoclosure () -> String, table: @autoclosure () -> String? = nil)
    throws(LMDBError)
{
    if rc != 0 { throw LMDBError(code: rc, operation: operation(), table: table()) }
}
