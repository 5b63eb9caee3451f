import Foundation
import LedgerTestSupport
import Testing

/// libcurl is opened only by the commands that talk to a server: linking it
/// made every command load its 30-odd libraries and run their constructors
/// at start (about 7 ms of CPU). libcrypto likewise only by the commands
/// that hash, sign or draw random bytes: binding its symbols at start was a
/// third of `jqc --version`'s instructions. The dynamic loader's own trace
/// (`LD_DEBUG=files`) shows which libraries a run opened, so the rule is
/// checked on the built `jqc` without any timing.
@Suite struct LibraryLoadingTests {
    let directory = TemporaryDirectory(prefix: "library-loading")

    /// The libraries the dynamic loader opened for `jqc ARGUMENTS`.
    func loaded(_ arguments: [String], input: String? = nil) throws -> String {
        let jqc = JQCRunner(ledger: directory.appending("ledger"))
        let result = try jqc.run(
            arguments, input: input.map { Data($0.utf8) }, environmentOverride: ["LD_DEBUG": "files"])
        return result.stderr
    }

    /// (arguments, whether libcurl is opened, whether libcrypto is)
    static let cases: [([String], Bool, Bool)] = [
        (["--version"], false, false),
        (["help"], false, false),
        (["completion", "bash"], false, false),
        // A new device key (random bytes, its signed publication) and the log's hashes.
        (["init"], false, true),
        // A server that is not there: the transfer is tried, so libcurl is
        // opened (and libcrypto, which its TLS library links).
        (["login", "--server", "http://127.0.0.1:9", "--username", "dana", "--password-stdin"], true, true),
    ]

    @Test(arguments: cases.indices)
    func librariesAreOpenedOnlyWhenUsed(_ index: Int) throws {
        let (arguments, transfers, hashes) = Self.cases[index]
        if transfers { _ = try loaded(["init"]) }
        let libraries = try loaded(arguments, input: transfers ? "pw\n" : nil)
        // The trace names the loader's work at all: an empty one would pass
        // the negative cases for nothing.
        #expect(libraries.contains("liblmdb.so.0"), "no loader trace for \(arguments)")
        #expect(libraries.contains("libcurl.so.4") == transfers, "\(arguments)")
        #expect(libraries.contains("libcrypto.so.3") == hashes, "\(arguments)")
    }
}
