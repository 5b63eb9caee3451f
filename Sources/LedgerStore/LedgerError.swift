import FoundationEssentials
import Glibc
import LMDB
import LedgerCore

/// Why the event log refused or failed an operation. Each message says what
/// failed, why, and what to do.
public enum LedgerError: Error, CustomStringConvertible {
    /// Another writer appended to the stream after the caller read it.
    case versionConflict(stream: UUID, expected: UInt64, actual: UInt64)
    /// An event id that is already stored was appended with other content.
    case eventIDReused(id: UUID, position: UInt64)
    /// The directory holds a ledger of a format this program does not know.
    case unsupportedFormat(found: String)
    /// The directory holds no ledger (opened read-only or for an audit).
    case noLedger(path: String)
    /// A stored record could not be decoded.
    case corruptRecord(position: UInt64, RecordError)
    /// The storage engine failed.
    case storage(LMDBError)
    /// A caller passed an event that cannot be stored.
    case invalidEvent(String)
    /// The store's files are damaged (`what` says how); nothing was read or written past the damage.
    case damagedStore(path: String, what: String)
    /// The directory holds an LMDB environment that is not a ledger (another
    /// program's, or one whose ledger tables are gone). It was not changed.
    case notALedger(path: String, why: String)
    /// The disk holding the store is full; the transaction was not committed.
    case noSpace(path: String, freeBytes: UInt64)
    /// The store filled its fixed map (1 TiB by default); nothing was committed.
    case mapFull(path: String)
    /// The store's map does not fit the process's address-space limit
    /// (`why` gives the limit and the size needed); nothing was read or written.
    case addressSpace(path: String, why: String)
    /// The store is older than the head this device recorded for it
    /// (`StoreHead`): commits are missing (a meta page rewritten, an older
    /// `data.mdb` copied into place), or, with `replaced`, the record at the
    /// recorded position is another one.
    case rolledBack(path: String, headFile: String, recorded: LedgerDigest, found: LedgerDigest, replaced: Bool)
    /// A record's chain link does not match its contents or its predecessor:
    /// it was changed after it was written.
    case brokenChain(position: UInt64, what: String)
    /// The store's files cannot be opened for writing: the file system is
    /// mounted read-only (`EROFS`) or this user may not write them
    /// (`EACCES`/`EPERM`, `permissionDenied`). Nothing was changed.
    case unwritable(path: String, permissionDenied: Bool)
    /// The system refused memory (`ENOMEM`) while `operation` ran, and the
    /// process has no address-space limit to blame: memory is short.
    case outOfMemory(path: String, operation: String)
    /// A page of a view's table (`view:*`, derived from the log) is damaged;
    /// `emptying` when it was met while a rebuild emptied that table.
    case damagedView(path: String, table: String, emptying: Bool)

    public var description: String {
        switch self {
        case .versionConflict(let stream, let expected, let actual):
            "stream \(stream.lowercased) is at version \(actual), not \(expected): another writer recorded to it first. "
                + "Read it again and retry."
        case .eventIDReused(let id, let position):
            "event id \(id.lowercased) is already stored at position \(position) with different content. "
                + "Each event needs a fresh id; a retry must resend the identical event."
        case .unsupportedFormat(let found):
            "the ledger's format is '\(found)', which this version of jqc does not read. Upgrade jqc."
        case .noLedger(let path):
            "no ledger at \(path). Create one with 'jqc init' or pass --ledger PATH."
        case .corruptRecord(let position, let error):
            "record \(position) cannot be read: \(error). Run 'jqc verify' to locate damage."
        case .storage(let error):
            "the ledger's storage failed: \(error)"
        case .invalidEvent(let why):
            "invalid event: \(why)"
        case .damagedStore(let path, let what):
            "the ledger's store at \(path) is damaged: \(what). Nothing was changed. Restore it from a backup "
                + "(see 'jqc backup'), or copy the records that still verify into a new ledger with 'jqc salvage DEST'."
        case .notALedger(let path, let why):
            "\(path) is not a ledger: \(why). Nothing was changed. Point --ledger at a ledger, or create one "
                + "elsewhere with 'jqc init'."
        case .noSpace(let path, let free):
            "no space left on the device holding \(path) (\(free / 1024) KiB free); nothing was written. "
                + "Free some space and run the command again."
        case .mapFull(let path):
            "the ledger's store at \(path) has filled its map (the most it was opened to hold); nothing was written. "
                + "Copy it with 'jqc backup DEST' (which compacts it) and use the copy."
        case .addressSpace(let path, let why):
            "the ledger's store at \(path) cannot be opened: \(why). Nothing was changed. Raise the limit (or run "
                + "jqc without one); the store itself is not damaged."
        case .rolledBack(let path, let headFile, let recorded, let found, let replaced):
            Self.rolledBackText(path: path, headFile: headFile, recorded: recorded, found: found, replaced: replaced)
        case .brokenChain(let position, let what):
            "record \(position) fails its chain check (\(what)): the ledger was changed after it was written, "
                + "so nothing is shown or recorded on top of it. Run 'jqc verify' to see the damage, then restore a "
                + "backup or use 'jqc salvage DEST'."
        case .unwritable(let path, let permissionDenied):
            (permissionDenied
                ? "the ledger's store at \(path) cannot be opened for writing: permission denied (this user may not "
                    + "write its files). Nothing was recorded. Run jqc as the user who owns the ledger, or give this "
                    + "user write permission on it"
                : "the ledger's store at \(path) is on a read-only file system, so nothing can be recorded in it. "
                    + "Nothing was changed. Remount it read-write, or copy the whole ledger directory somewhere "
                    + "writable and use the copy")
                + "; the commands that only read (show, inspections, log, audit, verify) work as it is."
        case .outOfMemory(let path, let operation):
            "the system refused memory (ENOMEM) while \(operation) for the ledger's store at \(path); this process "
                + "has no address-space limit, so memory itself is short (or a memory cgroup, or "
                + "vm.overcommit_memory=2, forbids the map). Nothing was changed; the store is not damaged. Free "
                + "some memory or close other programs, then run the command again."
        case .damagedView(let path, let table, let emptying):
            Self.damagedViewText(path: path, table: table, emptying: emptying)
        }
    }

