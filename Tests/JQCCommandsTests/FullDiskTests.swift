import Foundation
import LMDB
import LedgerStore
import LedgerTestSupport
import Testing

/// A full disk, on a small tmpfs the test mounts (as root). Where it cannot
/// mount one, the same wording is checked where LMDB's ENOSPC is read, so the
/// test never skips.
@Suite struct FullDiskTests {
    let directory = TemporaryDirectory()

    /// Mounts a tmpfs of `kib` KiB at a fresh directory, or answers nil.
    func mountTmpfs(kib: Int) throws -> String? {
        let point = directory.appending("disk")
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: false)
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return nil }
        let mounted = try ProcessRun.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kib)k", "tmpfs", point])
        return mounted.status == 0 ? point : nil
    }

    /// A new ledger on the small disk with the sample reference data and one
    /// restroom inspection started: its first eight digits.
    func startInspection(_ jqc: JQCRunner) throws -> String {
        #expect(try jqc("init").status == 0)
        #expect(try jqc("pull", "--from", SampleReference.path).status == 0)
        let started = try jqc(
            "--as", "Dana", "--json", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center",
            "--area", "1001")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        return String(try #require(object?["id"] as? String).prefix(8))
    }

    func unmount(_ point: String) throws {
        // Run from a `defer`, after the test's own checks: its outcome is not one of them.
        _ = try ProcessRun.run("/bin/umount", [point])
    }

    /// Fills `point` so that about `kib` KiB stay free.
    func fill(_ point: String, leaving kib: Int) throws {
        var stats = statvfs()
        #expect(statvfs(point, &stats) == 0)
        let free = Int(stats.f_bavail) * Int(stats.f_frsize)
        let size = max(0, free - kib * 1024)
        // The tests after it check the disk is full; a fill that fell short fails them.
        _ = FileManager.default.createFile(atPath: point + "/fill", contents: Data(count: size))
    }

    @Test func initOnAFullDiskLeavesNothingHalfMade() throws {
        guard let point = try mountTmpfs(kib: 512) else {
            let error = LedgerError.from(LMDBError(code: ENOSPC, operation: "creating"), store: directory.path)
            #expect("\(error)".hasPrefix("no space left on the device holding \(directory.path) ("))
            return
        }
        defer { _ = try? unmount(point) }
        for free in [4, 8, 40] {
            try? FileManager.default.removeItem(atPath: point + "/fill")
            try fill(point, leaving: free)
            let jqc = JQCRunner(ledger: point + "/ledger").reportingKinds
            let result = try jqc("init")
            #expect(result.status == 1 && !result.signalled, "init with \(free) KiB free: \(result.stderr)")
            #expect(result.errorKind == "LedgerError.noSpace", "\(result.stderr)")
            let detail = result.errorDetail
            #expect((detail?["path"] as? String)?.hasPrefix(point + "/ledger") == true, "\(result.stderr)")
            #expect(detail?["free_bytes"] is Int, "how much is free: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: point + "/ledger"), "init left a half-made ledger")
        }
    }

    @Test func recordingOnAFullDiskCommitsNothing() throws {
        guard let point = try mountTmpfs(kib: 1024) else {
            let error = LedgerError.from(LMDBError(code: EDQUOT, operation: "committing"), store: directory.path)
            #expect("\(error)".contains("KiB free); nothing was written"))
            return
        }
        defer { _ = try? unmount(point) }
        let jqc = JQCRunner(ledger: point + "/ledger").reportingKinds
        let id = try startInspection(jqc)
        try fill(point, leaving: 0)
        let note = String(repeating: "x", count: 3000)
        var refused: ProcessResult?
        for i in 0..<8 {
            let result = try jqc("--as", "Dana", "set", id, "Notes", "note \(i) \(note)")
            #expect(!result.signalled)
            if result.status != 0 {
                refused = result
                break
            }
        }
        let result = try #require(refused, "eight recordings fitted on a full disk")
        #expect(result.status == 1)
        #expect(result.errorKind == "LedgerError.noSpace", "\(result.stderr)")
        #expect((result.errorDetail?["path"] as? String)?.hasPrefix(point + "/ledger") == true, "\(result.stderr)")
        try FileManager.default.removeItem(atPath: point + "/fill")
        let verify = try jqc("verify")
        #expect(verify.status == 0, "\(verify.stderr)")
    }

    @Test func aCaptureThatCannotCommitLeavesNoPhotoFile() throws {
        guard let point = try mountTmpfs(kib: 1024) else {
            let error = LedgerError.from(LMDBError(code: ENOSPC, operation: "committing"), store: directory.path)
            #expect("\(error)".contains("no space left"))
            return
        }
        defer { _ = try? unmount(point) }
        let jqc = JQCRunner(ledger: point + "/ledger").reportingKinds
        let id = try startInspection(jqc)
        // Room for a small photo file, not for the pages its commit writes.
        try fill(point, leaving: 8)
        var failed = false
        for red in UInt8(1)...20 {
            let file = try SampleReference.writePNG(in: directory.path, name: "p\(red).png", red: red)
            let result = try jqc("--as", "Dana", "photo", id, "Photo of problem area", file)
            #expect(!result.signalled)
            if result.status != 0 {
                #expect(result.errorKind == "LedgerError.noSpace", "no space left on the device: \(result.stderr)")
                failed = true
                break
            }
        }
        #expect(failed, "twenty captures fitted in 8 KiB")
        try FileManager.default.removeItem(atPath: point + "/fill")
        let check = try jqc("check", "--photos")
        #expect(check.status == 0, "a photo file outlived its failed event: \(check.stdout)")
    }
}
