import Foundation
import InspectionStore
import LedgerTestSupport
import Testing

/// Something other than a file where `config.json` goes: every command says
/// exactly that and what to do, and the advice it gives works (`jqc init`
/// is advised only where it would then succeed).
@Suite struct ConfigFileKindTests {
    let directory = TemporaryDirectory()
    var home: String { directory.appending("ledger") }
    var config: String { home + "/config.json" }

    static let commands: [[String]] = [
        ["inspections"], ["show", "abcd"], ["sync"], ["--as", "Dana", "set", "abcd", "Notes", "x"], ["log"],
        ["verify"], ["stats"], ["audit", "abcd"], ["init"], ["checkpoint"],
    ]

    func expectNamed(_ result: ProcessResult, kind: String, advisesInit: Bool, _ command: [String]) {
        #expect(result.status == 1 && !result.signalled, "\(command): \(result.stdout)")
        #expect(
            result.stderr.contains("\(config) is \(kind), not the ledger's configuration file"),
            "\(command): \(result.stderr)")
        #expect(result.errorKind == "LedgerDirectoryError.configNotAFile", "\(command): \(result.stderr)")
        #expect(result.stderr.contains("run 'jqc init'") == advisesInit, "\(command): \(result.stderr)")
    }

    @Test func aDirectoryBesideTheStoreAdvisesRestoringTheConfiguration() throws {
        let jqc = JQCRunner(ledger: home).reportingKinds
        _ = try jqc.recordSampleInspection()
        let kept = try #require(FileManager.default.contents(atPath: config))
        try FileManager.default.removeItem(atPath: config)
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: false)
        for command in Self.commands {
            expectNamed(try jqc.run(command), kind: "a directory", advisesInit: false, command)
        }
        // What it says to do works: moved away and restored, the ledger is whole.
        try FileManager.default.moveItem(atPath: config, toPath: config + ".moved")
        #expect(FileManager.default.createFile(atPath: config, contents: kept))
        let listed = try jqc("--json", "inspections")
        #expect(listed.status == 0, "\(listed.stderr)")
        let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.contains { $0["template_name"] as? String == "Restroom QC" } == true, "\(listed.stdout)")
    }

    @Test func aDirectoryWithNoStoreAdvisesInitWhichThenWorks() throws {
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        let jqc = JQCRunner(ledger: home).reportingKinds
        for command in Self.commands {
            expectNamed(try jqc.run(command), kind: "a directory", advisesInit: true, command)
        }
        try FileManager.default.moveItem(atPath: config, toPath: config + ".moved")
        let made = try jqc("init")
        #expect(made.status == 0, "\(made.stderr)")
    }

    @Test func aNamedPipeIsNamedAndNeverWaitedOn() throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        #expect(mkfifo(config, 0o600) == 0)
        let jqc = JQCRunner(ledger: home).reportingKinds
        // A read of the pipe would block with no writer: the run would hang.
        for command in [["inspections"], ["sync"], ["init"]] {
            expectNamed(try jqc.run(command), kind: "a named pipe", advisesInit: true, command)
        }
    }

    @Test func aRegularFileIsTheOnlyKindAccepted() throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let ledger = LedgerDirectory(path: home)
        #expect(throws: Never.self) { try ledger.checkConfigFile() }  // absent: nothing to object to
        #expect(FileManager.default.createFile(atPath: config, contents: Data("{}".utf8)))
        #expect(throws: Never.self) { try ledger.checkConfigFile() }
        #expect(throws: LedgerDirectoryError.noLedger(directory.appending("elsewhere"))) {
            try LedgerDirectory(path: directory.appending("elsewhere")).requireLedger()
        }
    }
}
