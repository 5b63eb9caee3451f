import ArgumentParsing
import Foundation
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import Synchronization

/// Runs `jqc salvage-read STORE` as a child process, so that whatever LMDB
/// does on a damaged page ends the child only, and hands what it printed to
/// `SalvageReading`.
enum SalvageChild {
    static func read(_ store: String) throws -> SalvageReading {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath())
        process.arguments = ["salvage-read", store]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errors = ErrorCollector(err.fileHandleForReading)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = errors.wait()
        var stopped: String?
        if process.terminationStatus != 0 || process.terminationReason != .exit {
            stopped =
                stderr.split(separator: "\n").last.map(String.init)
                ?? (process.terminationReason == .uncaughtSignal
                    ? "the reader was ended by signal \(process.terminationStatus)"
                    : "the reader ended with status \(process.terminationStatus)")
        }
        return SalvageReading(output: data, stopped: stopped)
    }

    static func executablePath() -> String {
        // No /proc: the path this process was started by.
        if let real = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return real }
        return CommandLine.arguments[0]
    }
}

/// Reads a pipe to its end on another thread, so neither pipe fills.
private final class ErrorCollector: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let data = Mutex(Data())

    init(_ handle: FileHandle) {
        DispatchQueue.global().async { [self] in
            let bytes = handle.readDataToEndOfFile()
            data.withLock { $0 = bytes }
            done.signal()
        }
    }

    /// Waits for the end of the pipe; every caller must, so the reading
    /// block never outlives the child it reads from.
    func wait() -> String {
        done.wait()
        return String(decoding: data.withLock { $0 }, as: UTF8.self)
    }
}
