import Foundation
import LedgerTestSupport
import Testing

/// Standard output that cannot take what `jqc` prints, through the built
/// binary: a reader that went away (`jqc log | head`) ends the listing
/// quietly with the command's own status, never by SIGPIPE; a device that
/// refuses the bytes (a full disk, `/dev/full`) fails the command with
/// `JQCError.outputNotWritten`, because what it printed is incomplete.
@Suite struct ClosedOutputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// A bash pipeline; `$JQC` is the built jqc. It prints jqc's
        /// status, as the shell saw it (128 + the signal, if one ended it).
        var pipeline: String
        var status: Int32
        var kind: String?
        var testDescription: String { name }
    }

    static let cases = [
        Case(
            name: "a listing whose reader went away", pipeline: #""$JQC" --json log | head -c 100 >/dev/null"#,
            status: 0, kind: nil),
        Case(
            name: "a listing in text whose reader went away", pipeline: #""$JQC" log | head -n 1 >/dev/null"#,
            status: 0, kind: nil),
        Case(
            name: "a listing to a full device", pipeline: #""$JQC" --json log >/dev/full"#, status: 1,
            kind: "JQCError.outputNotWritten"),
        Case(
            name: "a one-line answer to a full device", pipeline: #""$JQC" --version >/dev/full"#, status: 1,
            kind: "JQCError.outputNotWritten"),
    ]

    /// A ledger whose `--json log` is several times a pipe's 64 KiB, so a
    /// reader that stops after a line leaves most of it unwritten.
    static func longLog(in directory: TemporaryDirectory) throws -> JQCRunner {
        let jqc = try JQCRunner.pulled(in: directory, name: "ledger")
        let started = try jqc.run([
            "--as", "Dana", "--json", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center",
        ])
        try #require(started.status == 0, "\(started.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        let id = try #require(object?["id"] as? String)
        for note in 0..<8 {
            let text = String(repeating: "note \(note) ", count: 40_960 / 7)
            let set = try jqc.run(["--as", "Dana", "set", id, "Notes", text])
            try #require(set.status == 0, "set Notes: \(set.stderr)")
        }
        return jqc
    }

    @Test(arguments: cases)
    func outputThatCannotBeWritten(_ test: Case) throws {
        let directory = TemporaryDirectory()
        let jqc = try Self.longLog(in: directory)
        let result = try ProcessRun.run(
            "/bin/bash", ["-c", test.pipeline + #"; echo "${PIPESTATUS[0]}""#],
            environment: jqc.environment.merging(["JQC": Products.executable("jqc"), "JQC_ERRORS": "json"]) { $1 })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "\(test.status)\n", "jqc ended with \(result.stdout); stderr: \(result.stderr)")
        #expect(result.errorKind == test.kind, "\(result.stderr)")
        if test.kind == nil { #expect(result.stderr.isEmpty) }
    }
}
