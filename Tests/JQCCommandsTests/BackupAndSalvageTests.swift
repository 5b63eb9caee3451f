import Foundation
import LMDB
import LedgerStore
import LedgerTestSupport
import Testing

/// `jqc backup` and its restore, and `jqc salvage` of a damaged ledger,
/// through the built binary on a real ledger with a photo.
@Suite struct BackupAndSalvageTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String
    var home: String { directory.appending("ledger") }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        inspection = try jqc.recordSampleInspection()
        let photo = try SampleReference.writePNG(in: directory.path, name: "leak.png", red: 10)
        try JQCRunner.succeeded(jqc("--as", "Dana", "photo", inspection, "Photo of problem area", photo))
    }

    /// The object a `--json` run printed; the run must succeed.
    func object(_ result: ProcessResult) throws -> [String: Any] {
        let output = JQCRunner.succeeded(result).stdout
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    func digest(_ runner: JQCRunner) throws -> String {
        try JQCRunner.succeeded(runner("digest")).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aBackupRestoredByCopyingIsTheSameLedger() throws {
        let before = try JQCRunner.succeeded(jqc("--json", "show", inspection)).stdout
        let digest = try digest(jqc)
        let backup = directory.appending("backup")
        let result = try object(jqc("--json", "backup", backup))
        #expect(result["verified"] as? Bool == true, "the copy's chain is intact")
        #expect(result["photos"] as? Int == 1, "\(result)")
        let mode = try FileManager.default.attributesOfItem(atPath: backup + "/store/data.mdb")[.posixPermissions]
        #expect(mode as? Int == 0o600)

        // Lose the ledger, then restore it by copying the backup into place.
        try FileManager.default.removeItem(atPath: home)
        let copy = try ProcessRun.run("/bin/cp", ["-a", backup, home])
        #expect(copy.status == 0)
        #expect(try JQCRunner.succeeded(jqc("verify")).stdout.contains("intact"))
        #expect(try self.digest(jqc) == digest)
        #expect(try JQCRunner.succeeded(jqc("--json", "show", inspection)).stdout == before)
        let audit = try jqc("audit", inspection)
        #expect(audit.status == 0, "the restored photo must verify: \(audit.stderr)")
    }

    @Test func aBackupNeverOverwrites() throws {
        let backup = directory.appending("backup")
        try FileManager.default.createDirectory(atPath: backup, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: backup + "/keep.txt", contents: Data("mine".utf8)))
        let result = try jqc("backup", backup)
        #expect(result.status == 1)
        #expect(result.errorKind == "CopyDestinationError.notEmpty", "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: backup) == ["keep.txt"])
    }

    @Test func salvageOfAnIntactLedgerKeepsEveryRecordAndItsDigest() throws {
        let digest = try digest(jqc)
        let target = directory.appending("salvaged")
        let result = try object(jqc("--json", "salvage", target))
        #expect(result["first_break"] is NSNull && result["records_after_break"] as? Int == 0, "every record verified")
        let salvaged = JQCRunner(ledger: target)
        #expect(try self.digest(salvaged) == digest)
        try JQCRunner.succeeded(salvaged("show", inspection))
    }

    /// Changes one byte of record `position` behind the log's back.
    func changeRecord(at position: UInt64) throws {
        let environment = try Environment(directory: home + "/store")
        defer { environment.close() }
        let events = try #require(try environment.table("events"))
        try environment.write { txn in
            var value = try #require(try txn.get(events, BigEndian.bytes(position)))
            value[value.count - 1] ^= 0x01
            try txn.put(events, BigEndian.bytes(position), value)
        }
    }

    @Test func salvageStopsAtTheFirstBrokenLinkAndSaysWhatWasLost() throws {
        try changeRecord(at: 5)
        let data = FileManager.default.contents(atPath: home + "/store/data.mdb")
        let target = directory.appending("salvaged")
        let result = try object(jqc("--json", "salvage", target))
        #expect(result["records"] as? Int == 4, "salvaged positions 1–4: \(result)")
        #expect((result["records_after_break"] as? Int ?? 0) > 0, "lost: everything from position 5 on")
        #expect((result["first_break"] as? String)?.hasPrefix("record 5 ") == true, "\(result)")
        #expect(FileManager.default.contents(atPath: home + "/store/data.mdb") == data, "salvage changed the source")
        let salvaged = JQCRunner(ledger: target)
        let verified = try object(salvaged("--json", "verify"))
        #expect(verified["intact"] as? Bool == true && verified["checked"] as? Int == 4, "\(verified)")
        try JQCRunner.succeeded(salvaged("show", inspection))
    }

    static let damagedMeta = ["meta page 0", "meta page 1", "older txnid"]

    @Test(arguments: damagedMeta)
    func salvageReadsAroundADamagedMetaPage(damage: String) throws {
        let path = home + "/store/data.mdb"
        var data = try #require(FileManager.default.contents(atPath: path))
        let txn0 = data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 144, as: UInt64.self) }
        let txn1 = data.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4096 + 144, as: UInt64.self) }
        switch damage {
        case "meta page 0": data[16] ^= 0xFF
        case "meta page 1": data[4096 + 16] ^= 0xFF
        default: data[(txn0 < txn1 ? 0 : 4096) + 144] ^= 0xFF
        }
        try data.write(to: URL(fileURLWithPath: path))
        #expect(try jqc("verify").status == 1)
        let target = directory.appending("salvaged")
        let result = try object(jqc("--json", "salvage", target))
        #expect(result["meta_pages_repaired"] as? Bool == true, "read through a repaired copy: \(result)")
        #expect(FileManager.default.contents(atPath: path) == data, "salvage changed the source")
        let salvaged = JQCRunner(ledger: target)
        let verify = try JQCRunner.succeeded(salvaged("--json", "verify"))
        let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
        // At most the commit named only by the damaged meta page is lost.
        #expect((report?["checked"] as? Int ?? 0) >= 7, "\(verify.stdout)")
    }

    @Test func salvageRefusesWhenNothingCanBeRead() throws {
        #expect(truncate(home + "/store/data.mdb", 0) == 0)
        let target = directory.appending("salvaged")
        let result = try jqc("salvage", target)
        #expect(result.status == 1 && !result.signalled)
        #expect(result.errorKind == "SalvageError.noUsableMetaPage", "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    /// One byte of every page's header changed in turn: salvage never dies
    /// with its reader, never changes the source, and what it keeps verifies.
    @Test func salvageSurvivesADamagedPageAnywhere() throws {
        let path = home + "/store/data.mdb"
        let pristine = try #require(FileManager.default.contents(atPath: path))
        var readerStopped = 0
        for page in 2..<(pristine.count / 4096) {
            var data = pristine
            data[page * 4096 + 20] ^= 0xFF
            try data.write(to: URL(fileURLWithPath: path))
            let target = directory.appending("salvaged-\(page)")
            let result = try jqc("salvage", target)
            #expect(!result.signalled && result.status <= 1, "page \(page): \(result.stderr)")
            #expect(FileManager.default.contents(atPath: path) == data, "salvage changed the source (page \(page))")
            if result.status == 0 {
                let verify = try JQCRunner(ledger: target)("verify")
                #expect(verify.status == 0, "page \(page): the salvaged ledger does not verify: \(verify.stderr)")
            } else {
                #expect(!FileManager.default.fileExists(atPath: target), "page \(page): a failed salvage left DEST")
            }
            if result.stdout.contains("could not be read past position") { readerStopped += 1 }
        }
        #expect(readerStopped > 0, "no damaged page stopped the reader: the child-process path went untested")
    }
}
