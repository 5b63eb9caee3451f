import Foundation
import LedgerTestSupport
import Testing

/// A handover file of 1 GiB (sparse: it takes no disk) received under
/// `ulimit -v 2 GiB`, through the built `jqc`: judged chunk by chunk as it is
/// read (`HandoverFileReader`), it is refused at its first byte no JSON text
/// can hold, with nothing recorded, and never ends `jqc` by a signal (which
/// reading it whole and copying it did: 2 GiB).
@Suite struct BoundedReadingTests {
    let directory = TemporaryDirectory(prefix: "bounded-reading")

    /// What the file starts with; the rest is zero bytes up to 1 GiB.
    static let prefixes = [
        "", #"{"format":"jqc-handover/3","mode":"share","photo_files":[{"sha256":"00","data":"AAAA"#,
    ]

    @Test(arguments: prefixes)
    func aGibibyteFileUnderATwoGibibyteLimitIsRefusedNotKilled(_ prefix: String) throws {
        let jqc = JQCRunner(ledger: directory.appending("r"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(jqc("init"))
        let before = try JQCRunner.succeeded(jqc("--json", "log")).stdout
        let path = directory.appending("big.json")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(prefix.utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        defer { try? FileManager.default.removeItem(atPath: path) }

        let command = "ulimit -v 2097152; exec \"$0\" --as Cy receive \"$1\""
        let result = try ProcessRun.run(
            "/bin/bash", ["-c", command, Products.executable("jqc"), path], environment: jqc.environment)
        #expect(!result.signalled, "ended by signal \(result.status): \(result.stderr)")
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("UNREADABLE: the file is not well-formed JSON (byte 0x0 at offset "))
        #expect(result.stderr.contains("\(prefix.utf8.count) cannot appear there)"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was recorded"))
        #expect(try JQCRunner.succeeded(jqc("--json", "log")).stdout == before)
        let photos = try FileManager.default.contentsOfDirectory(atPath: jqc.ledger + "/photos")
        #expect(photos.filter { !$0.hasPrefix(".") }.isEmpty, "\(photos)")
    }
}
