import Foundation
import LedgerTestSupport
import Testing

/// libcurl is opened only by the commands that talk to a server: linking it
/// made every command load its 30-odd libraries and run their constructors
/// at start (about 7 ms of CPU). The dynamic loader's own trace
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

    /// (arguments, whether libcurl is opened)
    static let cases: [([String], Bool)] = [
        (["--version"], false),
        (["init"], false),
        (["help"], false),
        // A server that is not there: the transfer is tried, so libcurl is opened.
        (["login", "--server", "http://127.0.0.1:9", "--username", "dana", "--password-stdin"], true),
    ]

    @Test(arguments: cases.indices)
    func libcurlIsOpenedOnlyForATransfer(_ index: Int) throws {
        let (arguments, opens) = Self.cases[index]
        if opens { _ = try loaded(["init"]) }
        let libraries = try loaded(arguments, input: opens ? "pw\n" : nil)
        // The trace names the loader's work at all: an empty one would pass
        // the negative cases for nothing.
        #expect(libraries.contains("libcrypto.so.3"), "no loader trace for \(arguments)")
        #expect(libraries.contains("libcurl.so.4") == opens, "\(arguments)")
    }
}
