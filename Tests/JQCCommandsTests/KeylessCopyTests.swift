import Foundation
import LedgerTestSupport
import Testing

/// An auditor's copy without the device key, through the built `jqc`:
/// `prove` and `audit` use the checkpoint the copy holds (or one given),
/// sign and append nothing, and work on a read-only copy; `checkpoint`
/// says it needs the device's key.
@Suite struct KeylessCopyTests {
    struct Copy {
        let directory = TemporaryDirectory(prefix: "keyless-copy")
        var device: JQCRunner { JQCRunner(ledger: directory.appending("device")) }
        var copyPath: String { directory.appending("copy") }
        let inspection: String
        let readOnly: Bool

        /// A device ledger with a signed checkpoint, one answer recorded
        /// after it, copied without its key; `readOnly` makes the copy so.
        init(readOnly: Bool) throws {
            self.readOnly = readOnly
            let device = JQCRunner(ledger: directory.appending("device"))
            inspection = try device.recordSampleInspection()
            try JQCRunner.succeeded(device("checkpoint"))
            try JQCRunner.succeeded(device("--as", "Dana", "set", inspection, "Floors", "3"))
            try FileManager.default.copyItem(atPath: directory.appending("device"), toPath: copyPath)
            try FileManager.default.removeItem(atPath: copyPath + "/device.key")
            if readOnly {
                // Root ignores permissions: the read-only copy is read by an ordinary user then.
                try AuditScenario.chmod(copyPath, "a+rX,a-w")
                try AuditScenario.chmod(directory.path, "a+rX")
            }
        }

        /// `jqc ARGUMENTS` on the copy (as nobody when root reads a read-only copy).
        func copy(_ arguments: String...) throws -> ProcessResult {
            let jqc = Products.executable("jqc")
            let command =
                readOnly && getuid() == 0
                ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", jqc] : [jqc]
            return try ProcessRun.run(
                "/usr/bin/env", command + arguments,
                environment: ["JQC_HOME": copyPath, "NO_COLOR": "1", "HOME": directory.path, "JQC_ERRORS": "json"])
        }

        func records() throws -> String {
            try JQCRunner.succeeded(copy("--json", "stats")).stdout
                .split(separator: ",").first { $0.contains("\"events\"") }.map(String.init) ?? ""
        }
    }

    @Test(arguments: [false, true])
    func proveAndAuditUseTheHeldCheckpointAndAppendNothing(readOnly: Bool) throws {
        let copy = try Copy(readOnly: readOnly)
        defer { _ = try? AuditScenario.chmod(copy.copyPath, "u+w") }
        let before = try copy.records()
        let proved = try JQCRunner.succeeded(copy.copy("prove", copy.inspection))
        #expect(proved.stderr.contains("this copy holds no device key, so nothing was signed"), "\(proved.stderr)")
        #expect(proved.stderr.contains("later records are not in that tree"), "\(proved.stderr)")
        let bundle = copy.directory.appending("bundle.json")
        try Data(proved.stdout.utf8).write(to: URL(fileURLWithPath: bundle))
        let verified = try JQCRunner.succeeded(copy.copy("verify", "--bundle", bundle))
        #expect(verified.stdout.hasPrefix("verified: inspection \(copy.inspection)"), "\(verified.stdout)")

        let audit = try JQCRunner.succeeded(copy.copy("audit", copy.inspection))
        let report = try JSONSerialization.jsonObject(
            with: Data(try JQCRunner.succeeded(copy.copy("--json", "audit", copy.inspection)).stdout.utf8))
        let verdict = ((report as? [String: Any])?["result"] as? [String: Any])?["verdict"] as? String
        #expect(verdict == "INTACT", "\(audit.stdout)")
        #expect(audit.stdout.contains("last-checkpoint"), "\(audit.stdout)")

        let signing = try copy.copy("checkpoint")
        #expect(signing.status == 1, "\(signing.stdout)")
        #expect(signing.errorKind == "DeviceKeyError.missing", "\(signing.stderr)")
        #expect(try copy.records() == before)
        #expect(!FileManager.default.fileExists(atPath: copy.copyPath + "/device.key"))
    }

    @Test func aGivenCheckpointIsTheBundlesOwn() throws {
        let copy = try Copy(readOnly: false)
        let handed = copy.directory.appending("handed.checkpoint")
        try Data(try JQCRunner.succeeded(copy.device("checkpoint")).stdout.utf8).write(
            to: URL(fileURLWithPath: handed))
        // The device's newest checkpoint covers the answer recorded after the held one.
        unlink(copy.copyPath + "/last-checkpoint")
        let refused = try copy.copy("prove", copy.inspection)
        #expect(refused.status == 1, "\(refused.stdout)")
        #expect(refused.errorKind == "ProvingError.nothingToProveAgainst", "\(refused.stderr)")
        let proved = try JQCRunner.succeeded(copy.copy("prove", copy.inspection, "--checkpoint", handed))
        #expect(!proved.stderr.contains("later records"), "\(proved.stderr)")
        let bundle = copy.directory.appending("bundle.json")
        try Data(proved.stdout.utf8).write(to: URL(fileURLWithPath: bundle))
        try JQCRunner.succeeded(copy.copy("verify", "--bundle", bundle, "--checkpoint", handed))
    }
}

/// Signing when the log lost its key record, through the built `jqc`.
@Suite struct KeyRecordLossCommandTests {
    @Test func aLedgerThatSignedBeforeIsNotSignedAgainWithoutItsKeyRecord() throws {
        let directory = TemporaryDirectory(prefix: "key-record-loss")
        let jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        let inspection = try jqc.recordSampleInspection()
        // The state a removed key record leaves: a log that published no
        // key, beside the checkpoint the device signed with it.
        let other = JQCRunner(ledger: directory.appending("other"))
        _ = try other.recordSampleInspection()
        let note = try JQCRunner.succeeded(other("checkpoint")).stdout
        try Data(note.utf8).write(to: URL(fileURLWithPath: directory.appending("ledger") + "/last-checkpoint"))
        let before = try JQCRunner.succeeded(jqc("--json", "stats")).stdout
        for command in [["checkpoint"], ["prove", inspection]] {
            let refused = try jqc.run(command)
            #expect(refused.status == 1, "\(command): \(refused.stdout)")
            #expect(refused.errorKind == "DeviceKeyError.keyRecordLost", "\(command): \(refused.stderr)")
        }
        #expect(try JQCRunner.succeeded(jqc("--json", "stats")).stdout == before)
    }
}
