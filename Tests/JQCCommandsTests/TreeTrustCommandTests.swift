import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

/// The stored Merkle tree through the built `jqc`: `verify --full` names a
/// damaged node, `checkpoint` and `prove` refuse to sign over one, and a
/// record rewritten under an unchanged tree fails against a checkpoint
/// signed before.
@Suite struct TreeTrustCommandTests {
    let scenario: AuditScenario
    var jqc: JQCRunner { scenario.jqc.reportingKinds }

    init() throws { scenario = try AuditCommandTests.shared.get().copy() }

    /// The `merkle` key of the node (level, index): last leaf (u64 BE) ‖ level.
    static func key(level: Int, index: UInt64) -> [UInt8] {
        BigEndian.bytes(((index + 1) << UInt64(level)) - 1) + [UInt8(level)]
    }

    func tamperTree(_ body: (Transaction, Table) throws -> Void) throws {
        let environment = try Environment(directory: scenario.home + "/store")
        defer { environment.close() }
        let tree = try #require(try environment.table("merkle"))
        try environment.write { txn in try body(txn, tree) }
    }

    func flip(level: Int, index: UInt64) throws {
        try tamperTree { txn, tree in
            let key = Self.key(level: level, index: index)
            var value = try #require(try txn.get(tree, key))
            value[3] ^= 0x10
            try txn.put(tree, key, value)
        }
    }

    func finding(_ arguments: String...) throws -> [String: Any] {
        let result = try jqc.run(["verify", "--json"] + arguments)
        #expect(result.status == 1, "\(result.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try #require(object["finding"] as? [String: Any])
    }

    static let damage: [(String, @Sendable (Transaction, Table) throws -> Void, String)] = [
        (
            "flipped",
            { txn, tree in
                let key = Self.key(level: 1, index: 1)
                var value = try #require(try txn.get(tree, key))
                value[0] ^= 1
                try txn.put(tree, key, value)
            }, "merkle[1/1]"
        ),
        ("deleted", { txn, tree in _ = try txn.delete(tree, Self.key(level: 2, index: 0)) }, "merkle[2/0]"),
        (
            "extra",
            { txn, tree in try txn.put(tree, Self.key(level: 1, index: 1000), [UInt8](repeating: 1, count: 32)) },
            "merkle[1/1000]"
        ),
    ]

    @Test(arguments: damage.indices)
    func verifyFullNamesADamagedNode(_ index: Int) throws {
        let (name, damage, key) = Self.damage[index]
        try tamperTree(damage)
        let finding = try finding()
        #expect(finding["key"] as? String == key, "\(name): \(finding)")
        let text = try jqc("verify", "--full")
        #expect(text.status == 1)
        #expect(text.errorKind == "LedgerVerificationFailure", "\(text.stderr)")
        #expect(text.stderr.contains(key), "\(name): \(text.stderr)")
    }

