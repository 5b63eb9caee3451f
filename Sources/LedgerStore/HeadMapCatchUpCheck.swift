import LMDB
import LedgerCore

/// A node the catch-up of the map of stream heads was about to build on
/// that is not what the nodes below it, or the records, make: the `heads`
/// table was changed outside jqc. The catch-up stops (its transaction
/// aborts, the map stays as it was) rather than bake the damage into the
/// nodes it writes, where it would no longer look like damage.
struct HeadMapCatchUpDamage: Error, CustomStringConvertible {
    /// The table key, `heads[<depth>/<prefix hex>]`.
    var key: String
    /// What is wrong with it.
    var why: String
    /// The record whose head the catch-up was setting.
    var position: UInt64

    var description: String {
        "the map of stream heads' entry \(key) \(why), found when bringing the map up to record \(position) "
            + "(records an older jqc wrote); every record is intact, and 'jqc verify --full' names the damage"
    }
}

extension HeadMapTable {
    /// What the catch-up reads on `head`'s path before it sets it: each
    /// inner node is the node of the two below it, each head slot met (on
    /// the path or beside it) has its head's leaf hash, and the stream's
    /// entry is `previous`, the head the records make before this record
    /// (its previous version and that record's leaf, from the back-link),
    /// or none for a version 1. O(depth) nodes, as many as the update reads:
    /// a node off the path is not read (`verify --full` compares them all).
    static func checkPath(
        to head: StreamHead, previous: StreamHead?, position: UInt64, _ transaction: Transaction, _ table: Table,
        _ hasher: SHA256Hasher
    ) throws {
        func damaged(_ at: HeadMapPosition, _ why: String) -> HeadMapCatchUpDamage {
            HeadMapCatchUpDamage(
                key: HeadMapFinding(problem: .changed, storedKey: at.key, position: position).key, why: why,
                position: position)
        }
        func checkSlot(_ slot: HeadMapSlot?, at: HeadMapPosition) throws {
            if case .head(let held, let hash)? = slot, HeadMap.leafHash(held, hasher) != hash {
                throw damaged(at, "holds a hash that is not its head's")
            }
        }
        let path = HeadMap.path(of: head.stream, hasher)
        var at = HeadMapPosition(depth: 0, on: path)
        var slot = try get(transaction, table, at)
        while case .inner(let hash) = slot {
            guard at.depth < HeadMap.maxDepth else { throw damaged(at, "is an inner node at the deepest level") }
            let below = HeadMapPosition(depth: at.depth + 1, on: path)
            let beside = HeadMapPosition.sibling(below: at.depth, on: path)
            let (own, other) = (try get(transaction, table, below), try get(transaction, table, beside))
            try checkSlot(other, at: beside)
            let (left, right) = (own?.hash ?? .zero, other?.hash ?? .zero)
            let made =
                HeadMap.bit(path, at.depth) == 0 ? HeadMap.node(left, right, hasher) : HeadMap.node(right, left, hasher)
            guard made == hash else {
                let keys = [below, beside].map { HeadMapFinding(problem: .changed, storedKey: $0.key, position: 0).key }
                throw damaged(
                    at, "is not the node of the two below it, \(keys[0]) and \(keys[1]): one of the three was changed")
            }
            (at, slot) = (below, own)
        }
        try checkSlot(slot, at: at)
        var held: StreamHead?
        if case .head(let found, _)? = slot, found.stream == head.stream { held = found }
        guard held != previous else { return }
        let stream = Hex.encode(head.stream)
        let want =
            previous.map { "version \($0.version) with the leaf of that record" } ?? "no head (version 1 is next)"
        let has = held.map { "version \($0.version)" } ?? "no head"
        throw damaged(at, "gives stream \(stream) \(has) where the records give \(want)")
    }
}
