import Foundation
import LedgerTestSupport
import Testing

/// One device key, never replaced silently, through the built `jqc`: a
/// missing, swapped or exposed key file stops signing with a message and
/// records nothing; a backup carries the key; a rotation is explicit.
@Suite struct DeviceKeyCommandTests {
    struct Ledger {
        let directory = TemporaryDirectory(prefix: "device-key")
        var path: String { directory.appending("ledger") }
        var jqc: JQCRunner { JQCRunner(ledger: path) }
        var keyPath: String { path + "/device.key" }

        func events() throws -> String {
            try JQCRunner.succeeded(jqc("--json", "stats")).stdout
                .split(separator: ",").first { $0.contains("\"events\"") }.map(String.init) ?? ""
        }
    }

    /// A ledger whose log published its key (one checkpoint signed).
    static func signedLedger() throws -> (Ledger, inspection: String) {
        let ledger = Ledger()
        let inspection = try ledger.jqc.recordSampleInspection()
        try JQCRunner.succeeded(ledger.jqc("checkpoint"))
        return (ledger, inspection)
    }

    enum KeyDamage: String, CaseIterable {
        case deleted, swapped, exposed, symlinked
    }

    @Test(arguments: KeyDamage.allCases)
    func aDamagedKeyFileStopsSigningAndRecordsNothing(damage: KeyDamage) throws {
        let (ledger, inspection) = try Self.signedLedger()
        let expected: String
        switch damage {
        case .deleted:
            unlink(ledger.keyPath)
            expected = "is missing, so nothing is signed and no new key is made"
        case .swapped:
            let other = Ledger()
            try JQCRunner.succeeded(other.jqc("init"))
            unlink(ledger.keyPath)
            try FileManager.default.copyItem(atPath: other.keyPath, toPath: ledger.keyPath)
            expected = "belongs to another ledger"
        case .exposed:
            chmod(ledger.keyPath, 0o644)
            expected = "may be read or written by other users (mode 644)"
        case .symlinked:
            let elsewhere = ledger.directory.appending("key-elsewhere")
            rename(ledger.keyPath, elsewhere)
            symlink(elsewhere, ledger.keyPath)
            expected = "is a symbolic link, not a regular file"
        }
        let before = try ledger.events()
        for command in [["checkpoint"], ["prove", inspection]] {
            let result = try ledger.jqc.run(command)
            if damage == .deleted, command[0] == "prove" {
                // Without a key file (as on an auditor's copy) prove signs nothing and uses the held checkpoint.
                #expect(result.status == 0, "\(command): \(result.stderr)")
                #expect(result.stderr.contains("this copy holds no device key, so nothing was signed"))
                continue
            }
            #expect(result.status == 1 && !result.signalled, "\(command): \(result.stdout)")
            #expect(result.stderr.contains(expected), "\(command): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try ledger.events() == before)
        // The audit needs no private key: it still runs, unsigned.
        let audit = try ledger.jqc("audit", inspection)
        #expect(audit.status == 0, "\(audit.stderr)")
    }

    @Test func aBackupCarriesTheKeyAndItsRestoreSignsWithIt() throws {
        let (ledger, _) = try Self.signedLedger()
        let key = try String(contentsOfFile: ledger.keyPath, encoding: .utf8)
        let backup = ledger.directory.appending("backup")
        let made = try JQCRunner.succeeded(ledger.jqc("backup", backup))
        #expect(made.stdout.contains("config.json, device.key."), "\(made.stdout)")
        #expect(made.stdout.contains("a restore point for this device, not a second device"))
        var info = stat()
        #expect(stat(backup + "/device.key", &info) == 0 && info.st_mode & 0o777 == 0o600)
        // The README's restore: the whole directory copied back in place.
        try FileManager.default.removeItem(atPath: ledger.path)
        let copy = try ProcessRun.run("/bin/cp", ["-a", backup, ledger.path])
        #expect(copy.status == 0)
        #expect(try String(contentsOfFile: ledger.keyPath, encoding: .utf8) == key)
        let before = try ledger.events()
        try JQCRunner.succeeded(ledger.jqc("checkpoint"))
        #expect(try ledger.events() == before, "a restored ledger publishes no second key")
        let keys = try JQCRunner.succeeded(ledger.jqc("--json", "key")).stdout
        let object = try #require(try JSONSerialization.jsonObject(with: Data(keys.utf8)) as? [String: Any])
        #expect((object["published"] as? [Any])?.count == 1)
        #expect(object["key_file"] as? String == "device.key is the key in force")
    }

    /// The object a `--json` run printed; the run must succeed.
    func object(_ result: ProcessResult) throws -> [String: Any] {
        let output = JQCRunner.succeeded(result).stdout
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    @Test func aRotationIsRecordedAndTheNewKeySigns() throws {
        let (ledger, _) = try Self.signedLedger()
        let rotated = try object(ledger.jqc("--json", "key", "rotate"))
        #expect(
            rotated["endorsed"] as? Bool == true && rotated["previous"] is String, "the old key endorsed it: \(rotated)"
        )
        let listed = try object(ledger.jqc("--json", "key"))
        let published = try #require(listed["published"] as? [[String: Any]])
        #expect(published.count == 2, "the log published 2 keys: \(listed)")
        #expect(
            published.last?["key"] as? String == rotated["key"] as? String
                && listed["in_force"] as? String == rotated["key"] as? String)
        #expect(published.first?["key"] as? String == rotated["previous"] as? String, "the first one replaced")
        try JQCRunner.succeeded(ledger.jqc("checkpoint"))
        // A lost key needs saying so.
        unlink(ledger.keyPath)
        let refused = try ledger.jqc("key", "rotate")
        #expect(refused.status == 1 && refused.stderr.contains("--old-key-lost"), "\(refused.stderr)")
        let lost = try object(ledger.jqc("--json", "key", "rotate", "--old-key-lost"))
        #expect(lost["endorsed"] as? Bool == false, "the old key recorded as lost: \(lost)")
        try JQCRunner.succeeded(ledger.jqc("checkpoint"))
    }
}
