import Foundation
import LedgerTestSupport

/// `jqc` running in the background, for tests that act while it works:
/// record during a sync, start a second sync, `kill -9` it, stop `--watch`.
final class BackgroundJQC: @unchecked Sendable {
    private let process = Process()
    private let output = TemporaryDirectory(prefix: "jqc-output")

    init(_ runner: JQCRunner, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Products.executable("jqc"))
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(runner.environment) { $1 }
        // Files, not pipes: nobody reads while it runs, and a full pipe would block it.
        for name in ["stdout", "stderr"] {
            guard FileManager.default.createFile(atPath: output.appending(name), contents: nil) else {
                throw SampleFailure("could not create \(output.appending(name))")
            }
        }
        process.standardOutput = FileHandle(forWritingAtPath: output.appending("stdout"))
        process.standardError = FileHandle(forWritingAtPath: output.appending("stderr"))
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var isRunning: Bool { process.isRunning }

    /// Its process id, as `jqc status` names a background sync.
    var pid: Int32 { process.processIdentifier }

    /// Sends `signal` (SIGKILL, SIGTERM, SIGINT).
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end; answers its exit status (or the signal that ended it).
    @discardableResult
    func wait(timeout: Double = 30) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            guard Date() < deadline else { throw SampleFailure("jqc did not finish within \(timeout) s") }
            usleep(10_000)
        }
        return process.terminationStatus
    }

    var stdout: String { (try? String(contentsOfFile: output.appending("stdout"), encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: output.appending("stderr"), encoding: .utf8)) ?? "" }
}

/// Polls `condition` until it holds or `timeout` seconds pass; answers whether it held.
func eventually(timeout: Double = 15, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if try condition() { return true }
        usleep(20_000)
    } while Date() < deadline
    return try condition()
}
