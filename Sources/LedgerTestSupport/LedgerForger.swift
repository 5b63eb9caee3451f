import Foundation
import LMDB
import LedgerCore

/// What a forger with the ledger's files can do that no single-record check
/// catches: rewrite the log from some position on, recomputing every later
/// chain hash, every per-stream back-link and (on the next writable open, as
/// the format-1 upgrade derives it) the whole Merkle tree and the map of
/// stream heads, so the log is
/// consistent in itself. Only a checkpoint taken before the rewrite, or a
/// witness holding one, tells.
public enum LedgerForger {
    /// What the forger does with the stored Merkle tree.
    public enum Tree: Sendable {
        /// Empties it and marks the store format 1: the next writable open
        /// derives the forged tree (a fully consistent rewrite).
        case rederived
        /// Leaves every stored node as it was: the records and chain are
        /// consistent, the tree is the one of the records before.
        case leftAsItIs
    }

    /// Rewrites every record from `position` on; `change` edits the record at
    /// `position` itself. With `.rederived` (the default), leaves the store at
    /// format 1 with no tree: open it writable once (any writing command) to
    /// derive the forged tree.
    public static func rewrite(
        store: String, from position: UInt64, tree treeHandling: Tree = .rederived, change: (inout EventRecord) -> Void
    ) throws {
        let env = try Environment(directory: store)
        defer { env.close() }
        // The forger also removes the device's record of its head, which
        // would refuse the rewritten store at once (`StoreHead`): what is
        // tested is what the proofs find without it.
        unlink((store as NSString).deletingLastPathComponent + "/store-head")
        guard let events = try env.table("events"), let tree = try env.table("merkle"), let meta = try env.table("meta")
        else { throw ForgeryError(message: "the store at \(store) has no events, merkle or meta table") }
        let heads = try env.table("heads", create: false)
        try env.write { txn in
            let chain = HashChain()
            var previous = Digest256.zero
            var leaves: [UUID: Digest256] = [:]
            var p: UInt64 = 1
            while let value = try txn.get(events, BigEndian.bytes(p)) {
                var record = try EventRecord(decoding: value, at: 32)
                if p >= position {
                    if p == position { change(&record) }
                    if record.previousInStream != nil { record.previousInStream = leaves[record.stream] }
                    previous = chain.next(previous: previous, record: record.encoded())
                    try txn.put(events, BigEndian.bytes(p), previous.bytes + record.encoded())
                } else {
                    guard let stored = Digest256(bytes: Array(value[0..<32])) else {
                        throw ForgeryError(message: "record \(p) has no chain hash")
                    }
                    previous = stored
                }
                leaves[record.stream] = chain.leaf(ofRecord: record.encoded())
                p += 1
            }
            if treeHandling == .rederived {
                try txn.empty(tree)
                try txn.put(meta, Array("format".utf8), Array("inspection-ledger/1".utf8))
                // The map of stream heads too (a store before it): the next
                // writable open builds it from the forged records.
                if let heads { try txn.remove(heads) }
            }
        }
    }

    public struct ForgeryError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
