import FoundationEssentials
import LMDB
import LedgerCore

extension IDPrefix {
    /// The ids in `table` (keyed by 16-byte ids, optionally followed by
    /// more) that start with this prefix, at most `limit` of them, found by
    /// seeking rather than scanning.
    func matches(in table: Table, _ transaction: Transaction, limit: Int = 10) throws -> [UUID] {
        var found: [UUID] = []
        try transaction.forEach(table, from: lowestKey) { key, _ in
            guard key.count >= 16, let id = UUID(bytes: Array(key[0..<16])), matches(id) else { return false }
            if found.last != id { found.append(id) }
            return found.count < limit
        }
        return found
    }
}
