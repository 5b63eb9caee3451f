import FoundationEssentials
import InspectionDomain
import LedgerCore
import LedgerStore

extension InspectionLedger {
    /// Submissions recorded on other devices that this device holds and no
    /// device has reported sent, in submission order: the outbox view's
    /// second table. This device sends none of them (the sync reads
    /// `outbox()` alone) until `jqc sync adopt ID` makes it their sender.
    public func unreportedSubmissions() throws -> [UnreportedSubmission] {
        try healing {
            try log.read { reader in
                var rows: [UnreportedSubmission] = []
                // No table: a read-only open of an older store, whose stale
                // outbox view a listing reopens for writing first.
                guard let table = tables.unreported else { return rows }
                try reader.transaction.forEach(table) { key, value in
                    let row = try InspectionTables.open(table, key, value)
                    rows.append(try UnreportedSubmission(key: key, cbor: try CBORValue(decoding: row)))
                    return true
                }
                return rows
            }
        }
    }
}