    /// `rolledBack`'s text: a store replaced or gone back in time, and the
    /// ways out (a backup, a salvage, or accepting it on purpose).
    private static func rolledBackText(
        path: String, headFile: String, recorded: LedgerDigest, found: LedgerDigest, replaced: Bool
    ) -> String {
        (replaced
            ? "the ledger's store at \(path) was replaced: its record at position \(recorded.position) is not "
                + "the one this device recorded there (\(headFile) holds \(recorded))"
            : "the ledger's store at \(path) went back in time: it ends at position \(found.position), but this "
                + "device recorded up to \(recorded.position) (\(headFile)), so "
                + "\(recorded.position - found.position) record\(recorded.position - found.position == 1 ? " is" : "s are") "
                + "missing (the commits after it were lost, or an older copy of data.mdb was put in place)")
            + ". Nothing was read or changed. Restore the latest backup (copy its whole directory, 'jqc backup' "
            + "writes its own store-head), or copy what this store still holds into a new ledger with 'jqc "
            + "salvage DEST'. If an older store was put here on purpose, remove \(headFile) to accept it."
    }

    /// `damagedView`'s text: what a damaged page of a view's table means and
    /// what to run, whether or not a rebuild met it.
    private static func damagedViewText(path: String, table: String, emptying: Bool) -> String {
        emptying
            ? "a page of the view table \(table) in the ledger's store at \(path) is damaged, so the rebuild "
                + "cannot clear that table in place; nothing was changed. The views hold nothing the log does not, "
                + "and the damage is in a view's table, not in the log's ('jqc verify' checks the log). Copy the "
                + "log into a new ledger with 'jqc salvage DEST' (its views are built fresh) and use that ledger."
            : "a page of the view table \(table) in the ledger's store at \(path) is damaged; nothing was "
                + "changed. The views hold nothing the log does not, and the damage is in a view's table, not in "
                + "the log's ('jqc verify' checks the log): 'jqc rebuild' rebuilds the views from the log. If the "
                + "rebuild meets the damage too, copy the log into a new ledger with 'jqc salvage DEST' (its views "
                + "are built fresh)."
    }

    /// The ledger's reading of a storage failure in the store at `path`:
    /// damage, a missing store and a full disk are named; the rest is `storage`.
    ///
    /// `addressSpaceLimit` is the process's `RLIMIT_AS` (nil: none), which
    /// tells an `ENOMEM` of a too-small limit from one of short memory.
    public static func from(
        _ error: LMDBError, store path: String, addressSpaceLimit: Int? = AddressSpace.limit
    ) -> LedgerError {
        if let (table, emptying) = error.damagedTable, isViewTable(table) {
            return .damagedView(path: path, table: table, emptying: emptying)
        }
        switch error.kind {
        case .damaged, .invalidFile:
            // LMDB's own findings are terse ("MDB_CORRUPTED: Located page was wrong type").
            let what =
                error.message.hasPrefix("MDB_")
                ? "a page of data.mdb is not what LMDB expected while \(error.operation) (\(error.message))"
                : error.message
            return .damagedStore(path: path, what: what)
        case .missing:
            return .noLedger(path: path)
        case .noSpace:
            return .noSpace(path: path, freeBytes: freeSpace(at: path))
        case .mapFull:
            return .mapFull(path: path)
        case .addressSpace where addressSpaceLimit == nil:
            return .outOfMemory(path: path, operation: error.operation)
        case .addressSpace:
            return .addressSpace(path: path, why: error.message)
        case .system where error.code == EROFS:
            return .unwritable(path: path, permissionDenied: false)
        case .system where error.code == EACCES || error.code == EPERM:
            return .unwritable(path: path, permissionDenied: true)
        default:
            // A short write at commit comes back as EIO; on a (nearly) full disk it is the disk.
            if error.code == EIO, freeSpace(at: path) < 1 << 20 {
                return .noSpace(path: path, freeBytes: freeSpace(at: path))
            }
            return .storage(error)
        }
    }

    /// Whether `table` is a view's (`view:*`, which `jqc rebuild` makes again
    /// from the log) rather than one of the log's own.
    public static func isViewTable(_ table: String) -> Bool { TableName.isView(table) }

    /// Bytes free for an unprivileged user on the filesystem holding `path`
    /// (or its nearest existing parent).
    public static func freeSpace(at path: String) -> UInt64 {
        var candidate = path
        while !candidate.isEmpty {
            var stats = statvfs()
            if statvfs(candidate, &stats) == 0 { return UInt64(stats.f_bavail) * UInt64(stats.f_frsize) }
            candidate = PathText.parent(candidate)
            if candidate == "/" || candidate == "." { break }
        }
        return 0
    }
}
