import Foundation
import LedgerTestSupport
import Testing

/// `jqc init` refuses a server or witness URL it could not use, saying why,
/// and makes no ledger.
@Suite struct InitServerURLTests {
    static let cases: [([String], String)] = [
        (["--server", "http://host:"], "the port after ':' is empty"),
        (["--server", "http://host:99999/api/v1"], "the port '99999' is not a number from 1 to 65535"),
        (["--server", "https://:443/api/v1"], "it names no host"),
        (["--server", "https://u:p@host/api/v1"], "it names a user (@)"),
        (["--server", "https://host/api/v1?x"], "a base URL has no query (?) or fragment (#)"),
        (["--witness", "http://witness:"], "the port after ':' is empty"),
        (["--server", "host/api/v1"], "it does not start with http:// or https://"),
    ]

    @Test(arguments: cases)
    func aMalformedURLIsRefusedAndNoLedgerMade(arguments: [String], why: String) throws {
        let directory = TemporaryDirectory(prefix: "init-url")
        let ledger = directory.appending("ledger")
        let result = try JQCRunner(ledger: ledger).run(["init"] + arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains("expected an http:// or https:// URL: \(why)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: ledger + "/config.json"))
    }
}
