import FoundationEssentials
import LMDB
import LedgerCore

extension EventLog {
    /// The format before the Merkle tree: the same records and chain, no
    /// `merkle` table. Still read; upgraded on the first writable open.
    public static let formatWithoutTree = "inspection-ledger/1"

    /// Every `meta.format` this code opens.
    public static let readableFormats: Set<String> = [formatWithoutTree, format]

    /// Brings a store to the current format (called where `meta.format` is
    /// checked on open). `stored` is the store's `meta.format`, nil when the
    /// store has none yet (a new store).
    ///
    /// - A new store, or one already at `format`: nothing to do but mark it.
    /// - `inspection-ledger/1`, writable: derives the Merkle tree from the
    ///   stored leaves (every record hashed once, every node of level ≥ 1
    ///   written to `merkle`) and sets the format, in one write transaction;
    ///   no record is rewritten, so every digest handed out still verifies.
    /// - `inspection-ledger/1`, read-only: nothing is written; proofs are
    ///   computed from the leaves in memory (`tables.tree` is nil).
    /// - Any other format: `LedgerError.unsupportedFormat`.
    public static func upgradeFormat(
        environment: Environment, tables: Tables, stored: String?, readOnly: Bool
    ) throws {
        if let stored, !readableFormats.contains(stored) { throw LedgerError.unsupportedFormat(found: stored) }
        if stored == format || readOnly { return }
        guard let tree = tables.tree else {
            throw LedgerError.invalidEvent("the merkle table could not be opened for the upgrade")
        }
        let formatKey = MetaKey.format
        do {
            try environment.write { txn in
                // Another process may have upgraded it meanwhile.
                if let now = try txn.get(tables.meta, formatKey), String(decoding: now, as: UTF8.self) == format {
                    return
                }
                try txn.empty(tree)
                let hasher = SHA256Hasher()
                var frontier = MerkleFrontier(size: 0, subtrees: [])
                try txn.forEachValue(tables.events) { value in
                    guard value.count > 32 else {
                        throw LedgerError.corruptRecord(
                            position: frontier.size + 1, .malformed("stored value is only \(value.count) bytes"))
                    }
                    let leaf = hasher.digest(prefix: 0x00, value, range: 32..<value.count)
                    try frontier.append(leaf: leaf, hasher: hasher) { level, index, hash in
                        try txn.put(tree, MerkleKey.key(level: level, index: index), hash.bytes, flags: .append)
                    }
                    return true
                }
                try txn.put(tables.meta, formatKey, Array(format.utf8))
            }
        } catch let error as LMDBError {
            throw LedgerError.storage(error)
        }
    }
}
