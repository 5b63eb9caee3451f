import FoundationEssentials
import LMDB

extension EventLog {
    /// Every entry of the `events` table of the store at `directory`, as
    /// stored, for `jqc salvage`: the store is opened read-only, without a
    /// lock file and without any other check, so that whatever can still be
    /// read of a damaged store is read. `count` is called first with the
    /// table's entry count; `entry` with each position (nil when the key is
    /// not one) and stored value, in key order; then, when given, `carried`
    /// with each entry of the `carried` table (key, value as stored: the
    /// salvage checks each hashes to its key). Answers false when the store
    /// has no `events` table.
    public static func rawEntries(
        ofStoreAt directory: String, count: (Int) -> Void, entry: (UInt64?, [UInt8]) -> Void,
        carried: (([UInt8], [UInt8]) -> Void)? = nil
    ) throws -> Bool {
        var options = Environment.Options()
        options.readOnly = true
        options.noLock = true
        options.create = false
        let environment = try Environment(directory: directory, options: options)
        defer { environment.close() }
        guard let events = try environment.table(TableName.events, create: false) else { return false }
        try environment.read { txn in
            count(try txn.count(events))
            try txn.forEach(events) { key, value in
                entry(BigEndian.uint64(key), Array(value))
                return true
            }
        }
        if let carried, let table = try environment.table(TableName.carried, create: false) {
            try environment.read { txn in
                try txn.forEach(table) { key, value in
                    carried(key, value)
                    return true
                }
            }
        }
        return true
    }
}