    @Test func checkpointAndProveRefuseToSignOverADamagedNode() throws {
        try flip(level: 1, index: 1)
        let checkpoint = try jqc("checkpoint")
        #expect(checkpoint.status == 1)
        #expect(checkpoint.stdout.isEmpty)
        #expect(checkpoint.errorKind == "TreeCheckError", "NOT SIGNED: \(checkpoint.stderr)")
        let node = checkpoint.errorDetail
        #expect(
            node?["level"] as? Int == 1 && node?["index"] as? Int == 1,
            "the node at level 1, index 1: \(checkpoint.stderr)")
        #expect(!checkpoint.stderr.contains("run 'jqc checkpoint'"))
        let prove = try jqc("prove", scenario.parent)
        #expect(prove.status == 1)
        #expect(prove.stdout.isEmpty)
        #expect(prove.errorKind == "TreeCheckError", "\(prove.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scenario.home + "/last-checkpoint"))
    }

    @Test func aSignedCheckpointIsTheAnchorOfTheNextAndADamagedNodeSinceIsRefused() throws {
        let first = try jqc("checkpoint")
        #expect(first.status == 0, "\(first.stderr)")
        let anchor = try String(contentsOfFile: scenario.home + "/last-checkpoint", encoding: .utf8)
        #expect(anchor == first.stdout)
        // Records appended since, and the level-1 node the last one completes, damaged.
        var size = try #require(UInt64(first.stdout.split(separator: "\n")[1]))
        repeat {
            try scenario.run("--as", "dana", "start", "-t", "11", "-f", "101", "-a", "1001")
            size += 1
        } while size % 2 == 1
        try flip(level: 1, index: size / 2 - 1)
        let second = try jqc("checkpoint")
        #expect(second.status == 1)
        #expect(second.errorKind == "TreeCheckError", "\(second.stderr)")
    }

    @Test func proveRefusesABundleWhoseRecordsFailTheirOwnProofs() throws {
        // The device key's record sits early in the log; the level-1 node
        // beside its own pair is on its inclusion path, inside the tree a
        // signed checkpoint already vouches for.
        #expect(try jqc("checkpoint").status == 0)
        let position = try scenario.position(of: scenario.parent, where: "set Floors")
        try flip(level: 1, index: ((position - 1) >> 1) ^ 1)
        let prove = try jqc("prove", scenario.parent)
        #expect(prove.status == 1)
        #expect(prove.stdout.isEmpty)
        #expect(prove.errorKind == "TreeCheckError", "\(prove.stderr)")
        #expect(prove.errorDetail == nil, "a record's inclusion proof failed, not a stored node: \(prove.stderr)")
    }

    @Test func aRecordRewrittenUnderAnUnchangedTreeFailsAnEarlierCheckpoint() throws {
        let note = try jqc("checkpoint")
        #expect(note.status == 0, "\(note.stderr)")
        let file = scenario.directory.appending("before.checkpoint")
        try note.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let size = try #require(note.stdout.split(separator: "\n").dropFirst().first.map(String.init))

        // The forger rewrites one answer, re-links the stream and recomputes the chain; the tree is left alone.
        let position = try scenario.position(of: scenario.parent, where: "set Floors")
        try LedgerForger.rewrite(store: scenario.home + "/store", from: position, tree: .leftAsItIs) {
            $0.event.actor.name = "mallory"
        }
        let full = try jqc("verify", "--checkpoint", file, "--full")
        #expect(full.status == 1)
        #expect(!full.stdout.contains("extends the checkpoint"), "\(full.stdout)")
        #expect(
            full.stderr.contains(
                "NOT INTACT: the first \(size) records do not have the root the checkpoint signs, recomputed from the records themselves"
            ), "\(full.stderr)")
        #expect(full.stderr.contains("merkle[1/\((position - 1) / 2)]"), "\(full.stderr)")
        let verified = try jqc("checkpoint", "--verify", file)
        #expect(verified.status == 1)
        #expect(verified.errorKind == "CheckpointError.notExtended", "\(verified.stderr)")
        #expect(verified.stderr.contains("they were changed"))
        // The walk alone names the node over the rewritten record.
        let walked = try finding("--full")
        #expect(walked["key"] as? String == "merkle[1/\((position - 1) / 2)]", "\(walked)")
    }

    /// The records a finding names ("record 12", "record 12 or record 13").
    static func namedRecords(_ text: String) -> Set<UInt64> {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ":" || $0 == "(" || $0 == ")" })
        return Set(zip(words, words.dropFirst()).compactMap { $0 == "record" ? UInt64($1) : nil })
    }

    @Test func theProofPathAuditNamesTheRewrittenRecordNotOnlyItsNeighbour() throws {
        // The forger rewrites one answer, re-links the stream and recomputes
        // the chain; the tree is left alone. The answer's pair partner is a
        // record of the same inspection, whose proof fails first.
        let positions = try jqc("log", "--inspection", scenario.parent).stdout.split(separator: "\n").compactMap {
            UInt64($0.split(separator: " ").first ?? "")
        }
        // The right leaf of a pair whose left leaf is the inspection's too.
        let position = try #require(positions.first { $0 % 2 == 0 && positions.contains($0 - 1) })
        try LedgerForger.rewrite(store: scenario.home + "/store", from: position, tree: .leftAsItIs) {
            $0.event.actor.name = "mallory"
        }
        let audit = try jqc("audit", scenario.parent)
        #expect(audit.status == 1, "\(audit.stdout)")
        let result = try #require(audit.stdout.split(separator: "\n").first { $0.hasPrefix("RESULT: ") })
        let named = Self.namedRecords(String(result))
        #expect(named.contains(position), "\(result)")
        let sibling = position % 2 == 1 ? position + 1 : position - 1
        #expect(named.isSubset(of: [position, sibling]), "\(result)")
        if named.count == 2 { #expect(result.contains("cannot tell which of the two"), "\(result)") }
    }

    @Test func aLogWithoutItsKeyRecordIsNotAdvisedToBeSigned() throws {
        // Signed elsewhere (another copy of the ledger): this log records no key.
        let other = try scenario.copy()
        let note = try other.jqc.run(["checkpoint"])
        #expect(note.status == 0, "\(note.stderr)")
        let file = scenario.directory.appending("elsewhere.checkpoint")
        try note.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        for arguments in [["verify", "--checkpoint", file], ["checkpoint", "--verify", file]] {
            let result = try jqc.run(arguments)
            #expect(result.status == 1)
            #expect(
                result.stderr.contains("NOT VERIFIED: the log records no signing key for device "), "\(result.stderr)")
            #expect(result.errorKind == "CheckpointError.noKeyRecord", "\(arguments): \(result.stderr)")
        }
    }

    /// Rewrites the record at `position` with `edit` and recomputes the chain
    /// from there on, as a forger with the files would; the tree is left.
    func rewriteRechained(_ position: UInt64, _ edit: (inout [UInt8]) -> Void) throws {
        // A forger with the files rewrites the head file too (`store-head`
        // would otherwise refuse the rewritten head before any check runs).
        unlink(scenario.home + "/store-head")
        let environment = try Environment(directory: scenario.home + "/store")
        defer { environment.close() }
        let events = try #require(try environment.table("events"))
        try environment.write { txn in
            let chain = HashChain()
            var previous = Digest256(
                bytes: Array(try #require(try txn.get(events, BigEndian.bytes(position - 1)))[0..<32]))!
            var p = position
            while let value = try txn.get(events, BigEndian.bytes(p)) {
                var record = Array(value[32...])
                if p == position { edit(&record) }
                previous = chain.next(previous: previous, record: record)
                try txn.put(events, BigEndian.bytes(p), previous.bytes + record)
                p += 1
            }
        }
    }

    @Test func aRecordWhoseTimeIsTextIsNamedByVerifyAuditAndSalvage() throws {
        let position = try scenario.position(of: scenario.parent, where: "set Floors")
        try rewriteRechained(position) { bytes in
            let at = (0..<(bytes.count - 1)).first { bytes[$0] == 0x0A && bytes[$0 + 1] == 0x1B }!
            bytes.replaceSubrange((at + 1)..<(at + 10), with: [0x63] + Array("now".utf8))
        }
        let wording = "record \(position) is not laid out as a record (key 10 (recorded at): expected a CBOR integer"
        let verify = try jqc("verify", "--full")
        #expect(verify.status == 1)
        #expect(verify.errorKind == "LedgerVerificationFailure", "\(verify.stderr)")
        #expect(try finding("--full")["position"] as? Int == Int(position), "NOT INTACT: \(wording)")
        let audit = try jqc("audit", scenario.parent, "--full")
        #expect(audit.status == 1)
        let report = try scenario.report(scenario.parent, "--full", expectingStatus: 1)
        let auditFinding = (report["verification"] as? [String: Any])?["finding"] as? [String: Any]
        #expect(auditFinding?["kind"] as? String == "malformed" && auditFinding?["position"] as? Int == Int(position))
        let destination = scenario.directory.appending("salvaged")
        let salvage = try jqc("salvage", destination)
        #expect(
            (salvage.stdout + salvage.stderr).contains(
                "record \(position) is not a record this program reads (malformed record: key 10 (recorded at)"),
            "\(salvage.stdout)\(salvage.stderr)")
    }
}
