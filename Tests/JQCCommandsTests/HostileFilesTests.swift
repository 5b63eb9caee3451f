import Foundation
import InspectionStore
import JQCCommands
import LedgerStore
import LedgerTestSupport
import Testing

/// Files the user names for output never land inside the ledger, and no
/// planted link or second run makes a write land anywhere else.
@Suite struct OutputPathTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String
    var home: String { directory.appending("ledger") }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds
        inspection = try jqc.recordSampleInspection()
    }

    func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// Every file of the ledger directory with its bytes.
    func ledgerFiles() throws -> [String: Data] {
        var files: [String: Data] = [:]
        let walker = try #require(FileManager.default.enumerator(atPath: home))
        for case let name as String in walker {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: home + "/" + name, isDirectory: &isDirectory),
                !isDirectory.boolValue, name != "store/lock.mdb"
            {
                files[name] = contents(home + "/" + name)
            }
        }
        return files
    }

    static let insidePaths = [
        "ledger/store/data.mdb", "ledger/device.key", "ledger/config.json", "ledger/store/../store/data.mdb",
        "ledger/photos/report.html", "ledger", "link-to-store/data.mdb", "ledger/new-directory/report.txt",
    ]

    @Test(arguments: insidePaths)
    func anAuditReportIsNeverWrittenIntoTheLedger(path: String) throws {
        symlink(home + "/store", directory.appending("link-to-store"))
        #expect(try jqc("checkpoint").status == 0)  // device.key exists from here on
        let before = try ledgerFiles()
        let result = try jqc.run(["audit", inspection, "-o", directory.appending(path)])
        #expect(result.status == 1, "\(result.stdout)")
        #expect(result.errorKind == "OutputPathError", "\(result.stderr)")
        #expect(!result.stdout.contains("INTACT"))
        #expect(try ledgerFiles() == before, "the ledger's files changed")
        #expect(try jqc("verify").status == 0)
    }

    @Test func anAuditReportOutsideTheLedgerIsWritten() throws {
        let report = directory.appending("report.html")
        let result = try jqc("audit", inspection, "--format", "html", "-o", report)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(contents(report).map { String(decoding: $0, as: UTF8.self).contains("<html") } == true)
    }

    @Test func aPlantedLinkAtTheReportIsReplacedNotFollowed() throws {
        let victim = directory.appending("victim.txt")
        try Data("the user's own file\n".utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o600)
        let link = directory.appending("report.txt")
        #expect(symlink(victim, link) == 0)
        #expect(try jqc("audit", inspection, "-o", link).status == 0)
        #expect(contents(victim) == Data("the user's own file\n".utf8))
        var status = stat()
        #expect(stat(victim, &status) == 0 && status.st_mode & 0o777 == 0o600, "the victim's mode changed")
        #expect(lstat(link, &status) == 0 && status.st_mode & S_IFMT == S_IFREG)
    }

    static let insideDestinations = [
        "ledger/photos", "ledger/store/copy", "ledger/../ledger/backup", "link-to-ledger/b",
    ]

    @Test(arguments: insideDestinations)
    func aBackupOrSalvageIntoTheLedgerIsRefused(destination: String) throws {
        symlink(home, directory.appending("link-to-ledger"))
        let before = try ledgerFiles()
        for command in ["backup", "salvage"] {
            let result = try jqc.run([command, directory.appending(destination)])
            #expect(result.status == 1, "\(command): \(result.stdout)")
            #expect(result.errorKind == "OutputPathError", "\(command): \(result.stderr)")
        }
        #expect(try ledgerFiles() == before)
        #expect(!FileManager.default.fileExists(atPath: home + "/photos/store"))
    }

    @Test func aBackupRefusesALinkOrAFilledDestination() throws {
        let elsewhere = directory.appending("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        #expect(symlink(elsewhere, directory.appending("dest-link")) == 0)
        let linked = try jqc("backup", directory.appending("dest-link"))
        #expect(linked.status == 1 && linked.errorKind == "CopyDestinationError.symbolicLink", "\(linked.stderr)")
        let planted = directory.appending("planted")
        try FileManager.default.createDirectory(atPath: planted + "/photos", withIntermediateDirectories: true)
        let filled = try jqc("backup", planted)
        #expect(filled.status == 1 && filled.errorKind == "CopyDestinationError.notEmpty", "\(filled.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted) == ["photos"])
    }

    @Test func twoBackupsIntoOneNewDirectoryOneWinsTheOtherIsRefused() throws {
        let destination = directory.appending("usb/backup")
        let results = Locked<[ProcessResult]>([])
        let runner = jqc
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            if let result = try? runner("backup", destination) { results.withLock { $0.append(result) } }
        }
        let all = results.withLock { $0 }
        #expect(all.count == 2)
        #expect(all.filter { $0.status == 0 }.count == 1, "\(all.map(\.stderr))")
        let loser = try #require(all.first { $0.status != 0 })
        #expect(loser.status == 1 && !loser.signalled)
        #expect(
            ["CopyDestinationError.claimed", "CopyDestinationError.notEmpty"].contains(loser.errorKind),
            "\(loser.stderr)")
        // The winner's copy is whole: the loser removed nothing of it.
        #expect(try JQCRunner(ledger: destination)("verify").status == 0)
        #expect(FileManager.default.fileExists(atPath: destination + "/store-head"))
    }

    @Test func aClaimedDestinationIsNotClaimedTwice() throws {
        let destination = directory.appending("fresh")
        let first = try CopyDestination.claim(destination, ledger: home, for: "backup")
        #expect(first.madeDirectory)
        #expect(throws: CopyDestinationError.notEmpty(path: destination, command: "backup")) {
            try CopyDestination.claim(destination, ledger: home, for: "backup")
        }
        // An empty directory given by the user is taken; its store is made by one run only.
        let empty = directory.appending("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        mkdir(empty + "/store", 0o700)
        rmdir(empty + "/store")
        let taken = try CopyDestination.claim(empty, ledger: home, for: "salvage")
        #expect(!taken.madeDirectory)
        taken.remove()
        #expect(FileManager.default.fileExists(atPath: empty))
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
    }

    @Test func aBackupOnAFullDiskSaysTheDiskIsFull() throws {
        let point = directory.appending("disk")
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: false)
        guard getuid() == 0,
            try ProcessRun.run("/bin/mount", ["-t", "tmpfs", "-o", "size=400k", "tmpfs", point]).status == 0
        else {
            let error = LedgerError.noSpace(path: point, freeBytes: 0)
            #expect("\(error)".hasPrefix("no space left on the device holding \(point)"))
            return
        }
        defer { _ = try? ProcessRun.run("/bin/umount", [point]) }
        for leaving in [8, 24, 60] {
            try? FileManager.default.removeItem(atPath: point + "/fill")
            var stats = statvfs()
            #expect(statvfs(point, &stats) == 0)
            let free = Int(stats.f_bavail) * Int(stats.f_frsize)
            _ = FileManager.default.createFile(
                atPath: point + "/fill", contents: Data(count: max(0, free - leaving * 1024)))
            let result = try jqc("backup", point + "/backup-\(leaving)")
            #expect(result.status == 1 && !result.signalled, "\(leaving) KiB free: \(result.stdout)")
            #expect(result.errorKind == "LedgerError.noSpace", "\(result.stderr)")
            #expect(result.errorMessage?.contains(point) == true, "\(result.stderr)")
            #expect(!result.stderr.contains("No such file"))
            #expect(!FileManager.default.fileExists(atPath: point + "/backup-\(leaving)"))
        }
    }
}

