import ArgumentParsing
import Dispatch
import FoundationEssentials
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
        let ending = try ChildProcess.run(executablePath(), arguments: ["salvage-read", store], output: .captured)
        var stopped: String?
        if !ending.succeeded {
            stopped =
                String(decoding: ending.errors, as: UTF8.self).split(separator: "\n").last.map(String.init)
                ?? (ending.signal.map { "the reader was ended by signal \($0)" }
                    ?? "the reader ended with status \(ending.status ?? 0)")
        }
        return SalvageReading(output: Data(ending.output), stopped: stopped)
    }

    static func executablePath() -> String {
        // No /proc: the path this process was started by.
        if let real = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return real }
        return CommandLine.arguments[0]
    }
}
