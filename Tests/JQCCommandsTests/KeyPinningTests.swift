import Foundation
import LedgerTestSupport
import Testing

/// `--key VKEY` on `checkpoint --verify` and `audit`, through the built
/// `jqc`: the auditor's own copy of the key is the only one accepted, and
/// the signer is named with its key id and the keys the log published.
@Suite struct KeyPinningTests {
    struct Signed {
        let directory = TemporaryDirectory(prefix: "key-pinning")
        var path: String { directory.appending("ledger") }
        var jqc: JQCRunner { JQCRunner(ledger: path).reportingKinds }
        let inspection: String
        let checkpointFile: String
        let key: String
        var keyID: String { String(key.split(separator: "+")[1]) }

        init() throws {
            inspection = try JQCRunner(ledger: directory.appending("ledger")).recordSampleInspection()
            let signed = try JQCRunner.succeeded(
                JQCRunner(ledger: directory.appending("ledger"))("--json", "checkpoint"))
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(signed.stdout.utf8)) as? [String: Any])
            key = try #require(object["key"] as? String)
            checkpointFile = directory.appending("trusted.checkpoint")
            try Data(try #require(object["checkpoint"] as? String).utf8).write(to: URL(fileURLWithPath: checkpointFile))
        }

        /// Another ledger's verifier key.
        func otherKey() throws -> String {
            let other = JQCRunner(ledger: directory.appending("other"))
            try JQCRunner.succeeded(other("init"))
            let signed = try JQCRunner.succeeded(other("--json", "checkpoint"))
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(signed.stdout.utf8)) as? [String: Any])
            return try #require(object["key"] as? String)
        }
    }

    enum Check: String, CaseIterable {
        case checkpointVerify, auditWithCheckpoint, auditMadeNow
    }

    func arguments(_ check: Check, _ ledger: Signed) -> [String] {
        switch check {
        case .checkpointVerify: ["checkpoint", "--verify", ledger.checkpointFile]
        case .auditWithCheckpoint: ["audit", ledger.inspection, "--checkpoint", ledger.checkpointFile]
        case .auditMadeNow: ["audit", ledger.inspection]
        }
    }

    /// The signer as the check's `--json` output names it: `key_id`,
    /// `key_pinned` and `published_keys` (the audit's `verification.proof.checkpoint`).
    func signer(_ check: Check, _ ledger: Signed, _ more: [String] = []) throws -> [String: Any] {
        let output = try JQCRunner.succeeded(ledger.jqc.run(["--json"] + arguments(check, ledger) + more)).stdout
        let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        guard check != .checkpointVerify else { return object }
        let proof = (object["verification"] as? [String: Any])?["proof"] as? [String: Any]
        return try #require(proof?["checkpoint"] as? [String: Any], "\(output)")
    }

    @Test(arguments: Check.allCases)
    func theSignerIsNamedWithItsKeyIDPinnedOrPublished(check: Check) throws {
        let ledger = try Signed()
        let published = try signer(check, ledger)
        #expect(
            published["key_id"] as? String == ledger.keyID && published["key_pinned"] as? Bool == false,
            "a key the log published: \(published)")
        let pinned = try signer(check, ledger, ["--key", ledger.key])
        #expect(pinned["key_id"] as? String == ledger.keyID && pinned["key_pinned"] as? Bool == true, "\(pinned)")
    }

    @Test(arguments: Check.allCases)
    func anotherPinnedKeyIsRefused(check: Check) throws {
        let ledger = try Signed()
        let refused = try ledger.jqc.run(arguments(check, ledger) + ["--key", try ledger.otherKey()])
        #expect(refused.status == 1 && !refused.signalled, "\(refused.stdout)")
        #expect(refused.errorKind == "CheckpointError.notPinned", "\(refused.stderr)")
    }

    @Test func aPrivateKeyOrGarbageIsNotAPinnedKey() throws {
        let ledger = try Signed()
        let signerKey = try String(contentsOfFile: ledger.path + "/device.key", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for key in [signerKey, "jqc/x+0000+AAAA"] {
            let refused = try ledger.jqc("checkpoint", "--verify", ledger.checkpointFile, "--key", key)
            #expect(refused.status == 1, "\(refused.stdout)")
            #expect(refused.errorKind == "CheckpointError.unreadableKey", "\(refused.stderr)")
            #expect(!refused.stderr.contains("PRIVATE"), "a private key is never echoed")
        }
    }

    @Test func afterARotationTheChecksSayTheLogPublishedTwoKeys() throws {
        let ledger = try Signed()
        try JQCRunner.succeeded(ledger.jqc("key", "rotate"))
        let verified = try signer(.checkpointVerify, ledger)
        #expect(verified["key_id"] as? String == ledger.keyID && verified["key_pinned"] as? Bool == false)
        #expect(verified["published_keys"] as? Int == 2, "the log published 2 keys: \(verified)")
        let audit = try signer(.auditMadeNow, ledger)
        #expect(audit["published_keys"] as? Int == 2, "the log published 2 keys: \(audit)")
    }
}
