import Foundation
import LedgerTestSupport
import Testing

/// A photo whose file name is not UTF-8 (Latin-1 from an old camera, bytes
/// from a broken archive) is captured by its exact name, and any message
/// about it shows the name with each invalid byte as `\xHH`.
@Suite struct PhotoFileNameTests {
    let directory = TemporaryDirectory()
    let jqc: JQCRunner
    let inspection: String

    init() throws {
        jqc = JQCRunner(ledger: directory.appending("ledger"))
        inspection = try jqc.recordSampleInspection()
    }

    /// Writes `data` under a name made of `prefix`, the bytes 0xFF 0xE9 (not
    /// UTF-8) and `suffix`; answers its path as exact bytes.
    func writeFile(_ data: Data, prefix: String, suffix: String) throws -> [UInt8] {
        let path = Array(directory.path.utf8) + Array("/\(prefix)".utf8) + [0xFF, 0xE9] + Array(suffix.utf8)
        let fd = (path + [0]).withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o600) }
        }
        #expect(fd >= 0)
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return path
    }

    /// Runs `jqc ARGUMENTS FILE` with FILE's exact bytes in argv: the shell
    /// makes them from octal escapes, since Foundation passes only strings.
    func runWithFile(_ arguments: [String], _ file: [UInt8]) throws -> ProcessResult {
        let octal = file.map { "\\" + String($0, radix: 8).leftPadded(3) }.joined()
        let script = "exec \"$0\" \"$@\" \"$(printf '\(octal)')\""
        return try ProcessRun.run(
            "/bin/sh", ["-c", script, Products.executable("jqc")] + arguments, environment: jqc.environment)
    }

    @Test(arguments: [
        ["--as", "Dana", "photo", "INSPECTION", "Photo of problem area"],
        ["--as", "Dana", "sign", "INSPECTION", "Inspector signature"],
    ])
    func anImageNamedInAnotherEncodingIsCaptured(command: [String]) throws {
        let file = try writeFile(SampleReference.png(red: 7), prefix: "caf", suffix: ".png")
        let arguments = command.map { $0 == "INSPECTION" ? inspection : $0 }
        let result = try runWithFile(arguments, file)
        #expect(result.status == 0, "\(result.stderr)")
        let check = try jqc("check", "--photos")
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let shown = try jqc("--json", "show", inspection)
        #expect(shown.stdout.contains("image/png"), "\(shown.stdout)")
    }

    @Test func aPhotoOnAnIssueNamedInAnotherEncodingIsCaptured() throws {
        let file = try writeFile(SampleReference.png(red: 9), prefix: "issue-", suffix: ".png")
        let result = try runWithFile(
            ["--as", "Dana", "flag", inspection, "--severity", "low", "--description", "chipped tile", "--photo"], file)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func aMessageShowsTheNameWithItsBytesEscaped() throws {
        let file = try writeFile(Data("not an image".utf8), prefix: "notes\u{1B}", suffix: ".txt")
        let result = try runWithFile(["--as", "Dana", "photo", inspection, "Photo of problem area"], file)
        #expect(result.status == 1)
        #expect(result.stderr.contains(#"notes\u{1B}\xFF\xE9.txt is not a JPEG"#), "\(result.stderr)")
        #expect(!result.stderr.unicodeScalars.contains("\u{FFFD}"))
        #expect(!result.stderr.unicodeScalars.contains("\u{1B}"))
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
