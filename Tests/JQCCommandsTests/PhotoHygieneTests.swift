import Foundation
import LedgerTestSupport
import Testing

/// Photo files are kept only with their events, stale temporaries go at the
/// next start, and `jqc check --photos` lists what does not match the log.
@Suite struct PhotoHygieneTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String
    var photos: String { directory.appending("ledger/photos") }

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        #expect(try jqc("init").status == 0)
        #expect(try jqc("pull", "--from", SampleReference.path).status == 0)
        let started = try jqc(
            "--as", "Dana", "--json", "start", "--template", "Restroom QC", "--facility", "Riverside Medical Center",
            "--area", "1001")
        let object = try JSONSerialization.jsonObject(with: Data(started.stdout.utf8)) as? [String: Any]
        inspection = String(try #require(object?["id"] as? String).prefix(8))
    }

    func capture(red: UInt8) throws -> ProcessResult {
        let file = try SampleReference.writePNG(in: directory.path, name: "p\(red).png", red: red)
        return try jqc("--as", "Dana", "photo", inspection, "Photo of problem area", file)
    }

    /// The photo files (the staging directory `.incoming` aside).
    func storedPhotos() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: photos).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test func aCleanLedgerPassesTheCheck() throws {
        #expect(try capture(red: 1).status == 0)
        let result = try jqc("--json", "check", "--photos")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(report?["ok"] as? Bool == true && report?["checks"] as? [String] == ["photos"], "photos checked")
    }

    @Test func unreferencedMissingAndAlteredFilesAreListed() throws {
        #expect(try capture(red: 1).status == 0)
        #expect(try capture(red: 2).status == 0)
        let kept = try storedPhotos()
        #expect(kept.count == 2)
        let orphan = String(repeating: "ab", count: 32)
        #expect(FileManager.default.createFile(atPath: photos + "/" + orphan, contents: Data("stray".utf8)))
        try FileManager.default.removeItem(atPath: photos + "/" + kept[0])
        try Data("changed".utf8).write(to: URL(fileURLWithPath: photos + "/" + kept[1]))

        let result = try jqc("--json", "check", "--photos")
        #expect(result.status == 1)
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let findings = try #require(report?["findings"] as? [[String: Any]])
        let kinds = Dictionary(
            findings.map { ($0["subject"] as? String ?? "", $0["kind"] as? String ?? "") }, uniquingKeysWith: { $1 })
        #expect(kinds == [orphan: "unreferenced", kept[0]: "missing", kept[1]: "altered"])
        let text = try jqc("--json", "check")
        #expect(text.status == 1)
        let all = try JSONSerialization.jsonObject(with: Data(text.stdout.utf8)) as? [String: Any]
        let found = try #require(all?["findings"] as? [[String: Any]])
        #expect(found.contains { $0["kind"] as? String == "unreferenced" }, "no event names this file")
        #expect(found.contains { $0["kind"] as? String == "missing" }, "is missing")
        #expect(found.count == 3 && all?["ok"] as? Bool == false, "3 problems found")
    }

    @Test func staleTemporariesAreRemovedAtTheNextStart() throws {
        // A PID above the kernel's limit never runs; the test's own is alive.
        let stale = "\(String(repeating: "cd", count: 32)).tmp-99999999"
        let live = "\(String(repeating: "ef", count: 32)).tmp-\(getpid())"
        let staging = photos + "/.incoming"
        mkdir(staging, 0o700)
        for name in [stale, live] {
            #expect(FileManager.default.createFile(atPath: staging + "/" + name, contents: Data()))
        }
        // Read commands never write, so the next command that opens the
        // ledger for writing is the one that cleans up.
        #expect(try jqc("inspections").status == 0)
        #expect(FileManager.default.fileExists(atPath: staging + "/" + stale))
        #expect(try jqc("rebuild").status == 0)
        #expect(!FileManager.default.fileExists(atPath: staging + "/" + stale))
        #expect(FileManager.default.fileExists(atPath: staging + "/" + live))
    }

    /// A staging directory that cannot be listed (here a file stands in
    /// its place) is an error of the check, never "nothing stale".
    @Test func anUnlistableStagingDirectoryFailsTheCheck() throws {
        #expect(try capture(red: 1).status == 0)
        let staging = photos + "/.incoming"
        try? FileManager.default.removeItem(atPath: staging)
        #expect(FileManager.default.createFile(atPath: staging, contents: Data("not a directory".utf8)))
        let result = try jqc("check", "--photos")
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains(staging), "\(result.stderr)")
    }

    @Test func aRefusedCaptureKeepsNoFile() throws {
        #expect(try jqc("--as", "Dana", "discard", inspection).status == 0)
        let result = try capture(red: 3)
        #expect(result.status == 1)
        #expect(try storedPhotos().isEmpty, "a refused capture left a file")
    }
}
