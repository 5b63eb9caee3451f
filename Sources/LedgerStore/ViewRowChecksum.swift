import LMDB
import LedgerCore

/// The checksum every view row carries, so that a row changed on disk (a
/// flipped bit, a planted row) is found when it is read instead of shown.
///
/// A stored row is `value ‖ checksum`, the checksum being the first 8 bytes
/// of SHA-256 over `table name ‖ 0x00 ‖ key length (8 bytes, big-endian) ‖
/// key ‖ value`: the table name and the key are covered too, so a row copied
/// under another key or into another table fails as well. It is a check
/// against damage, not against a forger (who can recompute it): that is what
/// `jqc rebuild --dry-run` and the log's own hash chain are for.
public enum ViewRowChecksum {
    /// Bytes appended to each stored value.
    public static let length = 8

    public static func checksum(table: String, key: [UInt8], value: ArraySlice<UInt8>) -> [UInt8] {
        let hasher = SHA256Hasher()
        var prefix = Array(table.utf8)
        prefix.append(0)
        BigEndian.append(UInt64(key.count), to: &prefix)
        hasher.begin()
        hasher.add(prefix[...])
        hasher.add(key[...])
        hasher.add(value)
        return Array(hasher.end().bytes.prefix(length))
    }

    /// What to store for `value` under `key` in `table`.
    public static func seal(table: String, key: [UInt8], value: [UInt8]) -> [UInt8] {
        var sealed = value
        sealed.reserveCapacity(value.count + length)
        sealed += checksum(table: table, key: key, value: value[...])
        return sealed
    }

    /// The value of a stored row, or `ViewDamage` when its checksum does not
    /// match (or it is too short to carry one).
    public static func open(
        view: String, table: String, key: [UInt8], stored: [UInt8]
    ) throws(ViewDamage) -> [UInt8] {
        guard stored.count >= length else { throw ViewDamage(view: view, table: table, key: key) }
        let value = stored.dropLast(length)
        guard checksum(table: table, key: key, value: value).elementsEqual(stored.suffix(length)) else {
            throw ViewDamage(view: view, table: table, key: key)
        }
        return Array(value)
    }

    /// Whether a stored row's checksum matches.
    public static func isIntact(table: String, key: [UInt8], stored: [UInt8]) -> Bool {
        guard stored.count >= length else { return false }
        return checksum(table: table, key: key, value: stored.dropLast(length)).elementsEqual(stored.suffix(length))
    }
}

/// A view row whose checksum does not match (the row was changed on disk
/// after it was written), or that contradicts the view it points into.
/// Views are rebuilt from the log, so nothing is lost.
public struct ViewDamage: Error, CustomStringConvertible, Sendable, Equatable {
    /// The view (`inspections`, `drafts`, …).
    public let view: String
    /// The LMDB table holding the row.
    public let table: String
    public let key: [UInt8]
    /// What is wrong with the row, after "row … of TABLE".
    public let problem: String

    public init(view: String, table: String, key: [UInt8], problem: String = "does not match its checksum") {
        self.view = view
        self.table = table
        self.key = key
        self.problem = problem
    }

    /// "the drafts view is damaged (row … of view:drafts …)".
    public var what: String { "the \(view) view is damaged (row \(Hex.encode(key)) of \(table) \(problem))" }

    public var description: String { "\(what): run 'jqc rebuild \(view)' to rebuild it from the log." }
}
