import Foundation
import LMDB
import LedgerStore
import LedgerTestSupport
import Testing

/// More of a full disk (`FullDiskTests`' tmpfs): a lock file deleted while
/// the disk was full, and the device key a refused command must not leave.
extension FullDiskTests {
    /// Fills `point` completely but for `kib` KiB: room for a small file,
    /// none for the store to grow.
    func fill(_ point: String, freeing kib: Int) throws {
        #expect(FileManager.default.createFile(atPath: point + "/spare", contents: Data(count: kib * 1024)))
        try fill(point, leaving: 0)
        try FileManager.default.removeItem(atPath: point + "/spare")
    }

    @Test(arguments: [
        ["verify"], ["inspections"], ["log"], ["stats"], ["--as", "Dana", "set", "PREFIX", "Notes", "x"],
    ])
    func aDeletedLockFileOnAFullDiskIsTheDiskNotASignal(command: [String]) throws {
        guard let point = try mountTmpfs(kib: 1024) else {
            let error = LedgerError.from(
                LMDBError(code: ENOSPC, operation: "reserving the lock file"), store: directory.path)
            #expect("\(error)".hasPrefix("no space left on the device holding"))
            return
        }
        defer { _ = try? unmount(point) }
        let jqc = JQCRunner(ledger: point + "/ledger").reportingKinds
        let id = try startInspection(jqc)
        #expect(unlink(point + "/ledger/store/lock.mdb") == 0)
        try fill(point, leaving: 0)
        let result = try jqc.run(command.map { $0 == "PREFIX" ? id : $0 })
        #expect(result.status == 1 && !result.signalled, "\(command): \(result.stdout)")
        #expect(result.errorKind == "LedgerError.noSpace", "\(result.stderr)")
        #expect((result.errorDetail?["path"] as? String)?.hasPrefix(point + "/ledger") == true, "\(result.stderr)")
        #expect(!result.stderr.contains("SIGBUS") && !result.stderr.contains("damaged"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: point + "/ledger/store/lock.mdb"), "a half-made lock file")
        try FileManager.default.removeItem(atPath: point + "/fill")
        let verify = try jqc("verify")
        #expect(verify.status == 0, "\(verify.stderr)")
    }

    @Test func aSigningRefusedOnAFullDiskLeavesNoNewKey() throws {
        guard let point = try mountTmpfs(kib: 1024) else {
            let error = LedgerError.from(LMDBError(code: ENOSPC, operation: "committing"), store: directory.path)
            #expect("\(error)".contains("nothing was written"))
            return
        }
        defer { _ = try? unmount(point) }
        let jqc = JQCRunner(ledger: point + "/ledger").reportingKinds
        let id = try startInspection(jqc)
        let key = point + "/ledger/device.key"
        // A ledger whose key was never published (no checkpoint yet) and is gone:
        // the first signing makes a new one.
        #expect(unlink(key) == 0)
        // Grown by large notes, so that a commit needs new pages of the file.
        let note = String(repeating: "n", count: 20_000)
        for i in 0..<3 { #expect(try jqc("--as", "Dana", "set", id, "Notes", "\(i) \(note)").status == 0) }
        var refusals = 0
        for kib in [4, 8] {
            try? FileManager.default.removeItem(atPath: point + "/fill")
            try fill(point, freeing: kib)
            for command in [["checkpoint"], ["prove", id]] {
                let result = try jqc.run(command)
                #expect(!result.signalled)
                if result.status != 0 {
                    refusals += 1
                    let full =
                        result.errorKind == "LedgerError.noSpace" || result.errorDetail?["errno"] as? Int == Int(ENOSPC)
                    #expect(full, "no space left: \(command): \(result.stderr)")
                    // A key may stay only once the log published it (the signing
                    // committed, a later write failed): then it is the device's key.
                    if FileManager.default.fileExists(atPath: key) {
                        let shown = try jqc("--json", "key")
                        let object = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
                        #expect(object?["in_force"] is String, "\(command) left an unpublished device.key")
                    }
                    #expect(!FileManager.default.fileExists(atPath: key + ".next"))
                }
            }
        }
        #expect(refusals > 0, "every signing fitted on the full disk")
        try FileManager.default.removeItem(atPath: point + "/fill")
        let signed = try jqc("checkpoint")
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(FileManager.default.fileExists(atPath: key), "the first signing made no key")
    }

    @Test(arguments: [["--as", "Dana", "set", "PREFIX", "Notes", "x"], ["pull", "--from", "REFERENCE"], ["verify"]])
    func aCommandThatDoesNotSignNeverMakesAKey(command: [String]) throws {
        let jqc = JQCRunner(ledger: directory.appending("ledger"))
        let id = try jqc.recordSampleInspection()
        #expect(unlink(directory.appending("ledger/device.key")) == 0)
        let arguments = command.map { $0 == "PREFIX" ? id : $0 == "REFERENCE" ? SampleReference.path : $0 }
        let result = try jqc.run(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("ledger/device.key")))
    }
}
