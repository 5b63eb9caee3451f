import Foundation
import LMDB
import LedgerCore
import LedgerTestSupport
import Testing

/// `jqc audit ID` through proofs (the default): what it proves, what it
/// leaves to `--full`, and `--checkpoint FILE` against a forger's rewrite.
@Suite struct AuditProofTests {
    let scenario: AuditScenario
    var jqc: JQCRunner { scenario.jqc.reportingKinds }

    init() throws { scenario = try AuditCommandTests.shared.get().copy() }

    func lines(_ result: ProcessResult) -> [String] { result.stdout.split(separator: "\n").map(String.init) }

    @Test func theReportSaysWhatWasProvenAndHow() throws {
        // The device key is published by its first checkpoint: the audit's checkpoint is then signed.
        #expect(try jqc("checkpoint").status == 0)
        let result = try jqc("audit", scenario.parent)
        #expect(result.status == 0, "\(result.stderr)")
        let count = try scenario.envelopes(of: scenario.parent).count
        #expect(
            lines(result).contains {
                $0.hasPrefix(
                    "  chain: INTACT: the inspection's \(count) records proven through the Merkle tree of ")
                    && $0.contains("(inclusion proofs, stream versions 1–\(count), back-links) against a checkpoint")
                    && $0.contains("made now, signed by jqc/")
            }, "\(result.stdout)")
        #expect(result.stdout.contains("  scope: records of other inspections are not this audit's concern"))

        let text = try scenario.reportText(scenario.parent)
        try scenario.validate(report: text)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let verification = try #require(report["verification"] as? [String: Any])
        #expect(verification["method"] as? String == "proofs")
        let proof = try #require(verification["proof"] as? [String: Any])
        #expect(proof["records_proven"] as? Int == count && proof["records"] as? Int == count)
        let checkpoint = try #require(proof["checkpoint"] as? [String: Any])
        #expect(checkpoint["anchor"] as? String == "made_now")
        #expect((checkpoint["signer"] as? String)?.hasPrefix("jqc/") == true)
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        #expect(timeline.allSatisfy { $0["chain"] as? String == "verified" })

        let full = try scenario.report(scenario.parent, "--full")
        #expect((full["verification"] as? [String: Any])?["method"] as? String == "full_walk")
    }

    @Test func aChangedRecordOfAnotherInspectionIsNotThisAuditsConcern() throws {
        let first = try #require(
            try scenario.run("log", "--inspection", scenario.discarded).stdout.split(separator: "\n").first)
        let position = try #require(UInt64(first.split(separator: " ").first ?? ""))
        try scenario.tamper { txn, events in
            var value = try #require(try txn.get(events, BigEndian.bytes(position)))
            let index = try #require(AuditScenario.find(Array("dana".utf8), in: value))
            value[index + 1] = UInt8(ascii: "i")
            try txn.put(events, BigEndian.bytes(position), value)
        }
        let proven = try jqc("audit", scenario.parent)
        #expect(proven.status == 0, "\(proven.stderr)")
        let report = try scenario.report(scenario.parent)
        #expect((report["result"] as? [String: Any])?["verdict"] as? String == "INTACT")
        #expect(
            proven.stdout.contains("records of other inspections are not this audit's concern and were not checked"))
        // The other inspection's own audit, and the full walk, catch it.
        let own = try jqc("audit", scenario.discarded)
        #expect(own.status == 1, "\(own.stdout)")
        let ownFinding =
            (try scenario.report(scenario.discarded, expectingStatus: 1)["verification"] as? [String: Any])?[
                "finding"] as? [String: Any]
        #expect(
            ownFinding?["position"] as? Int == Int(position),
            "NOT INTACT: record \(position): \(String(describing: ownFinding))")
        let walked = try jqc("audit", scenario.parent, "--full")
        #expect(walked.status == 1)
        let walkedFinding =
            (try scenario.report(scenario.parent, "--full", expectingStatus: 1)["verification"]
            as? [String: Any])?["finding"] as? [String: Any]
        #expect(walkedFinding?["kind"] as? String == "changed" && walkedFinding?["position"] as? Int == Int(position))
    }

    @Test func aCheckpointFromBeforeAConsistentRewriteFails() throws {
        let note = try jqc("checkpoint")
        #expect(note.status == 0, "\(note.stderr)")
        let file = scenario.directory.appending("before.checkpoint")
        try note.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let anchored = try jqc("audit", scenario.parent, "--checkpoint", file)
        #expect(anchored.status == 0, "\(anchored.stderr)")
        let given = try scenario.report(scenario.parent, "--checkpoint", file)
        let checkpoint =
            ((given["verification"] as? [String: Any])?["proof"] as? [String: Any])?["checkpoint"]
            as? [String: Any]
        #expect(
            checkpoint?["anchor"] as? String == "file" && checkpoint?["source"] as? String == file,
            "against the checkpoint of the file given: \(String(describing: checkpoint))")
        #expect(checkpoint?["consistency_hashes"] is Int, "with a consistency proof of its hashes")

        // The forger changes the parent's third record and rewrites everything after it consistently.
        let position = try scenario.position(of: scenario.parent, where: "set Floors")
        try LedgerForger.rewrite(store: scenario.home + "/store", from: position) { $0.event.actor.name = "mallory" }
        #expect(try jqc("stats").status == 0)  // a writable open derives the forged tree
        // Consistent in itself: neither the walk nor a checkpoint made now tells.
        #expect(try jqc("audit", scenario.parent, "--full").status == 0)
        #expect(try jqc("audit", scenario.parent).status == 0)
        let result = try jqc("audit", scenario.parent, "--checkpoint", file)
        #expect(result.status == 1)
        #expect(
            result.stdout.contains("RESULT: NOT INTACT: the log does not extend the checkpoint"), "\(result.stdout)")
        let report = try scenario.report(scenario.parent, "--checkpoint", file, expectingStatus: 1)
        let finding = try #require((report["verification"] as? [String: Any])?["finding"] as? [String: Any])
        #expect(finding["kind"] as? String == "not_extended")
    }

    @Test func aCheckpointIsNotTakenWithTheWalk() throws {
        let result = try jqc("audit", scenario.parent, "--full", "--checkpoint", "x")
        #expect(result.status != 0)
        #expect(result.errorKind == "UsageError.unexpectedArgument", "\(result.stderr)")
    }
}