/// A backup whose photo fills the disk part way says the disk is full (a
/// short write once left a stale errno: "… (writing): File exists").
@Suite struct FullDiskPhotoBackupTests {
    let directory = TemporaryDirectory()

    @Test func aPhotoThatFillsTheDiskPartWaySaysNoSpace() throws {
        let jqc = JQCRunner(ledger: directory.appending("ledger")).reportingKinds.reportingKinds
        let inspection = try jqc.recordSampleInspection()
        // A PNG's signature and a megabyte: the store checks the kind by its first bytes.
        let photo = directory.appending("big.png")
        try (SampleReference.png() + Data(count: 1_000_000)).write(to: URL(fileURLWithPath: photo))
        #expect(try jqc("--as", "Dana", "photo", inspection, "Photo of problem area", photo).status == 0)
        let point = directory.appending("disk")
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: false)
        guard getuid() == 0,
            try ProcessRun.run("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", point]).status == 0
        else {
            // Without a disk to fill: the write that fails names its own reason.
            let full = open("/dev/full", O_WRONLY)
            defer { close(full) }
            #expect(DurableFile.writeAll(Data(count: 4096), to: full) == ENOSPC)
            return
        }
        defer { _ = try? ProcessRun.run("/bin/umount", [point]) }
        for leaving in [300, 500, 800] {
            try? FileManager.default.removeItem(atPath: point + "/fill")
            var stats = statvfs()
            #expect(statvfs(point, &stats) == 0)
            let free = Int(stats.f_bavail) * Int(stats.f_frsize)
            _ = FileManager.default.createFile(
                atPath: point + "/fill", contents: Data(count: max(0, free - leaving * 1024)))
            let result = try jqc("backup", point + "/backup-\(leaving)")
            #expect(result.status == 1 && !result.signalled, "\(leaving) KiB free: \(result.stdout)")
            #expect(result.errorKind == "LedgerError.noSpace", "\(result.stderr)")
            #expect(!result.stderr.contains("File exists"), "\(result.stderr)")
        }
    }
}

