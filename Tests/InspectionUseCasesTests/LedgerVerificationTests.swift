import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `jqc verify` of a ledger without `jqc`: what a checkpoint handed over
/// proves (and an inspection's records against it), the walk, a digest, and
/// what each step says and puts in the JSON; what fails, and how.
@Suite struct LedgerVerificationTests {
    /// The inspection of `Audited` (its 4 records), its key published (the
    /// log's 5th), and a checkpoint of today's log in a file.
    struct Verified {
        let proving: InspectionProvingTests.Proving
        let checkpointFile: String
        let checkpoint: Checkpoint

        init() throws {
            proving = try InspectionProvingTests.Proving()
            let audited = proving.audited
            let auditor = try AuditorLedger.open(audited.directory, views: false)
            defer { auditor.close() }
            let key = proving.key
            let (checkpoint, note) = try auditor.log.read { reader in
                try SignedCheckpoint.today(reader, key: key, home: audited.directory)
            }
            self.checkpoint = checkpoint
            checkpointFile = audited.temporary.appending("checkpoint-\(UUID())")
            try Data(note.utf8).write(to: URL(fileURLWithPath: checkpointFile))
        }

        var directory: LedgerDirectory { proving.audited.directory }
        var inspection: String { String(proving.audited.inspection.lowercased.prefix(8)) }

        /// Both steps as `jqc verify` takes them: the walk only when `full`.
        func verify(_ verification: LedgerVerification) throws -> (
            anchoring: LedgerVerification.Step, walk: LedgerVerification.Step?
        ) {
            let auditor = try AuditorLedger.open(directory, views: false)
            defer { auditor.close() }
            let anchoring = try verification.anchoring(auditor, home: directory)
            guard verification.full else { return (anchoring, nil) }
            var reported: [UInt64] = []
            let walk = try verification.walk(auditor.log, after: anchoring) { done, _ in reported.append(done) }
            #expect(reported.last == walk.members["checked"].flatMap { UInt64($0.description) })
            return (anchoring, walk)
        }
    }

    /// The auditor's choices, and what each step must say (lines, JSON keys).
    struct Choice: Sendable, CustomTestStringConvertible {
        let name: String
        let checkpoint: Bool
        let inspection: Bool
        let full: Bool
        /// The starts of the anchoring step's lines, then of the walk's.
        let anchoringLines: [String]
        let walkLines: [String]
        let keys: Set<String>
        var testDescription: String { name }
    }

    static let choices: [Choice] = [
        Choice(
            name: "the walk alone", checkpoint: false, inspection: false, full: true, anchoringLines: [],
            walkLines: ["intact: 5 records verified, chain head jqc-digest-v1:5:"],
            keys: ["intact", "checked", "head", "digest", "finding", "head_map_behind"]),
        Choice(
            name: "a checkpoint, no walk", checkpoint: true, inspection: false, full: false,
            anchoringLines: ["intact: the log (5 records) extends the checkpoint of 5 records signed by jqc/"],
            walkLines: [], keys: ["checkpoint", "intact"]),
        Choice(
            name: "a checkpoint and an inspection", checkpoint: true, inspection: true, full: false,
            anchoringLines: [
                "proven: the 4 records of inspection ", "intact: the log (5 records) extends the checkpoint of 5",
            ], walkLines: [], keys: ["checkpoint", "inspection", "intact"]),
        Choice(
            name: "a checkpoint and the walk", checkpoint: true, inspection: true, full: true,
            anchoringLines: ["proven: the 4 records of inspection "],
            walkLines: [
                "intact: 5 records verified, chain head ",
                "extends the checkpoint: the first 5 records have its root, recomputed from the records",
            ], keys: ["checkpoint", "inspection", "intact", "checked", "head", "digest", "finding", "head_map_behind"]),
    ]

    static func starts(_ lines: [String], _ prefixes: [String]) -> Bool {
        lines.count == prefixes.count && zip(lines, prefixes).allSatisfy { $0.hasPrefix($1) }
    }

