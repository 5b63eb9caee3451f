import FoundationEssentials
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore

extension InspectionLedger {
    /// Every `inspection.received` record of the log in log order, read
    /// through the receptions view in `reader`'s snapshot: what `receive`
    /// and `jqc devices` need of the other devices (their pins and
    /// checkpoints) without walking every record of the log, which on a
    /// ledger of a million records cost a second and half a gigabyte of
    /// mapped pages per `receive`.
    ///
    /// A row naming a position that holds no reception is damage
    /// (`ViewDamage`): a planted or stale row never passes as a reception.
    /// Call it inside `readingReceptions` (which heals a damaged view) or
    /// with a reader whose caller handles the damage.
    public func receptionRecords(in reader: LedgerReader) throws -> [EventRecord] {
        let head = try reader.head().position
        guard let projection = views.projections.first(where: { $0.name == InspectionView.Kind.receptions.rawValue }),
            let state = try views.storedState(of: projection, in: reader.transaction),
            state.version == projection.version, state.position == head,
            let table = try log.existingTable(TableName.View.receptions.name)
        else {
            // Not built, or behind the log: a read-only copy of a ledger that
            // an older jqc wrote. Its receptions by a walk, never a short list.
            return try Self.walkedReceptions(reader)
        }
        let received = InspectionEventType.received.rawValue
        var records: [EventRecord] = []
        try reader.transaction.forEach(table) { key, value in
            _ = try InspectionTables.open(table, key, value)
            func damage(_ problem: String) -> ViewDamage {
                ViewDamage(view: projection.name, table: table.name, key: key, problem: problem)
            }
            guard key.count == 8, let position = BigEndian.uint64(key) else { throw damage("is not a log position") }
            guard position >= 1, position <= head else {
                throw damage("names position \(position), beyond the log's \(head) records")
            }
            guard let record = try reader.record(at: position), record.type == received else {
                throw damage("names position \(position), which holds no inspection.received record")
            }
            records.append(record)
            return true
        }
        return records
    }

    /// Every reception of the log by a walk of all its records.
    static func walkedReceptions(_ reader: LedgerReader) throws -> [EventRecord] {
        let received = InspectionEventType.received.rawValue
        var records: [EventRecord] = []
        try reader.forEachRecord { record in
            if record.type == received { records.append(record) }
            return true
        }
        return records
    }

    /// Runs `body` in one read snapshot with the log's receptions
    /// (`receptionRecords(in:)`); a damaged receptions view is rebuilt from
    /// the log and `body` runs again (as every read of this ledger does).
    public func readingReceptions<T>(_ body: (LedgerReader, [EventRecord]) throws -> T) throws -> T {
        try healing { try log.read { reader in try body(reader, try receptionRecords(in: reader)) } }
    }
}
