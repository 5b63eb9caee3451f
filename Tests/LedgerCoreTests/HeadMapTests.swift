import Foundation
import Testing

@testable import LedgerCore

/// The map of stream heads against a reference written from its definition
/// (ledger-format.md § The map of stream heads): the root of a set of heads
/// computed recursively over their 256-bit paths, bit by bit.
@Suite struct HeadMapTests {
    let hasher = SHA256Hasher()

    func stream(_ i: Int) -> [UInt8] { Array(hasher.digest(Array("stream \(i)".utf8)).bytes[0..<16]) }

    func head(_ i: Int, version: UInt64) -> StreamHead {
        StreamHead(stream: stream(i), version: version, leaf: hasher.digest(Array("record \(i)/\(version)".utf8)))
    }

    /// The reference: empty, one head's leaf, or the node of the two halves.
    func reference(_ heads: [StreamHead], depth: Int = 0) -> Digest256 {
        if heads.isEmpty { return .zero }
        if heads.count == 1 { return HeadMap.leafHash(heads[0]) }
        let left = heads.filter { HeadMap.bit(HeadMap.path(of: $0.stream), depth) == 0 }
        let right = heads.filter { HeadMap.bit(HeadMap.path(of: $0.stream), depth) == 1 }
        return HeadMap.node(reference(left, depth: depth + 1), reference(right, depth: depth + 1))
    }

    @Test(arguments: [0, 1, 2, 3, 7, 40, 200])
    func rootsAndProofsMatchTheReference(streams: Int) throws {
        var map = HeadMapInMemory()
        var current: [Int: StreamHead] = [:]
        // Each stream appended to three times, interleaved: updates and splits.
        for version in 1...3 {
            for i in 0..<streams {
                let next = head(i, version: UInt64(version))
                try map.set(next)
                current[i] = next
            }
            let heads = current.values.sorted { $0.stream.lexicographicallyPrecedes($1.stream) }
            #expect(map.root == reference(heads))
        }
        for (_, head) in current {
            let (proven, siblings) = try map.proof(of: head.stream)
            #expect(proven == head)
            #expect(HeadMap.verify(head, siblings: siblings, root: map.root))
            // An older version of the same stream is not the head.
            var older = head
            older.version -= 1
            #expect(!HeadMap.verify(older, siblings: siblings, root: map.root))
        }
        // A node per streams' depth, not 256: O(log n) nodes per update.
        if streams > 0 { #expect(map.nodes.count < streams * 4) }
    }

    @Test(arguments: [
        (StreamHead(stream: [1, 2, 3], version: 1, leaf: .zero), 0, "a stream id is 16 bytes, not 3"),
        (
            StreamHead(stream: Array(repeating: 7, count: 16), version: 0, leaf: .zero), 0,
            "a stream's head has version 1 or more, not 0"
        ),
        (
            StreamHead(stream: Array(repeating: 7, count: 16), version: 1, leaf: .zero), 257,
            "a proof of 257 siblings is deeper than the 256 bits of a path"
        ),
    ])
    func badMathIsThrown(head: StreamHead, siblings: Int, why: String) {
        #expect(throws: HeadMapError.badMath(why)) {
            try HeadMap.root(of: head, siblings: Array(repeating: .zero, count: siblings))
        }
        #expect(!HeadMap.verify(head, siblings: Array(repeating: .zero, count: siblings), root: .zero))
        var map = HeadMapInMemory()
        if siblings == 0 {
            #expect(throws: HeadMapError.badMath(why)) { try map.set(head) }
            #expect(throws: HeadMapError.badMath(why)) { try HeadMapInMemory(heads: [self.head(1, version: 1), head]) }
        }
    }

    /// The map built bottom up from a list of heads holds the very nodes
    /// (positions and slots) that setting them one by one makes, whatever
    /// their order, a later head of a stream replacing an earlier one.
    @Test(arguments: [0, 1, 2, 3, 7, 40, 200, 1_000])
    func theMapBuiltAtOnceHoldsTheNodesSetOneByOneMakes(streams: Int) throws {
        var heads: [StreamHead] = []
        for version in 1...2 { heads += (0..<streams).map { head($0, version: UInt64(version)) } }
        // Two streams' older heads after their newer ones: the later in the list stands.
        if streams >= 2 { heads += [head(0, version: 1), head(1, version: 1)] }
        var oneByOne = HeadMapInMemory()
        for head in heads { try oneByOne.set(head) }
        let built = try HeadMapInMemory(heads: heads)
        #expect(built.nodes == oneByOne.nodes)
        let standing = Array(Dictionary(heads.map { ($0.stream, $0) }) { $1 }.values)
        #expect(built.root == reference(standing))
        #expect(try HeadMapInMemory(heads: standing.shuffled()).nodes == built.nodes)
        for position in built.nodes.keys { #expect(HeadMapPosition(key: position.key) == position) }
    }

    @Test func aStreamNotInTheMapHasNoProof() throws {
        var map = HeadMapInMemory()
        try map.set(head(1, version: 1))
        #expect(throws: HeadMapError.self) { try map.proof(of: stream(2)) }
    }
}
