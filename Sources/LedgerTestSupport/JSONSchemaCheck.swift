import Foundation
import Synchronization

/// Checks what `jqc --json` printed against its definition in
/// `Schemas/cli/jqc-json.schema.json`, with `Tools/validate-json` (Python and
/// jsonschema, sharing no code with the Swift that printed it).
public enum JSONSchemaCheck {
    /// Checks `output`; `lines` for JSON Lines (`jqc log --json`, the sync
    /// progress), each line one document of `definition`. The result is the
    /// one `Tools/validate-json [--lines] DEFINITION` would give: status 0
    /// when valid; otherwise stderr names every problem.
    ///
    /// One `validate-json --serve` per test process answers every check, one
    /// at a time: a run of its own costs 0.3 s of CPU, mostly importing
    /// jsonschema, and the Swift suites check about 150 outputs (measured:
    /// 45 CPU-seconds of a clean-clone test run). A validator that ended or
    /// answered nonsense fails the check that saw it, and the next check
    /// starts another.
    public static func validate(_ definition: String, _ output: String, lines: Bool = false) throws -> ProcessResult {
        try served.withLock { validator in
            do {
                if validator == nil { validator = try ServedValidator() }
                return try validator!.check(definition, output, lines: lines)
            } catch {
                validator = nil
                throw error
            }
        }
    }

    private static let served = Mutex<ServedValidator?>(nil)
}

/// A running `Tools/validate-json --serve`: a request line in, an answer line
/// out. It ends when its stdin closes, which the test process's exit does.
private final class ServedValidator {
    private let process = Process()
    private let requests = Pipe()
    private let answers = Pipe()
    /// Bytes read after the last answer's newline.
    private var unread = Data()

    /// The validator stopped answering or answered something else.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        process.executableURL = URL(fileURLWithPath: Products.python.executable)
        process.arguments = Products.python.arguments + [Products.repositoryFile("Tools/validate-json"), "--serve"]
        process.standardInput = requests
        process.standardOutput = answers
        // Its own stderr (a traceback) goes to the test's, where a failure is read.
        try process.run()
    }

    /// Only after a failure (the shared one lives as long as the process):
    /// whatever state it is in, it is ended.
    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    func check(_ definition: String, _ text: String, lines: Bool) throws -> ProcessResult {
        let request = try JSONSerialization.data(
            withJSONObject: ["definition": definition, "lines": lines, "text": text] as [String: Any])
        // A validator that does not answer within ProcessRun's time for a
        // whole run is ended, so the check fails instead of hanging its test.
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 180, execute: watchdog)
        defer { watchdog.cancel() }
        try requests.fileHandleForWriting.write(contentsOf: request + Data("\n".utf8))
        let line = try answerLine()
        guard let answer = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
            let status = answer["status"] as? Int, let stdout = answer["stdout"] as? String,
            let stderr = answer["stderr"] as? String
        else {
            throw Failure(
                description: "validate-json --serve answered \(String(decoding: line, as: UTF8.self).prefix(200)), "
                    + "not {status, stdout, stderr}")
        }
        return ProcessResult(status: Int32(status), stdout: stdout, stderr: stderr)
    }

    private func answerLine() throws -> Data {
        while true {
            if let newline = unread.firstIndex(of: UInt8(ascii: "\n")) {
                let line = unread[unread.startIndex..<newline]
                unread = Data(unread[(newline + 1)...])
                return Data(line)
            }
            let chunk = answers.fileHandleForReading.availableData
            guard !chunk.isEmpty else {
                throw Failure(
                    description: "validate-json --serve ended before answering (its stderr is above in the test's)")
            }
            unread.append(chunk)
        }
    }
}
