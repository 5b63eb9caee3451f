import Foundation
import InspectionStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// What a long-running sync looks at before asking the witnesses again
/// (`RestorePointInputs`, review point R2): three `stat`s each pass, a file
/// read only when its stamp moved, a change only when its bytes differ.
/// Every read is counted.
@Suite struct RestorePointInputsTests {
    /// A ledger directory holding a mark and a config (no `witnesses.json`).
    static func home() throws -> (TemporaryDirectory, LedgerDirectory) {
        let directory = TemporaryDirectory(prefix: "restore-inputs")
        let home = LedgerDirectory(path: directory.path)
        try Data(#"{"backup_at":"2026-05-01T10:00:00Z"}"#.utf8).write(to: URL(fileURLWithPath: home.restorePointPath))
        try Data(#"{"server_url":"https://a.test/api/v1"}"#.utf8).write(to: URL(fileURLWithPath: home.configPath))
        return (directory, home)
    }

    /// Replaces `path` by a new file holding `text`, renamed into place as
    /// jqc writes its files (made before the old one goes, so its inode is
    /// another), or removes it.
    static func replace(_ path: String, with text: String?) throws {
        guard let text else { return try FileManager.default.removeItem(atPath: path) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + ".new"))
        guard rename(path + ".new", path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }

    struct Case: CustomStringConvertible, Sendable {
        var description: String
        /// What is done to the ledger directory between the two looks.
        var change: @Sendable (LedgerDirectory) throws -> Void
        var unchanged: Bool
        /// The files read by the look after `change`.
        var reads: [String]
    }

    static let cases: [Case] = [
        Case(description: "nothing touched", change: { _ in }, unchanged: true, reads: []),
        Case(
            description: "the config saved again with the same bytes",
            change: { try replace($0.configPath, with: #"{"server_url":"https://a.test/api/v1"}"#) },
            unchanged: true, reads: ["config.json"]),
        Case(
            description: "the mark rewritten with other bytes",
            change: { try replace($0.restorePointPath, with: #"{"backup_at":"2026-05-02T10:00:00Z"}"#) },
            unchanged: false, reads: ["restore-point.json"]),
        Case(
            description: "a witness list added",
            change: { try Data("[]".utf8).write(to: URL(fileURLWithPath: $0.witnessesPath)) },
            unchanged: false, reads: ["witnesses.json"]),
        Case(
            description: "the mark cleared", change: { try replace($0.restorePointPath, with: nil) },
            unchanged: false, reads: ["restore-point.json"]),
    ]

    @Test(arguments: cases)
    func aFileIsReadOnlyWhenItsStampMovedAndChangesOnlyByItsBytes(_ test: Case) throws {
        let (directory, home) = try Self.home()
        _ = directory
        var inputs = RestorePointInputs.current(home)
        try test.change(home)
        var read: [String] = []
        let reading = { (path: String) -> Data? in
            read.append(URL(fileURLWithPath: path).lastPathComponent)
            return FileManager.default.contents(atPath: path)
        }
        let unchanged = inputs.unchanged(in: home, read: reading)
        #expect(unchanged == test.unchanged)
        #expect(read == test.reads)
        // What was read is kept: the next look, with nothing touched, is three stamps and no read.
        read = []
        let again = inputs.unchanged(in: home, read: reading)
        #expect(again)
        #expect(read.isEmpty, "\(read)")
        #expect(inputs == RestorePointInputs.current(home))
    }
}
