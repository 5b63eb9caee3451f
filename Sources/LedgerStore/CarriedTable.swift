import FoundationEssentials
import LMDB
import LedgerCore

// The `carried` table: the bytes of the records that receptions carry by
// reference, keyed by their leaf hash `SHA-256(0x00 ‖ record bytes)`
// (`Schemas/ledger-format.md` § Tables). Content-addressed, so an entry is
// written once and never rewritten; one of the log's own tables.

extension LedgerReader {
    /// The bytes stored under `leaf`, or nil when the table holds none (or
    /// the store, opened read-only, predates the table).
    public func carriedRecord(_ leaf: Digest256) throws -> [UInt8]? {
        guard let table = tables.carried else { return nil }
        return try transaction.get(table, leaf.bytes)
    }

    /// Every entry of the table in key order (key, value as stored), until
    /// `body` answers false.
    public func forEachCarried(_ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        guard let table = tables.carried else { return }
        try transaction.forEach(table, body)
    }

    /// How many entries the table holds.
    public func carriedCount() throws -> Int {
        guard let table = tables.carried else { return 0 }
        return try transaction.count(table)
    }
}

extension LedgerWriter {
    /// Keeps `record` under its leaf hash, in this transaction (the one that
    /// appends the reception referencing it); an entry already there is left
    /// as it is. Answers the leaf.
    @discardableResult
    public func keepCarried(_ record: [UInt8]) throws -> Digest256 {
        guard let table = tables.carried else {
            throw LedgerError.invalidEvent("the store has no 'carried' table (opened read-only)")
        }
        let leaf = reader.chain.leaf(ofRecord: record)
        if try transaction.get(table, leaf.bytes) == nil { try transaction.put(table, leaf.bytes, record) }
        return leaf
    }
}
