import CLMDB

/// A failed LMDB call: which operation, LMDB's return code and its message.
///
/// Every return code of the C library goes through `check(_:_:)`, so no call
/// can be forgotten and every error says what was being done.
public struct LMDBError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the caller can do about a failure.
    public enum Kind: Equatable, Sendable {
        /// The map is full; `Environment.write` grows it and retries.
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
        /// Permission or I/O failure from the operating system.
        case system
        /// Anything else LMDB reports.
        case other
    }

    public var code: Int32
    public var message: String
    public var operation: String

    public var kind: Kind {
        switch code {
        case MDB_MAP_FULL: .mapFull
        case MDB_MAP_RESIZED: .mapResized
        case MDB_KEYEXIST: .keyExists
        case MDB_READERS_FULL: .readersFull
        case MDB_INVALID, MDB_VERSION_MISMATCH, MDB_CORRUPTED: .invalidFile
        case let c where c > 0: .system
        default: .other
        }
    }

    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
        self.message = String(cString: mdb_strerror(code))
    }

    public var description: String { "\(operation) failed: \(message) (LMDB code \(code))" }
}

/// Throws an `LMDBError` for any non-zero return code.
@inline(__always)
func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
    if rc != 0 { throw LMDBError(code: rc, operation: operation()) }
}
