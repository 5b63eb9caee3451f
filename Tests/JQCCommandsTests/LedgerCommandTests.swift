import Foundation
import JQCCommands
import LedgerTestSupport
import Testing

/// `init`, `verify`, `digest`, `stats`, help and usage errors, through the built binary.
@Suite struct LedgerCommandTests {
    let directory = TemporaryDirectory()
    var jqc: JQCRunner { JQCRunner(ledger: directory.appending("ledger")).reportingKinds }

    @Test func initCreatesAPrivateLedgerOnce() throws {
        let first = try jqc("--json", "init", "--server", "http://127.0.0.1:9/api/v1")
        #expect(first.status == 0)
        let created = try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any]
        #expect(created?["ledger"] as? String == directory.appending("ledger"), "created a ledger there")
        #expect(created?["server_url"] as? String == "http://127.0.0.1:9/api/v1")
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appending("ledger"))
        #expect(attributes[.posixPermissions] as? Int == 0o700)
        let config =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: directory.appending("ledger/config.json"))))
            as? [String: Any]
        #expect(config?["server_url"] as? String == "http://127.0.0.1:9/api/v1")
        #expect(UUID(uuidString: config?["device_id"] as? String ?? "") != nil)

        let second = try jqc("init")
        #expect(second.status == 1)
        #expect(second.errorKind == "LedgerDirectoryError.ledgerExists", "\(second.stderr)")
    }

    @Test func verifyAndDigestOnAnEmptyLedger() throws {
        try jqc("init")
        let verify = try jqc("verify", "--json")
        #expect(verify.status == 0)
        let report = try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any]
        #expect(report?["intact"] as? Bool == true)
        #expect(report?["checked"] as? Int == 0)
        let digest = try jqc("digest")
        #expect(digest.stdout.hasPrefix("jqc-digest-v1:0:"))
        let against = try jqc("verify", "--digest", digest.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(against.status == 0)
    }

    @Test func commandsWithoutALedgerSayHowToMakeOne() throws {
        let result = try jqc("verify")
        #expect(result.status == 1)
        #expect(result.errorKind == "LedgerDirectoryError.noLedger", "\(result.stderr)")
    }

    static let usageMistakes: [([String], String)] = [
        (["vrify"], "UsageError.unknownCommand"),
        (["verify", "--digest", "nope"], "UsageError.invalidValue"),
        (["init", "--server", "ftp://x"], "UsageError.invalidValue"),
        (["digest", "extra"], "UsageError.unexpectedArgument"),
    ]

    @Test(arguments: usageMistakes)
    func usageErrorsExitWithStatusTwo(arguments: [String], kind: String) throws {
        let result = try jqc.run(arguments)
        #expect(result.status == 2)
        #expect(result.errorKind == kind, "\(result.stderr)")
        #expect(result.stderr.contains("usage: jqc"))
        #expect(result.stdout.isEmpty)
    }

    @Test func theCommandTableIsConsistent() {
        #expect(JQC.program.problems.isEmpty, "\(JQC.program.problems)")
    }

    @Test func aWordTypedAfterLoginIsNeverEchoed() throws {
        let result = try jqc("login", "-u", "dana", "s3cret-pass")
        #expect(result.status == 2)
        #expect(!result.stderr.contains("s3cret-pass"))
        #expect(result.stderr.contains("--password-stdin"))
    }

    @Test func helpAndVersionGoToStandardOutput() throws {
        let help = try jqc("--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("usage: jqc"))
        #expect(help.stdout.contains("verify"))
        let commandHelp = try jqc("help", "verify")
        #expect(commandHelp.stdout.contains("--digest DIGEST"))
        let version = try jqc("--version")
        #expect(version.stdout.hasPrefix("jqc "))
    }
}
