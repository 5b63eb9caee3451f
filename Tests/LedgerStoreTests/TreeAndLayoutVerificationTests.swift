import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// `verify --full` against damage that the chain alone does not name: the
/// stored Merkle nodes, and records rewritten with their chain recomputed
/// (the bytes are then judged by the format page, at their own position).
@Suite struct TreeAndLayoutVerificationTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }

    /// 20 records alternating between two streams: A at odd positions
    /// (versions 1 … 10), B at even ones.
    func makeLog() throws {
        let log = try EventLog(directory: store)
        defer { log.close() }
        let clock = ManualClock()
        let (a, b) = (UUID(), UUID())
        for i in 0..<20 {
            clock.advance(microseconds: 10)
            try log.append([SampleEvents.event(stream: i % 2 == 0 ? a : b, note: "event \(i)", at: clock.now())])
        }
    }

    func verify(
        checkpoint: (size: UInt64, root: Digest256)? = nil, ownChecks: TreeCheck.Placement = .balanced
    ) throws -> VerificationReport {
        var options = Environment.Options()
        options.readOnly = true
        let log = try EventLog(directory: store, options: options)
        defer { log.close() }
        return try log.verify(checkpoint: checkpoint, ownChecks: ownChecks)
    }

    /// Where the records' own checks are made: the walk's thread or the
    /// second one (`verify` balances the two); the findings are the same.
    static let placements: [TreeCheck.Placement] = [.walk, .thread]

    func tamperTree(_ body: (Transaction, Table) throws -> Void) throws {
        let env = try Environment(directory: store)
        defer { env.close() }
        let tree = try #require(try env.table("merkle"))
        try env.write { txn in try body(txn, tree) }
    }

    /// Replaces the record at `position` with `edit` of its bytes; with
    /// `rechain`, recomputes the chain from there to the end as a forger
    /// would (the tree is left as it is).
    func rewrite(_ position: UInt64, rechain: Bool = true, _ edit: (inout [UInt8]) -> Void) throws {
        let env = try Environment(directory: store)
        defer { env.close() }
        let events = try #require(try env.table("events"))
        try env.write { txn in
            let chain = HashChain()
            var previous =
                position == 1
                ? Digest256.zero
                : Digest256(bytes: Array(try #require(try txn.get(events, BigEndian.bytes(position - 1)))[0..<32]))!
            var p = position
            while let value = try txn.get(events, BigEndian.bytes(p)) {
                var record = Array(value[32...])
                if p == position { edit(&record) }
                if !rechain {
                    try txn.put(events, BigEndian.bytes(p), Array(value[0..<32]) + record)
                    break
                }
                previous = chain.next(previous: previous, record: record)
                try txn.put(events, BigEndian.bytes(p), previous.bytes + record)
                p += 1
            }
        }
    }

    // MARK: - The stored tree

    static let nodeDamage: [(String, @Sendable (Transaction, Table) throws -> Void, TreeNodeFinding)] = [
        (
            "a flipped node",
            { txn, tree in
                let key = MerkleKey.key(level: 1, index: 2)
                var value = try #require(try txn.get(tree, key))
                value[7] ^= 0x40
                try txn.put(tree, key, value)
            }, .mismatch(level: 1, index: 2)
        ),
        (
            "a deleted node",
            { txn, tree in _ = try txn.delete(tree, MerkleKey.key(level: 2, index: 0)) },
            .missing(level: 2, index: 0)
        ),
        (
            "an extra node past the end",
            { txn, tree in try txn.put(tree, MerkleKey.key(level: 1, index: 10), [UInt8](repeating: 7, count: 32)) },
            .extra(key: MerkleKey.key(level: 1, index: 10))
        ),
        (
            "an entry that is no node's key",
            { txn, tree in try txn.put(tree, BigEndian.bytes(4) + [1], [UInt8](repeating: 7, count: 32)) },
            .extra(key: BigEndian.bytes(4) + [1])
        ),
        (
            "a node of the wrong length",
            { txn, tree in try txn.put(tree, MerkleKey.key(level: 3, index: 1), [1, 2, 3]) },
            .mismatch(level: 3, index: 1)
        ),
    ]

    @Test(arguments: nodeDamage.indices)
    func aDamagedNodeIsNamedByLevelAndIndex(_ index: Int) throws {
        let (name, damage, expected) = Self.nodeDamage[index]
        try makeLog()
        try tamperTree(damage)
        let finding = try verify().finding
        #expect(finding == .treeNode(expected), "\(name)")
        #expect(finding?.key == expected.key)
        if let node = expected.node {
            #expect(expected.key == "merkle[\(node.level)/\(node.index)]")
        }
    }

    @Test func theNodeWordingSaysWhichRecordsItCovers() {
        #expect(
            TreeNodeFinding.mismatch(level: 1, index: 2).description.hasPrefix(
                "the Merkle tree's node at level 1, index 2 (merkle[1/2], records 5 to 6) is not the hash of those records"
            ))
        #expect(TreeNodeFinding.missing(level: 2, index: 0).description.contains("records 1 to 4) is missing"))
        #expect(TreeNodeFinding.extra(key: BigEndian.bytes(4) + [1]).key == "merkle[000000000000000401]")
    }

    @Test func aRecordRewrittenUnderAnUnchangedTreeIsNamedByItsNodeAndFailsTheCheckpoint() throws {
        try makeLog()
        let root = try EventLog(directory: store).read { try $0.treeRoot(size: 12) }
        #expect(try verify(checkpoint: (12, root)).isIntact)
        try LedgerForger.rewrite(store: store, from: 9, tree: .leftAsItIs) { $0.event.actor.name = "mallory" }
        // Chain and back-links hold; the stored node over records 9 and 10 does not.
        #expect(try verify().finding == .treeNode(.mismatch(level: 1, index: 4)))
        let finding = try verify(checkpoint: (12, root)).finding
        #expect(finding == .checkpointMismatch(size: 12, node: .mismatch(level: 1, index: 4)))
        #expect(finding?.kind == .checkpointMismatch)
        #expect(
            finding?.description.hasPrefix(
                "the first 12 records do not have the root the checkpoint signs, recomputed from the records themselves"
            )
                == true)
        // The stored tree still has the signed root: only the records tell.
        #expect(try EventLog(directory: store).read { try $0.treeRoot(size: 12) } == root)
        #expect(try EventLog(directory: store).read { try $0.recomputedRoot(size: 12) } != root)
    }

    @Test func signingChecksTheTreeFromAnAnchorAndWithoutOne() throws {
        try makeLog()
        let log = try EventLog(directory: store)
        let anchor = try log.read { reader in (size: UInt64(13), root: try reader.treeRoot(size: 13)) }
        let today = try log.read { try $0.checkedTreeRoot(from: nil) }
        #expect(try log.read { try $0.checkedTreeRoot(from: anchor) } == today)
        log.close()
        // A node made by the records after the anchor, and one on the anchor's own edge.
        for key in [MerkleKey.key(level: 1, index: 8), MerkleKey.key(level: 3, index: 0)] {
            try tamperTree { txn, tree in
                var value = try #require(try txn.get(tree, key))
                value[0] ^= 1
                try txn.put(tree, key, value)
            }
            for from in [nil, anchor] as [(size: UInt64, root: Digest256)?] {
                let reopened = try EventLog(directory: store)
                #expect(throws: TreeCheckError.self) { try reopened.read { try $0.checkedTreeRoot(from: from) } }
                reopened.close()
            }
            try tamperTree { txn, tree in
                var value = try #require(try txn.get(tree, key))
                value[0] ^= 1
                try txn.put(tree, key, value)
            }
        }
        let error = try #require(
            throws: TreeCheckError.self,
            performing: {
                let reopened = try EventLog(directory: store)
                defer { reopened.close() }
                _ = try reopened.read { try $0.checkedTreeRoot(from: (size: 30, root: anchor.root)) }
            })
        #expect(error.description.contains("this device signed a checkpoint of 30 records, the log has only 20"))
    }

    // MARK: - Records rewritten with their chain recomputed

    /// The index of `needle` in `bytes`.
    static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        (0...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }

    static let damage: [(String, UInt64, Bool, @Sendable (inout [UInt8]) -> Void, FindingKind, String)] = [
        (
            "a longer head than the value needs", 5, true, { $0.replaceSubrange(4..<5, with: [0x18, 5]) },
            .notDeterministic,
            "record 5 is not in the deterministic encoding jqc writes (key 1 (position): its head takes more bytes than the value 5 needs)"
        ),
        (
            "an extra key", 1, true,
            { bytes in
                bytes[0] = 0xAE
                bytes += [0x0E, 0xF5]
            }, .malformed,
            "record 1 is not laid out as a record (a format-2 record of stream version 1 has 13 keys, this one 14"
        ),
        (
            "the back-link removed", 3, true,
            { bytes in
                bytes[0] = 0xAD
                bytes.removeLast(35)
            }, .malformed,
            "record 3 is not laid out as a record (a format-2 record of stream version 2 has 14 keys, this one 13: key 13 (the back-link) is missing)"
        ),
        (
            "a missing key", 2, true,
            { bytes in
                bytes[0] = 0xAC
                bytes.removeLast(2)
            }, .malformed, "record 2 is not laid out as a record (the record has 12 keys, a record has 13 or 14)"
        ),
        (
            "a flipped format byte", 4, false, { $0[2] = 0x03 }, .changed,
            "record 4 was changed after it was written"
        ),
        (
            "a newer format with its chain recomputed", 4, true, { $0[2] = 0x03 }, .newerFormat,
            "record 4 has record format 3, newer than this program reads (format 2); its chain link holds. Upgrade jqc."
        ),
        (
            "a time that is text", 6, true,
            { bytes in
                let at = Self.find([0x0A, 0x1B], in: bytes)!
                bytes.replaceSubrange((at + 1)..<(at + 10), with: [0x63] + Array("now".utf8))
            }, .malformed,
            "record 6 is not laid out as a record (key 10 (recorded at): expected a CBOR integer"
        ),
        (
            "a format-2 record relabelled format 1", 7, true,
            { bytes in
                bytes[0] = 0xAD
                bytes[2] = 0x01
                bytes.removeLast(35)
            }, .formatSequence,
            "record 7 says record format 1, but record 1 before it is format 2: records are never written in an older format, so it was relabelled"
        ),
    ]

    @Test(arguments: damage.indices, placements)
    func damageIsNamedAtItsOwnPosition(_ index: Int, ownChecks: TreeCheck.Placement) throws {
        let (name, position, rechain, edit, kind, wording) = Self.damage[index]
        try makeLog()
        try rewrite(position, rechain: rechain, edit)
        let finding = try #require(try verify(ownChecks: ownChecks).finding, "\(name)")
        #expect(finding.position == position, "\(name): \(finding)")
        #expect(finding.kind == kind, "\(name): \(finding)")
        #expect(finding.description.hasPrefix(wording), "\(name): \(finding)")
    }

    // MARK: - A log longer than the second thread's batches

    /// Two batches of `TreeCheck` and some (two streams alternating), in one append.
    func makeLongLog() throws -> UInt64 {
        let count = 2 * TreeCheck.batchSize + 50
        let log = try EventLog(directory: store)
        defer { log.close() }
        let clock = ManualClock()
        let (a, b) = (UUID(), UUID())
        let events = (0..<count).map { i in
            clock.advance(microseconds: 10)
            return SampleEvents.event(stream: i % 2 == 0 ? a : b, note: "event \(i)", at: clock.now())
        }
        try log.append(events)
        return UInt64(count)
    }

    func storedChain(at position: UInt64) throws -> Digest256 {
        let env = try Environment(directory: store)
        defer { env.close() }
        let events = try #require(try env.table("events"))
        let value = try #require(try env.read { txn in try txn.get(events, BigEndian.bytes(position)) })
        return try #require(Digest256(bytes: Array(value[0..<32])))
    }

    @Test(arguments: placements)
    func aLongLogIsCheckedWholeAcrossTheBatches(ownChecks: TreeCheck.Placement) throws {
        let total = try makeLongLog()
        let report = try verify(ownChecks: ownChecks)
        #expect(report.finding == nil)
        #expect(report.checked == total)
        #expect(report.head == LedgerDigest(position: total, head: try storedChain(at: total)))
    }

    @Test(arguments: placements)
    func aRecordFailingItsCheckInALaterBatchStopsTheWalkThere(ownChecks: TreeCheck.Placement) throws {
        let total = try makeLongLog()
        let position = UInt64(TreeCheck.batchSize) + 7
        // A time that is text, the chain recomputed; and an index entry of a
        // later record removed, which the walk alone never reaches.
        try rewrite(position) { bytes in
            let at = Self.find([0x0A, 0x1B], in: bytes)!
            bytes.replaceSubrange((at + 1)..<(at + 10), with: [0x63] + Array("now".utf8))
        }
        let env = try Environment(directory: store)
        let ids = try #require(try env.table("event_ids"))
        let events = try #require(try env.table("events"))
        try env.write { txn in
            let value = try #require(try txn.get(events, BigEndian.bytes(total - 3)))
            let header = try EventRecord.header(ofEncoded: Array(value[32...]))
            _ = try txn.delete(ids, header.id)
        }
        env.close()
        let report = try verify(ownChecks: ownChecks)
        let finding = try #require(report.finding)
        #expect(finding.kind == .malformed, "\(finding)")
        #expect(finding.position == position)
        #expect(report.checked == position - 1)
        #expect(report.head == LedgerDigest(position: position - 1, head: try storedChain(at: position - 1)))
    }

    @Test func aNodeAndACheckpointInALaterBatchAreNamed() throws {
        let total = try makeLongLog()
        // The level-2 node over leaves 4396 … 4399, in the second batch.
        let index = (UInt64(TreeCheck.batchSize) + 300) / 4
        try tamperTree { txn, tree in
            let key = MerkleKey.key(level: 2, index: index)
            var value = try #require(try txn.get(tree, key))
            value[0] ^= 0x01
            try txn.put(tree, key, value)
        }
        #expect(try verify().finding == .treeNode(.mismatch(level: 2, index: index)))
        let wrong = Digest256(bytes: [UInt8](repeating: 7, count: 32))!
        let size = total - 20
        let report = try verify(checkpoint: (size, wrong))
        #expect(report.finding == .checkpointMismatch(size: size, node: .mismatch(level: 2, index: index)))
    }

    @Test func payloadsAreCheckedForDeterministicEncoding() throws {
        var good = CBORReader(CBORValue.textMap([("a", .unsigned(1)), ("bb", .double(1.5))]).encoded())
        #expect(throws: Never.self) { try good.skipDeterministicItem(textKeys: true) }
        let cases: [[UInt8]] = [
            [0xA2, 0x62, 0x62, 0x62, 0x01, 0x61, 0x61, 0x02],  // keys out of order
            [0xA2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02],  // a repeated key
            [0xA1, 0x61, 0x61, 0xFB, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0],  // 1.5 as a double
            [0xA1, 0x61, 0x61, 0x19, 0x00, 0x10],  // 16 in three bytes
            [0xA1, 0x01, 0x01],  // an integer key
            [0xA1, 0x61, 0x61, 0xF7],  // undefined
        ]
        for bytes in cases {
            var reader = CBORReader(bytes)
            #expect(throws: CBORError.self, "\(bytes)") { try reader.skipDeterministicItem(textKeys: true) }
        }
    }
}
