import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// The tree kept in the append transaction, and the upgrade of a format-1
/// store, against roots recomputed from the records alone.
@Suite struct MerkleStoreTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }
    let hasher = SHA256Hasher()

    static func options(readOnly: Bool) -> Environment.Options {
        var options = Environment.Options()
        options.readOnly = readOnly
        return options
    }

    /// Appends `batches` (sizes) of events; returns nothing, the log is closed.
    func write(_ batches: [Int]) throws {
        let log = try EventLog(directory: store)
        defer { log.close() }
        let clock = ManualClock()
        for size in batches {
            let events = (0..<size).map { i -> PendingEvent in
                clock.advance(microseconds: 1)
                return SampleEvents.event(stream: UUID(), note: "n\(i)", at: clock.now())
            }
            try log.append(events)
        }
    }

    /// RFC 9162's MTH over the records' leaf hashes, recursively.
    func reference(_ leaves: ArraySlice<Digest256>) -> Digest256 {
        if leaves.isEmpty { return hasher.digest([]) }
        if leaves.count == 1 { return leaves.first! }
        var k = 1
        while k * 2 < leaves.count { k *= 2 }
        let s = leaves.startIndex
        return Merkle.node(reference(leaves[s..<s + k]), reference(leaves[(s + k)...]), hasher)
    }

    func leaves(_ log: EventLog) throws -> [Digest256] {
        try log.read { reader in
            var out: [Digest256] = []
            try reader.forEachStoredRecord { _, value in
                out.append(hasher.digest(prefix: 0, value, range: 32..<value.byteCount))
                return true
            }
            return out
        }
    }

    func checkTree(readOnly: Bool = false) throws {
        let log = try EventLog(directory: store, options: Self.options(readOnly: readOnly))
        defer { log.close() }
        let d = try leaves(log)
        try log.read { reader in
            let n = UInt64(d.count)
            let root = try reader.treeRoot(size: n)
            #expect(root == reference(d[...]))
            for size in [1, n / 2, n - 1, n] where size >= 1 {
                #expect(try reader.treeRoot(size: size) == reference(d[0..<Int(size)]))
                let proof = try reader.consistencyProof(from: size, to: n)
                #expect(
                    Merkle.verifyConsistency(
                        from: size, to: n, first: reference(d[0..<Int(size)]), second: root, proof: proof))
            }
            for position in 1...n {
                let proof = try reader.inclusionProof(position: position, size: n)
                #expect(
                    Merkle.verifyInclusion(
                        leafHash: d[Int(position - 1)], leaf: position - 1, size: n, proof: proof, root: root))
            }
        }
    }

    @Test func theTreeGrowsWithEveryBatch() throws {
        try write([1, 2, 5, 1, 8, 13, 3])
        try checkTree()
        let log = try EventLog(directory: store)
        defer { log.close() }
        // 33 leaves: 16 + 8 + 4 + 2 + 1 nodes of level ≥ 1 are complete.
        let nodes = try log.read { try $0.transaction.count(#require($0.tables.tree)) }
        #expect(nodes == 31)
    }

    /// A store as format 1 left it: no `merkle` entries, `meta.format` /1.
    func downgrade() throws {
        let env = try Environment(directory: store)
        let meta = try #require(try env.table("meta"))
        let tree = try #require(try env.table("merkle"))
        try env.write { txn in
            try txn.empty(tree)
            try txn.put(meta, Array("format".utf8), Array("inspection-ledger/1".utf8))
        }
        env.close()
    }

    func storedFormat() throws -> String {
        let env = try Environment(directory: store, options: Self.options(readOnly: true))
        defer { env.close() }
        let meta = try #require(try env.table("meta"))
        return String(decoding: try #require(try env.read { try $0.get(meta, Array("format".utf8)) }), as: UTF8.self)
    }

    @Test func aFormatOneStoreIsUpgradedOnItsFirstWritableOpen() throws {
        try write([7, 10])
        let digest = try EventLog(directory: store).head()
        try downgrade()
        // Read-only: still verifies, proofs computed from the leaves, nothing written.
        try checkTree(readOnly: true)
        #expect(try storedFormat() == "inspection-ledger/1")
        let log = try EventLog(directory: store, options: Self.options(readOnly: true))
        #expect(try log.verify(against: digest).isIntact)
        log.close()
        // Writable: the tree is derived; no record changes, the digest still holds.
        try write([4])
        #expect(try storedFormat() == "inspection-ledger/2")
        try checkTree()
        let upgraded = try EventLog(directory: store)
        defer { upgraded.close() }
        #expect(try upgraded.verify(against: digest).isIntact)
    }

    @Test func anUnknownFormatIsRefused() throws {
        try write([1])
        let env = try Environment(directory: store)
        let meta = try #require(try env.table("meta"))
        try env.write { txn in try txn.put(meta, Array("format".utf8), Array("inspection-ledger/9".utf8)) }
        env.close()
        #expect(throws: LedgerError.self) { try EventLog(directory: store) }
    }
}
