import Foundation
import LedgerTestSupport
import Testing

@testable import JQCCommands

/// `jqc` reads its environment from `environ` (`ProcessEnvironment`), not
/// through `ProcessInfo`: the dictionary must be the one Foundation made,
/// for every kind of entry, ASCII or not.
@Suite struct ProcessEnvironmentTests {
    /// (entry, name and value; nil: no `=`, left out)
    static let entries: [(String, (String, String)?)] = [
        ("JQC_HOME=/tmp/ledger", ("JQC_HOME", "/tmp/ledger")),
        ("EMPTY=", ("EMPTY", "")),
        ("=value", ("", "value")),
        ("A=b=c", ("A", "b=c")),
        ("NO_SEPARATOR", nil),
        ("", nil),
        ("JQC_ACTOR=Zoë Ångström", ("JQC_ACTOR", "Zoë Ångström")),
        ("NAMÉ=x", ("NAMÉ", "x")),
        // The first '=' with a combining accent is one Character, not a
        // separator: Foundation splits at the second.
        ("A=\u{301}B=c", ("A=\u{301}B", "c")),
        ("ONLY=\u{301}", nil),
    ]

    @Test(arguments: entries.indices)
    func anEntryIsSplitAsFoundationSplitsIt(_ index: Int) {
        let (entry, expected) = Self.entries[index]
        let split = entry.withCString { ProcessEnvironment.split($0) }
        #expect(split?.0 == expected?.0 && split?.1 == expected?.1, "\(entry.debugDescription)")
        let foundation = ProcessEnvironment.splitAsFoundation(entry)
        #expect(split?.0 == foundation?.0 && split?.1 == foundation?.1, "\(entry.debugDescription)")
    }

    @Test func theWholeEnvironmentIsProcessInfos() {
        setenv("JQC_TEST_PROCESS_ENVIRONMENT", "Zoë=\u{301}x", 1)
        defer { unsetenv("JQC_TEST_PROCESS_ENVIRONMENT") }
        let read = ProcessEnvironment.current()
        #expect(read["JQC_TEST_PROCESS_ENVIRONMENT"] == "Zoë=\u{301}x")
        #expect(read == ProcessInfo.processInfo.environment)
    }

    /// The built `jqc` reads its ledger from `$JQC_HOME` as before.
    @Test func jqcReadsItsLedgerFromTheEnvironment() throws {
        let directory = TemporaryDirectory(prefix: "process-environment")
        let ledger = directory.appending("ledger ë")
        let jqc = JQCRunner(ledger: ledger)
        let result = try jqc.run(["init"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: ledger + "/config.json"))
    }
}
