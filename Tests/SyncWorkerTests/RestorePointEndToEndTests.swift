import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// A backup is a restore point, not a second device (`RestorePoint`,
/// `RestorePointCheck`), through the built `jqc` against the development
/// server: a restored copy warns before it records until `jqc sync` has asked
/// the witness whether another copy of the device recorded after the backup;
/// it refuses to sync when one did, passes silently when none did, and says
/// the check could not be made when the server has no witness.
@Suite struct RestorePointEndToEndTests {
    static let marker = "restore-point.json"

    /// The backup of `sample` made now, as a ledger used in place, logged in.
    static func backup(of sample: SampleLedger, _ server: DevServer) throws -> (JQCRunner, String) {
        let path = sample.directory.appending("backup")
        let made = try sample.jqc("backup", path)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: path + "/" + marker))
        let copy = JQCRunner(ledger: path, environment: ["JQC_SYNC_BACKOFF_SCALE": "0"])
        let mark = try restorePoint(copy)
        #expect(mark["restored_backup"] == .bool(true) && mark["state"] == .string("unchecked"), "\(mark)")
        let login = try copy.run(
            ["login", "--username", "inspector", "--password-stdin"], input: Data("inspector-pass\n".utf8))
        #expect(login.status == 0, "\(login.stderr)")
        return (copy, path)
    }

    /// `jqc --json restore-point` of the ledger `jqc` runs on: its mark and what a check found.
    static func restorePoint(_ jqc: JQCRunner) throws -> JSONValue {
        let shown = try jqc("--json", "restore-point")
        #expect(shown.status == 0, "\(shown.stderr)")
        return try JSONValue(parsing: shown.stdout)
    }

    /// `jqc --json sync`'s witness outcome (`acknowledged`, `up_to_date`, …).
    static func witnessOutcome(_ sync: ProcessResult) throws -> String? {
        try JSONValue(parsing: sync.stdout)["witness"]?["outcome"]?.stringValue
    }

    /// `result`, expected to have succeeded.
    @discardableResult
    static func succeeded(_ result: ProcessResult) -> ProcessResult {
        #expect(result.status == 0, "\(result.stderr)")
        return result
    }

    @Test func aCopyRestoredAfterTheOriginalRecordedAndSyncedSaysSoAndDoesNotSync() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL, witness: server.baseURL)
        try sample.login()
        _ = try sample.completedInspection(photos: 0, issues: 0)
        try Self.succeeded(sample.jqc("sync"))
        let (copy, path) = try Self.backup(of: sample, server)

        // The original goes on recording and syncing after the backup.
        _ = try sample.completedInspection(photos: 0, issues: 0)
        let later = try Self.succeeded(sample.jqc("--json", "sync"))
        #expect(try Self.witnessOutcome(later) == "acknowledged", "\(later.stdout)")
        let sent = try server.stats()

        // The copy says so before it records.
        let started = try copy("start", "--template", "11", "--facility", "101")
        #expect(started.status == 0, "\(started.stderr)")
        #expect(started.stderr.contains("warning: this ledger is a restored backup made at "), "\(started.stderr)")
        #expect(started.stderr.contains("'jqc sync' asks the witness first"), "\(started.stderr)")

        // Its sync asks the witness first and refuses, sending nothing.
        let sync = try copy("sync")
        #expect(sync.status == 1)
        #expect(try Self.restorePoint(copy)["state"] == .string("found"), "\(sync.stderr)")
        #expect(sync.stderr.contains("recorded and synced after this backup was made"), "\(sync.stderr)")
        #expect(sync.stderr.contains("start a new device with 'jqc init'"), "\(sync.stderr)")
        #expect(!sync.stdout.contains("acknowledged"), "\(sync.stdout)")
        guard case .object(let before) = sent["requests"], case .object(let after) = try server.stats()["requests"]
        else {
            Issue.record("the server's stats have no requests")
            return
        }
        let writes = { (members: [JSONValue.Member]) in
            members.filter { $0.key.hasPrefix("POST") || $0.key.hasPrefix("PUT") }.map {
                "\($0.key)=\($0.value.serialized())"
            }
        }
        #expect(writes(after) == writes(before))

        // Recording commands now repeat what was found; the mark stays.
        let again = try copy("start", "--template", "11", "--facility", "101")
        #expect(again.stderr.contains("warning: REFUSED: another copy of device "), "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: path + "/" + Self.marker))
        #expect(try copy("sync").status == 1)
    }

    /// The copy recorded more than the original synced since: the witness's
    /// checkpoint is not larger, but the copy's log does not extend it.
    @Test func aCopyThatRecordedMoreThanTheOriginalSyncedIsFoundByTheRootNotTheSize() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL, witness: server.baseURL)
        try sample.login()
        try Self.succeeded(sample.jqc("sync"))
        let (copy, _) = try Self.backup(of: sample, server)
        try Self.succeeded(sample.jqc("start", "--template", "11", "--facility", "101"))
        let later = try Self.succeeded(sample.jqc("--json", "sync"))
        #expect(try Self.witnessOutcome(later) == "acknowledged", "\(later.stdout)")
        for _ in 0..<4 { try Self.succeeded(copy("start", "--template", "11", "--facility", "101")) }
        let sync = try copy("sync")
        #expect(sync.status == 1)
        #expect(try Self.restorePoint(copy)["state"] == .string("found"), "\(sync.stderr)")
    }

    @Test func aCopyRestoredWithNothingNewerPassesTheCheckSilently() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL, witness: server.baseURL)
        try sample.login()
        _ = try sample.completedInspection(photos: 0, issues: 0)
        try Self.succeeded(sample.jqc("sync"))
        let (copy, path) = try Self.backup(of: sample, server)

        let started = try copy("start", "--template", "11", "--facility", "101")
        #expect(started.stderr.contains("warning: this ledger is a restored backup"), "\(started.stderr)")
        let sync = try copy("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(!sync.stderr.contains("restore"), "\(sync.stderr)")
        #expect(!sync.stderr.contains("warning"), "\(sync.stderr)")
        #expect(try Self.witnessOutcome(sync) == "acknowledged", "\(sync.stdout)")
        #expect(!FileManager.default.fileExists(atPath: path + "/" + Self.marker))
        let after = try copy("start", "--template", "11", "--facility", "101")
        #expect(after.status == 0, "\(after.stderr)")
        #expect(!after.stderr.contains("warning"), "\(after.stderr)")
    }

    @Test func withoutAWitnessTheCopySaysTheCheckCouldNotBeMade() throws {
        let server = try DevServer(profile: .reference)
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let (copy, path) = try Self.backup(of: sample, server)
        let sync = try copy("sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(try Self.restorePoint(copy)["state"] == .string("uncheckable"), "\(sync.stderr)")
        #expect(FileManager.default.fileExists(atPath: path + "/" + Self.marker))
    }
}
