import LMDB
import LedgerStore

/// The scans the benchmarks time: each reads every record or value once and
/// answers the bytes it saw, so that the work cannot be optimized away.
enum Scan {
    /// Every record of the log decoded where it lies: its payloads' bytes.
    static func payloadBytes(_ log: EventLog) throws -> Int {
        var bytes = 0
        try log.read { reader in
            try reader.forEachRecord { record in
                bytes &+= record.payload.count
                return true
            }
        }
        return bytes
    }

    /// Every value of `table`, copied out by LMDB's cursor: their bytes.
    static func valueBytes(_ environment: Environment, _ table: Table) throws -> Int {
        var bytes = 0
        try environment.read { txn in
            try txn.forEach(table) { _, value in
                bytes &+= value.count
                return true
            }
        }
        return bytes
    }
}
