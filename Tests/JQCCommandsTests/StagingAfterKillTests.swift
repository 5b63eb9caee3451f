import Foundation
import LedgerTestSupport
import Testing

/// What a `receive` killed mid-read leaves in `photos/.incoming` (review
/// finding R4): its staging file (up to 50 MiB) is named by
/// `jqc check --photos` (kind `staging`, exit status 1) and removed by the
/// next recording command, here the next `receive`; a staging file whose
/// process still runs is neither named nor removed (`Schemas/ledger-format.md`
/// § The ledger directory).
@Suite struct StagingAfterKillTests {
    let directory = TemporaryDirectory(prefix: "staging-after-kill")

    /// A file `receive` stages a photo of: its one photo 400 MiB of base64
    /// (hashed all, written to 50 MiB), long enough to be killed while read.
    func longFile() throws -> String {
        let path = directory.appending("long.json")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let out = try #require(FileHandle(forWritingAtPath: path))
        try out.write(contentsOf: Data(#"{"format":"jqc-handover/3","photo_files":[{"sha256":"00","data":""#.utf8))
        let piece = Data(repeating: UInt8(ascii: "A"), count: 1 << 24)
        for _ in 0..<25 { try out.write(contentsOf: piece) }
        try out.write(contentsOf: Data("\"}]}\n".utf8))
        try out.close()
        return path
    }

    func staged(_ jqc: JQCRunner) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: jqc.ledger + "/photos/.incoming")) ?? []).sorted()
    }

    /// The staging findings of `jqc --json check --photos`, by file name.
    func stagingFindings(_ jqc: JQCRunner) throws -> (status: Int32, names: [String]) {
        let result = try jqc("--json", "check", "--photos")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let findings = try #require(report["findings"] as? [[String: Any]])
        let names = findings.filter { $0["kind"] as? String == "staging" }.compactMap { $0["subject"] as? String }
        return (result.status, names.sorted())
    }

    @Test func aReceiveKilledWhileReadingLeavesAFileTheCheckNamesAndTheNextReceiveRemoves() throws {
        let jqc = JQCRunner(ledger: directory.appending("r"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(jqc("init"))
        let file = try longFile()
        defer { try? FileManager.default.removeItem(atPath: file) }
        // A staging file whose process runs (this test's own): a receive at
        // work, neither named nor removed.
        let staging = jqc.ledger + "/photos/.incoming"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        let live = "received-0.tmp-\(getpid()).42"
        #expect(FileManager.default.createFile(atPath: staging + "/" + live, contents: Data("AAAA".utf8)))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Products.executable("jqc"))
        process.arguments = ["--as", "Cy", "receive", file]
        process.environment = ProcessInfo.processInfo.environment.merging(jqc.environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Killed (SIGKILL: no handler runs) once its staging file is there.
        var waited = 0
        while process.isRunning, staged(jqc) == [live], waited < 60_000 {
            usleep(1_000)
            waited += 1
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "receive ended before it was killed")
        let left = staged(jqc).filter { $0 != live }
        #expect(left.count == 1 && left.first?.hasPrefix("received-0.tmp-\(process.processIdentifier).") == true)

        let found = try stagingFindings(jqc)
        #expect(found.status == 1)
        #expect(found.names == left)
        let text = try jqc("check", "--photos")
        #expect(text.stdout.contains("a staging file left by a capture or receive that was interrupted"))

        // The next receive (of any file) removes it, and stages and removes its own.
        #expect(try jqc("--as", "Cy", "receive", file).status == 1)
        #expect(staged(jqc) == [live], "\(staged(jqc))")
        let after = try stagingFindings(jqc)
        #expect(after.status == 0 && after.names.isEmpty, "\(after)")
    }
}
