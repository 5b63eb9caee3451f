import Foundation
import LMDB
import LedgerStore
import LedgerTestSupport
import Testing

/// A ledger that cannot be written (a read-only bind mount as root, a
/// directory without write permission otherwise): every recording command
/// says why in the ledger's words, never LMDB's, and what still works.
@Suite struct ReadOnlyLedgerTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        inspection = try jqc.recordSampleInspection()
    }

    /// The commands that record (or must open the store for writing).
    func recordingCommands() -> [[String]] {
        [
            ["sync"], ["--as", "Dana", "set", inspection, "Notes", "read-only"],
            ["pull", "--from", SampleReference.path],
            ["checkpoint"], ["--as", "Dana", "discard", inspection], ["rebuild"],
            [
                "--as", "Dana", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center",
                "--area", "1001",
            ],
        ]
    }

    /// The ledger made unwritable: a read-only bind mount of it (as root),
    /// else its directories without write permission. Answers the path to
    /// use and whether it is the read-only file system.
    func unwritableLedger() throws -> (path: String, readOnlyFileSystem: Bool, undo: () -> Void) {
        let home = directory.appending("ledger")
        let point = directory.appending("mounted")
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: false)
        if getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount"),
            try ProcessRun.run("/bin/mount", ["--bind", home, point]).status == 0
        {
            let remounted = try ProcessRun.run("/bin/mount", ["-o", "remount,bind,ro", point])
            #expect(remounted.status == 0, "\(remounted.stderr)")
            return (point, true, { _ = try? ProcessRun.run("/bin/umount", [point]) })
        }
        for path in [home, home + "/store"] { chmod(path, 0o555) }
        chmod(home + "/store/data.mdb", 0o444)
        return (
            home, false,
            {
                for path in [home, home + "/store"] { chmod(path, 0o755) }
                chmod(home + "/store/data.mdb", 0o644)
            }
        )
    }

    @Test func everyRecordingCommandNamesTheReadOnlyLedger() throws {
        let (path, readOnlyFileSystem, undo) = try unwritableLedger()
        defer { undo() }
        let runner = JQCRunner(ledger: path).reportingKinds
        for command in recordingCommands() {
            let result = try runner.run(command)
            #expect(result.status == 1 && !result.signalled, "\(command): \(result.stdout)")
            #expect(result.errorKind == "LedgerError.unwritable", "\(command): \(result.stderr)")
            let why = readOnlyFileSystem ? "is on a read-only file system" : "permission denied"
            #expect(result.stderr.contains(why), "\(command): \(result.stderr)")
            #expect(result.stderr.contains(readOnlyFileSystem ? "Remount it read-write" : "write permission"))
        }
        // What the message promises still works.
        let shown = try runner("show", inspection)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(try runner("verify").status == 0)
    }

    /// `checkpoint` and `prove` only read: on a read-only copy of a ledger
    /// that has signed before they print what they print on the ledger
    /// itself, and write nothing into it (the anchor they keep,
    /// `last-checkpoint`, is only kept where it can be).
    @Test func checkpointAndProveReadAReadOnlyCopyAndWriteNothing() throws {
        #expect(try jqc("checkpoint").status == 0)  // the key is published, last-checkpoint kept
        let commands = [["checkpoint"], ["prove", inspection]]
        let writable = try commands.map { try jqc.run($0) }
        let home = directory.appending("ledger")
        let anchor = try Data(contentsOf: URL(fileURLWithPath: home + "/last-checkpoint"))
        let (path, _, undo) = try unwritableLedger()
        defer { undo() }
        let runner = JQCRunner(ledger: path)
        for (command, before) in zip(commands, writable) {
            let result = try runner.run(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(!result.stderr.contains("could not write"), "\(command): \(result.stderr)")
            #expect(result.stdout == before.stdout, "\(command) printed otherwise on the read-only copy")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: home + "/last-checkpoint")) == anchor)
    }

    @Test(arguments: [(EROFS, "read-only file system"), (EACCES, "permission denied"), (EPERM, "permission denied")])
    func theStoreReadsTheSystemsRefusal(code: Int32, words: String) {
        let error = LedgerError.from(LMDBError(code: code, operation: "opening"), store: "/ledger/store")
        #expect("\(error)".contains(words), "\(error)")
        #expect(!"\(error)".contains("LMDB code"))
        // A read-only opening still falls back to opening without the lock file.
        #expect(ReadOnlyOpening.isLockRefusal(error))
    }
}
