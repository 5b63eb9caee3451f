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

    /// A machine whose libcrypto.so.3 is not OpenSSL's (here the C maths
    /// library under that name, first on the library path): the first
    /// command that hashes ends with the loader's status and words naming
    /// the package, not with a signal; one that does not hash is not affected.
    @Test func aMissingLibcryptoIsSaidNotCrashedOn() throws {
        // Read to its end: the file says it is empty, which a sized read believes.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        let paths = maps.split(separator: "\n").compactMap { $0.split(separator: " ").last }
        let libm = try #require(paths.first { $0.hasSuffix("/libm.so.6") }, "the test process maps libm.so.6")
        let libraries = directory.appending("libraries")
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: String(libm), toPath: libraries + "/libcrypto.so.3")
        let jqc = JQCRunner(ledger: directory.appending("ledger"))

        let version = try jqc.run(["--version"], environmentOverride: ["LD_LIBRARY_PATH": libraries])
        #expect(version.status == 0 && version.stdout.hasPrefix("jqc "), "\(version.stderr)")
        let initialised = try jqc.run(["init"], environmentOverride: ["LD_LIBRARY_PATH": libraries])
        #expect(!initialised.signalled)
        #expect(initialised.status == 127)
        #expect(initialised.stderr.contains("cannot use libcrypto (libcrypto.so.3)"), "\(initialised.stderr)")
        #expect(initialised.stderr.contains("apt-get install libssl3"), "\(initialised.stderr)")
    }
}
