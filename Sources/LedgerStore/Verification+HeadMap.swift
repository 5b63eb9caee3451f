import LMDB
import LedgerCore

extension EventLog {
    /// Step 8 of `verify --full`: the `heads` table holds exactly the nodes
    /// of the map of stream heads that `heads` (each stream's last version
    /// and leaf, from the walk) make, byte for byte. Nil when it does, or
    /// when the store has no table (a read-only open of a store written
    /// before the map: nothing to check). A map behind the log (`HeadMapLag`,
    /// reported beside the verdict, not damage) is checked against the map
    /// of the records it says it holds: the catch-up builds on those nodes,
    /// so a damaged one is found before it is built on.
    /// `built`: the map of `heads`, when it was built already.
    static func headMapFinding(
        _ reader: LedgerReader, heads: [StreamHead], built: HeadMapInMemory? = nil, records last: UInt64
    ) throws -> HeadMapFinding? {
        guard let table = try reader.usableHeads() else {
            guard let table = reader.tables.heads, let lag = try reader.headMapLag(), let size = lag.mapSize else {
                return nil
            }
            // A map that says it holds more records than the log has: records were lost after it.
            if size > lag.logSize {
                return HeadMapFinding(problem: .pastTheLog(size), storedKey: HeadMapTable.sizeKey, position: last + 1)
            }
            return try compare(reader, table: table, with: try reader.headMap(size: size), records: last)
        }
        return try compare(reader, table: table, with: try built ?? HeadMapInMemory(heads: heads), records: last)
    }

    /// The first node where the stored `table` and the map `memory` differ
    /// (stored with other bytes, stored but not made, made but not
    /// stored); nil when they hold the same nodes. The size entry is no node.
    static func compare(_ reader: LedgerReader, table: Table, with memory: HeadMapInMemory, records last: UInt64)
        throws -> HeadMapFinding?
    {
        var finding: HeadMapFinding?
        var matched = 0
        try reader.transaction.forEach(table) { key, value in
            if key == HeadMapTable.sizeKey { return true }
            // A stored key is a node's position (depth ‖ the path's first
            // depth bits, the rest zero) or no node the records make; a
            // value is the node's slot in the one encoding a slot has, so
            // equal slots are equal bytes.
            guard let made = HeadMapPosition(key: key).flatMap({ memory.nodes[$0] }) else {
                finding = HeadMapFinding(problem: .extra, storedKey: key, position: last + 1)
                return false
            }
            guard HeadMapSlot(decoding: value) == made else {
                finding = HeadMapFinding(problem: .changed, storedKey: key, position: last + 1)
                return false
            }
            matched += 1
            return true
        }
        if finding == nil, matched < memory.nodes.count {
            // Some node the records make is not stored: name the first in key order.
            for key in memory.nodes.keys.map(\.key).sorted(by: { $0.lexicographicallyPrecedes($1) })
            where try reader.transaction.get(table, key) == nil {
                return HeadMapFinding(problem: .missing, storedKey: key, position: last + 1)
            }
        }
        return finding
    }
}

/// A node of the `heads` table (the map of stream heads) that is not the
/// one the records make: the records themselves are intact (every earlier
/// step passed), but a checkpoint signed from this store would carry a
/// `jqc-heads` root no record supports.
public struct HeadMapFinding: Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the node.
    public enum Problem: Hashable, Sendable {
        /// Stored, with other bytes than the records make.
        case changed
        /// The records make it; the table does not hold it.
        case missing
        /// Stored; the records make no node there.
        case extra
        /// The `size` entry says the map holds this many records, more than the log has.
        case pastTheLog(UInt64)
    }

    public var problem: Problem
    /// The table key: depth (1 byte) ‖ the path's first depth bits.
    public var storedKey: [UInt8]
    /// The position after the last record: every record is intact.
    public var position: UInt64

    /// `heads[<depth>/<prefix hex>]`, or `heads[<hex>]` for a key of another length.
    public var key: String {
        if storedKey == HeadMapTable.sizeKey { return "heads[size]" }
        guard storedKey.count == 33 else { return "heads[\(Hex.encode(storedKey))]" }
        return "heads[\(storedKey[0])/\(Hex.encode(Array(storedKey[1...])))]"
    }

    public var description: String {
        let what =
            switch problem {
            case .changed: "holds other bytes than the node the records make"
            case .missing: "is missing, though the records make that node"
            case .extra: "is stored, but the records make no node there"
            case .pastTheLog(let size):
                "says the map holds \(size) records, more than the log's \(position - 1): records after the log's end were lost"
            }
        return
            "the map of stream heads' entry \(key) \(what): the heads table was changed outside jqc, or a jqc older than the map recorded here. Every record is intact, but a checkpoint signed from this store carries a map root no record supports; restore the store from a backup"
    }
}
