import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// Bad math fed to the tree's public doors: a size, position or range
/// outside the log is a typed `MerkleError.outOfRange` that says which,
/// never a trap in the 1-based/0-based arithmetic behind it, and the
/// verifiers answer false to a proof for a leaf or size that cannot be.
@Suite struct MerkleBadMathTests {
    enum Door: Sendable, CustomTestStringConvertible {
        case root(size: UInt64)
        case inclusion(position: UInt64, size: UInt64)
        case consistency(from: UInt64, to: UInt64)

        var testDescription: String { "\(self)" }
    }

    static let cases: [(Door, String)] = [
        (.root(size: 4), "the log has 3 records, not 4: it was truncated"),
        (.inclusion(position: 0, size: 3), "record 0 is not in a tree of 3 records"),
        (.inclusion(position: 4, size: 3), "record 4 is not in a tree of 3 records"),
        (.inclusion(position: 1, size: 9), "the log has 3 records, not 9: it was truncated"),
        (.consistency(from: 0, to: 3), "no consistency proof from a tree of 0 records to one of 3"),
        (.consistency(from: 3, to: 2), "no consistency proof from a tree of 3 records to one of 2"),
        (.consistency(from: 2, to: 5), "the log has 3 records, not 5: it was truncated"),
    ]

    @Test(arguments: cases) func badMathIsRefusedSayingWhich(door: Door, says: String) throws {
        let directory = TemporaryDirectory()
        let log = try EventLog(directory: directory.appending("store"))
        defer { log.close() }
        let clock = ManualClock()
        try log.append((0..<3).map { _ in SampleEvents.event(stream: UUID(), note: "n", at: clock.now()) })
        let error = #expect(throws: MerkleError.self) {
            try log.read { reader in
                switch door {
                case .root(let size): _ = try reader.treeRoot(size: size)
                case .inclusion(let position, let size): _ = try reader.inclusionProof(position: position, size: size)
                case .consistency(let old, let new): _ = try reader.consistencyProof(from: old, to: new)
                }
            }
        }
        guard case .outOfRange(let what)? = error else {
            Issue.record("\(String(describing: error)) is not outOfRange")
            return
        }
        #expect(what == says)
    }

    @Test func theVerifiersRefuseALeafOrSizeThatCannotBe() {
        let hasher = SHA256Hasher()
        let leaf = hasher.digest([0x00], Array("leaf".utf8))
        // A tree of one leaf: its root is the leaf, its proofs are empty.
        #expect(Merkle.verifyInclusion(leafHash: leaf, leaf: 0, size: 1, proof: [], root: leaf))
        #expect(!Merkle.verifyInclusion(leafHash: leaf, leaf: 1, size: 1, proof: [], root: leaf))
        #expect(!Merkle.verifyInclusion(leafHash: leaf, leaf: 0, size: 0, proof: [], root: leaf))
        #expect(!Merkle.verifyInclusion(leafHash: leaf, leaf: 0, size: 1, proof: [leaf], root: leaf))
        #expect(!Merkle.verifyConsistency(from: 2, to: 1, first: leaf, second: leaf, proof: []))
        #expect(!Merkle.verifyConsistency(from: 0, to: 1, first: leaf, second: leaf, proof: [leaf]))
        #expect(!Merkle.verifyConsistency(from: 1, to: 2, first: leaf, second: leaf, proof: []))
    }
}
