import Foundation
import LMDB

/// What the tests do to a store's `heads` table (the map of stream heads,
/// `Schemas/ledger-format.md` § The map of stream heads) from outside jqc,
/// at the store level, so no older build of jqc is needed to make an older
/// store.
public enum HeadMapSurgery {
    /// Removes the table: the store is then one written before the map
    /// existed (every record and index as they were), which the next
    /// writable open upgrades.
    public static func removeTable(store: String) throws {
        try withHeads(store) { txn, heads in try txn.remove(heads) }
    }

    /// Changes one stored node (the root's hash, one bit flipped), leaving
    /// the records intact: what `jqc verify --full` must find.
    public static func changeRoot(store: String) throws {
        try withHeads(store) { txn, heads in
            // The root's key: depth 0, an all-zero prefix.
            let key = [UInt8](repeating: 0, count: 33)
            guard var value = try txn.get(heads, key), value.count > 1 else {
                throw SurgeryError(message: "the heads table of \(store) has no root node")
            }
            value[1] ^= 0x01
            try txn.put(heads, key, value)
        }
    }

    /// Changes the first stored node at `depth` in key order (its hash, one
    /// bit flipped), leaving the nodes above it as they were: at depth 1, a
    /// node every path of the map passes through or beside.
    public static func changeNode(store: String, depth: UInt8) throws {
        try withHeads(store) { txn, heads in
            var found: ([UInt8], [UInt8])?
            try txn.forEach(heads) { key, value in
                guard key.count == 33, key[0] == depth, value.count > 1 else { return true }
                found = (key, value)
                return false
            }
            guard let found else {
                throw SurgeryError(message: "the heads table of \(store) has no node at depth \(depth)")
            }
            var value = found.1
            value[1] ^= 0x01
            try txn.put(heads, found.0, value)
        }
    }

    /// Plants an entry at a key no node of the map has (depth 255), beside
    /// the real nodes: what `jqc verify --full` must find too.
    public static func plantEntry(store: String) throws {
        try withHeads(store) { txn, heads in
            try txn.put(heads, [0xFF] + [UInt8](repeating: 0xAB, count: 32), [0x01] + [UInt8](repeating: 0, count: 32))
        }
    }

    /// Runs `body` (which records, e.g. through the built `jqc`) and puts
    /// the `heads` table back as it was before, size entry included: the
    /// store is then one a jqc older than the map appended to, which leaves
    /// the table alone.
    public static func recordingAsOlderJQC(store: String, _ body: () throws -> Void) throws {
        var before: [([UInt8], [UInt8])] = []
        try withHeads(store) { txn, heads in
            try txn.forEach(heads) { key, value in
                before.append((key, value))
                return true
            }
        }
        try body()
        try withHeads(store) { txn, heads in
            try txn.empty(heads)
            for (key, value) in before { try txn.put(heads, key, value) }
        }
    }

    /// Sets the table's `size` entry (the records the map says it holds)
    /// to `size`, or removes it (nil: a table built before the entry).
    public static func setSize(store: String, to size: UInt64?) throws {
        let key = Array("size".utf8)
        try withHeads(store) { txn, heads in
            guard let size else {
                _ = try txn.delete(heads, key)
                return
            }
            try txn.put(heads, key, (0..<8).map { UInt8(truncatingIfNeeded: size >> UInt64(56 - 8 * $0)) })
        }
    }

    /// Whether the store has a `heads` table.
    public static func hasTable(store: String) throws -> Bool {
        let env = try Environment(directory: store)
        defer { env.close() }
        return try env.table("heads", create: false) != nil
    }

    static func withHeads(_ store: String, _ body: (Transaction, Table) throws -> Void) throws {
        let env = try Environment(directory: store)
        defer { env.close() }
        guard let heads = try env.table("heads", create: false) else {
            throw SurgeryError(message: "the store at \(store) has no heads table")
        }
        try env.write { txn in try body(txn, heads) }
    }

    /// The store has no `heads` table, or no root in it.
    public struct SurgeryError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
