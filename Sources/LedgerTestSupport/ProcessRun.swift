import Foundation
import Synchronization

/// The result of running a process to completion.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Whether the process was ended by a signal (then `status` is its number).
    public var signalled: Bool = false
}

/// Runs executables as a user would, for end-to-end tests.
public enum ProcessRun {
    /// Runs `executable` with `arguments`, waits, and captures both streams.
    /// A child still running after `timeout` seconds is killed (SIGKILL), so
    /// a hung command fails its test instead of hanging the whole suite.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil,
        currentDirectory: String? = nil, timeout: Double = 180
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let out = Pipe()
        let err = Pipe()
        let inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inPipe
        try process.run()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        if let input { inPipe.fileHandleForWriting.write(input) }
        try inPipe.fileHandleForWriting.close()
        // Read both pipes concurrently so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        let stderrData = CapturedOutput()
        group.enter()
        DispatchQueue.global().async {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            stderrData.bytes.withLock { $0 = data }
            group.leave()
        }
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData.bytes.withLock { $0 }, as: UTF8.self),
            signalled: process.terminationReason == .uncaughtSignal)
    }
}

/// One stream's bytes, read on another thread and handed over through the lock.
private final class CapturedOutput: Sendable {
    let bytes = Mutex(Data())
}
