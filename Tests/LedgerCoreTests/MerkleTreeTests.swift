import Foundation
import Testing

@testable import LedgerCore

/// The tree and its proofs against a reference computation written straight
/// from RFC 9162 §2.1 (recursive MTH, PATH and PROOF over a list of leaves).
@Suite struct MerkleTreeTests {
    let hasher = SHA256Hasher()

    func leaves(_ n: Int) -> [Digest256] {
        (0..<n).map { hasher.digest([0x00], Array("leaf \($0)".utf8)) }
    }

    // MARK: The reference (RFC 9162 §2.1.1, 2.1.3.1, 2.1.4.1, verbatim)

    func mth(_ d: ArraySlice<Digest256>) -> Digest256 {
        if d.isEmpty { return hasher.digest([]) }
        if d.count == 1 { return d.first! }
        var k = 1
        while k * 2 < d.count { k *= 2 }
        let s = d.startIndex
        return hasher.digest([0x01], mth(d[s..<s + k]).bytes, mth(d[(s + k)...]).bytes)
    }

    func path(_ m: Int, _ d: ArraySlice<Digest256>) -> [Digest256] {
        if d.count <= 1 { return [] }
        var k = 1
        while k * 2 < d.count { k *= 2 }
        let s = d.startIndex
        return m < k
            ? path(m, d[s..<s + k]) + [mth(d[(s + k)...])] : path(m - k, d[(s + k)...]) + [mth(d[s..<s + k])]
    }

    func subproof(_ m: Int, _ d: ArraySlice<Digest256>, _ b: Bool) -> [Digest256] {
        if m == d.count { return b ? [] : [mth(d)] }
        var k = 1
        while k * 2 < d.count { k *= 2 }
        let s = d.startIndex
        return m <= k
            ? subproof(m, d[s..<s + k], b) + [mth(d[(s + k)...])]
            : subproof(m - k, d[(s + k)...], false) + [mth(d[s..<s + k])]
    }

    /// The tree as a store keeps it: perfect subtrees from the frontier's
    /// stored nodes, leaves from the list.
    func stored(_ d: [Digest256]) -> (MerkleFrontier, [String: Digest256]) {
        var nodes: [String: Digest256] = [:]
        var frontier = MerkleFrontier(size: 0, subtrees: [])
        for leaf in d {
            frontier.append(leaf: leaf, hasher: hasher) { level, index, hash in nodes["\(level)/\(index)"] = hash }
        }
        return (frontier, nodes)
    }

    func perfect(_ d: [Digest256], _ nodes: [String: Digest256]) -> (Int, UInt64) -> Digest256 {
        { level, index in level == 0 ? d[Int(index)] : nodes["\(level)/\(index)"]! }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 31, 33])
    func rootsAndProofsMatchTheReference(n: Int) throws {
        let d = leaves(n)
        let (frontier, nodes) = stored(d)
        let root = mth(d[...])
        #expect(frontier.root(hasher) == root)
        #expect(Merkle.root(size: UInt64(n), hasher: hasher, perfect: perfect(d, nodes)) == root)
        for m in 0..<n {
            let proof = Merkle.inclusionProof(
                leaf: UInt64(m), size: UInt64(n), hasher: hasher, perfect: perfect(d, nodes))
            #expect(proof == path(m, d[...]), "PATH(\(m), D[\(n)])")
            #expect(Merkle.verifyInclusion(leafHash: d[m], leaf: UInt64(m), size: UInt64(n), proof: proof, root: root))
            // The wrong leaf, index or root fails.
            #expect(
                !Merkle.verifyInclusion(
                    leafHash: d[(m + 1) % n], leaf: UInt64(m), size: UInt64(n), proof: proof, root: root) || n == 1)
            #expect(
                !Merkle.verifyInclusion(leafHash: d[m], leaf: UInt64(m), size: UInt64(n), proof: proof, root: d[0])
                    || n == 1)
        }
        for m in 1...n {
            let proof = Merkle.consistencyProof(
                from: UInt64(m), to: UInt64(n), hasher: hasher, perfect: perfect(d, nodes))
            #expect(proof == subproof(m, d[...], true), "PROOF(\(m), D[\(n)])")
            let old = mth(d[0..<m])
            #expect(Merkle.verifyConsistency(from: UInt64(m), to: UInt64(n), first: old, second: root, proof: proof))
            if m < n {
                #expect(
                    !Merkle.verifyConsistency(from: UInt64(m), to: UInt64(n), first: root, second: root, proof: proof))
            }
        }
    }

    @Test func aKnownRootFromCertificateTransparency() {
        // RFC 6962's test vectors (Go's sumdb/tlog and CT's): the tree of the
        // eight inputs "", 00, 10, 2021, 3031, 40414243, 5051525354555657,
        // 606162636465666768696a6b6c6d6e6f.
        let inputs = [
            "", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f",
        ]
        let d = inputs.map { hasher.digest([0x00], Hex.decode($0)!) }
        let (frontier, _) = stored(d)
        #expect(frontier.root(hasher).hex == "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328")
        #expect(Merkle.emptyRoot(hasher).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func aCheckpointSignedByTheDeviceVerifiesAndAnotherKeyFails() throws {
        let key = try NoteKey.generate(name: "jqc/device-1")
        let checkpoint = Checkpoint(origin: "jqc/device-1", size: 42, root: leaves(1)[0])
        let note = try checkpoint.signed(by: key)
        #expect(try Checkpoint(verifying: note, key: NoteKey(parsing: key.verifierKey)) == checkpoint)
        let other = try NoteKey.generate(name: "jqc/device-1")
        #expect(throws: NoteError.self) { try Checkpoint(verifying: note, key: other) }
        var forged = Array(note.utf8)
        forged[forged.firstIndex(of: UInt8(ascii: "4"))!] = UInt8(ascii: "5")
        #expect(throws: NoteError.self) { try Checkpoint(verifying: String(decoding: forged, as: UTF8.self), key: key) }
        // The signer key round-trips.
        #expect(try NoteKey(parsing: key.signerKey!) == key)
    }

    @Test func aCheckpointWhoseOriginIsNotTheKeysNameFails() throws {
        let key = try NoteKey.generate(name: "jqc/device-1")
        let note = try Checkpoint(origin: "jqc/device-2", size: 42, root: leaves(1)[0]).signed(by: key)
        #expect(
            throws: NoteError.unverified(
                "its origin line \"jqc/device-2\" is not the key's name jqc/device-1: it is not a checkpoint of this log"
            )
        ) {
            try Checkpoint(verifying: note, key: key)
        }
    }
}