    @Test(arguments: choices)
    func eachStepSaysWhatItProved(_ choice: Choice) throws {
        let verified = try Verified()
        let (anchoring, walk) = try verified.verify(
            LedgerVerification(
                digest: nil, checkpointFile: choice.checkpoint ? verified.checkpointFile : nil,
                inspection: choice.inspection ? verified.inspection : nil, full: choice.full))
        #expect(Self.starts(anchoring.lines, choice.anchoringLines), "\(anchoring.lines)")
        #expect(Self.starts(walk?.lines ?? [], choice.walkLines), "\(walk?.lines ?? [])")
        let result = walk ?? anchoring
        #expect(Set(result.members.keys) == choice.keys)
        #expect(result.members["intact"] == .bool(true))
        #expect(result.failure == nil)
        #expect(anchoring.signed == (choice.checkpoint ? verified.checkpoint : nil))
        if choice.checkpoint {
            let checkpoint = try #require(result.members["checkpoint"])
            #expect(checkpoint["size"] == .integer(5))
            #expect(checkpoint["extended_to"] == .integer(5))
            #expect(checkpoint["key"] == .string(verified.proving.key.verifierKey))
        }
        if choice.inspection {
            #expect(
                result.members["inspection"]
                    == .object([
                        "id": .string(verified.proving.audited.inspection.lowercased), "records_proven": .integer(4),
                    ]))
        }
        // The JSON is the members, keys sorted.
        guard case .object(let members) = result.jsonValue else {
            throw LedgerVerificationFailure(finding: "no object")
        }
        #expect(members.map(\.key) == result.members.keys.sorted())
    }

    /// A log that grew after the checkpoint still extends it, by a consistency proof.
    @Test func aLogThatGrewExtendsTheCheckpointByAProof() throws {
        let verified = try Verified()
        try verified.proving.answer("third")
        let (anchoring, _) = try verified.verify(
            LedgerVerification(digest: nil, checkpointFile: verified.checkpointFile, inspection: nil, full: false))
        let checkpoint = try #require(anchoring.members["checkpoint"])
        #expect(checkpoint["size"] == .integer(5))
        #expect(checkpoint["extended_to"] == .integer(6))
        #expect(checkpoint["proof_hashes"] != .integer(0))
        #expect(
            anchoring.lines.first?.hasPrefix("intact: the log (6 records) extends the checkpoint of 5 records") == true)
    }

    /// What the walk finds against a digest: its failure, said after the JSON that names it.
    @Test(arguments: [
        ("a digest of another log", LedgerDigest(position: 2, head: .zero), "digest"),
        ("a digest of a longer log", LedgerDigest(position: 9, head: .zero), "truncated"),
    ])
    func aDigestTheLogDoesNotExtendFails(name: String, digest: LedgerDigest, word: String) throws {
        let verified = try Verified()
        let (_, walk) = try verified.verify(
            LedgerVerification(digest: digest, checkpointFile: nil, inspection: nil, full: true))
        let step = try #require(walk)
        let failure = try #require(step.failure, "\(name)")
        #expect(failure.description.hasPrefix("NOT INTACT: "))
        #expect(step.lines.isEmpty)
        #expect(step.members["intact"] == .bool(false))
        let finding = try #require(step.members["finding"])
        #expect(finding["message"] == .string(failure.finding))
        #expect(failure.finding.lowercased().contains(word), "\(failure.finding)")
    }

    /// A checkpoint of more records than the log holds (signed by its own
    /// key) is refused before any walk: the log was truncated.
    @Test func aCheckpointOfALongerLogIsRefused() throws {
        let verified = try Verified()
        let longer = Checkpoint(
            origin: verified.proving.key.name, size: verified.checkpoint.size + 5, root: verified.checkpoint.root)
        try Data(try longer.signed(by: verified.proving.key).utf8).write(
            to: URL(fileURLWithPath: verified.checkpointFile))
        do {
            _ = try verified.verify(
                LedgerVerification(digest: nil, checkpointFile: verified.checkpointFile, inspection: nil, full: true))
            Issue.record("a checkpoint of a longer log was not refused")
        } catch let error as CheckpointError {
            #expect("\(error)".contains("the log only \(verified.checkpoint.size): it was truncated"), "\(error)")
        }
    }
}