/// `DurableFile`'s temporary file: created exclusively, never through a link.
@Suite struct DurableFileTests {
    let directory = TemporaryDirectory()

    @Test func aLinkPlantedAtTheOldTemporaryNameIsNotFollowed() throws {
        let victim = directory.appending("victim")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o600)
        let target = directory.appending("config.json")
        // What the old code opened: NAME.tmp-PID, with O_TRUNC and a chmod.
        #expect(symlink(victim, target + ".tmp-\(getpid())") == 0)
        try DurableFile.write(Data("new".utf8), to: target, mode: 0o644)
        #expect(FileManager.default.contents(atPath: victim) == Data("mine".utf8))
        var status = stat()
        #expect(stat(victim, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(FileManager.default.contents(atPath: target) == Data("new".utf8))
        #expect(stat(target, &status) == 0 && status.st_mode & 0o777 == 0o644)
    }

    @Test func aKilledCapturesRandomlyNamedFileIsStillCleanedUp() throws {
        let photos = PhotoStore(directory: directory.appending("photos"))
        mkdir(directory.appending("photos"), 0o700)
        mkdir(photos.stagingDirectory, 0o700)
        let hash = String(repeating: "ab", count: 32)
        // A PID above the kernel's limit never runs; the test's own is alive.
        let names = ["\(hash).tmp-99999999.1f2e3d", "\(hash).tmp-99999999", "\(hash).tmp-\(getpid()).9a8b"]
        for name in names {
            #expect(FileManager.default.createFile(atPath: photos.stagingDirectory + "/" + name, contents: Data()))
        }
        #expect(Set(photos.removeStaleTemporaries()) == Set(names.prefix(2)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: photos.stagingDirectory) == [names[2]])
    }

    @Test func aFileAtTheOldTemporaryNameIsLeftAlone() throws {
        let staging = directory.appending("staging")
        mkdir(staging, 0o700)
        let target = directory.appending("photo")
        let squatter = staging + "/photo.tmp-\(getpid())"
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: squatter))
        try DurableFile.write(Data("new".utf8), to: target, mode: 0o600, staging: staging)
        #expect(FileManager.default.contents(atPath: squatter) == Data("someone else's".utf8))
        #expect(FileManager.default.contents(atPath: target) == Data("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: staging) == ["photo.tmp-\(getpid())"])
    }
}
