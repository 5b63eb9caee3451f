import Foundation
import LedgerTestSupport
import Testing

/// The messages for files that are not what they should be, in the
/// project's words: what failed, why, what to do, never a Foundation or
/// Swift error dump, and never a huge value echoed back.
@Suite struct StoreMessageTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String

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

    /// Each case: a name, and what the message must say.
    static let cases: [(String, [String])] = [
        ("a directory as a photo", ["is a directory, not an image file", "nothing was recorded"]),
        ("a FIFO as a photo", ["is a FIFO (a pipe), not an image file"]),
        ("/dev/zero as a photo", ["/dev/zero: it is a device, not an image file"]),
        ("a non-UTF-8 file name", ["its name contains bytes that are not UTF-8", "rename the file"]),
        ("config.json not JSON", ["config.json is damaged: it is not valid JSON", "restore it from a backup"]),
        ("config.json of the wrong shape", ["config.json is damaged: the value at \"device_id\" has the wrong type"]),
        ("XDG_DATA_HOME a file", ["is a file, not a directory; nothing was created", "XDG_DATA_HOME"]),
        ("a 131,000-character value", ["…(131", "characters)"]),
    ]

    @Test(arguments: cases)
    func namesTheRealProblem(name: String, expected: [String]) throws {
        let photo = ["--as", "Dana", "photo", inspection, "Photo of problem area"]
        let result: ProcessResult
        switch name {
        case "a directory as a photo":
            result = try jqc.run(photo + [directory.path])
        case "a FIFO as a photo":
            let fifo = directory.appending("pipe.png")
            #expect(mkfifo(fifo, 0o600) == 0)
            result = try jqc.run(photo + [fifo])
        case "/dev/zero as a photo":
            result = try jqc.run(photo + ["/dev/zero"])
        case "a non-UTF-8 file name":
            // The byte 0xFF is not UTF-8; the file exists under that name.
            let made = try ProcessRun.run(
                "/bin/sh", ["-c", "touch \"$1/$(printf '\\377').png\"", "sh", directory.path])
            #expect(made.status == 0, "\(made.stderr)")
            result = try jqc.run(photo + [directory.path + "/\u{FFFD}.png"])
        case "config.json not JSON":
            try Data("{\"device_id\": ".utf8).write(to: URL(fileURLWithPath: directory.appending("ledger/config.json")))
            result = try jqc.run(["--as", "Dana", "set", inspection, "Floors", "2"])
        case "config.json of the wrong shape":
            try Data("{\"device_id\": 3}".utf8).write(
                to: URL(fileURLWithPath: directory.appending("ledger/config.json")))
            result = try jqc.run(["--as", "Dana", "set", inspection, "Floors", "2"])
        case "XDG_DATA_HOME a file":
            let file = directory.appending("data-home")
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            result = try JQCRunner(ledger: "", environment: ["XDG_DATA_HOME": file]).run(
                ["init"], environmentOverride: ["JQC_HOME": ""])
        default:
            result = try jqc.run(["--as", "Dana", "set", inspection, "Odor", String(repeating: "9", count: 131_000)])
        }
        #expect(result.status == 1 && !result.signalled, "\(name): \(result.status)")
        for phrase in expected {
            #expect(result.stderr.contains(phrase), "\(name): \(result.stderr.prefix(500))")
        }
        for dump in ["NSCocoaErrorDomain", "DecodingError", "Debug description", "LMDB code", "permission denied"] {
            #expect(!result.stderr.contains(dump), "\(name) dumped: \(result.stderr.prefix(500))")
        }
        #expect(result.stderr.count < 2000, "\(name): the message is \(result.stderr.count) characters")
    }
}
