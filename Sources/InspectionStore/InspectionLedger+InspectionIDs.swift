import FoundationEssentials
import LMDB
import LedgerStore

extension InspectionLedger {
    /// The id of every inspection the views hold (discarded drafts too), in
    /// key order, read from the keys alone: no row is decoded, so this is
    /// cheap where `summaries()` would decode every row.
    public func inspectionIDs() throws -> [UUID] {
        try log.read { reader in
            var ids: [UUID] = []
            try reader.transaction.forEachBorrowed(tables.inspections) { key, _ in
                if let id = UUID(bytes: Transaction.copy(key)) { ids.append(id) }
                return true
            }
            return ids
        }
    }
}
