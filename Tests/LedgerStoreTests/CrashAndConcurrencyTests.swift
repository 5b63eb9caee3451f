import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

@testable import LedgerStore

/// These run the `ledger-writer` executable as real processes: one killed
/// with SIGKILL in the middle of appending, and two appending at once.
@Suite struct CrashAndConcurrencyTests {
    let directory = TemporaryDirectory()
    var store: String { directory.appending("store") }

    /// Parses the writer's lines: "<name> <first> <last> <id,id,…>".
    func committedIDs(_ output: String) -> [UUID] {
        output.split(separator: "\n").flatMap { line -> [UUID] in
            let fields = line.split(separator: " ")
            guard fields.count == 4 else { return [] }
            return fields[3].split(separator: ",").compactMap { UUID(uuidString: String($0)) }
        }
    }

    @Test func sigkillDuringAppendsLosesNothingReportedAndLeavesWholeBatches() throws {
        let batchSize = 50
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Products.executable("ledger-writer"))
        process.arguments = [store, "100000", "\(batchSize)", "victim"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()

        // Wait until it has reported some durable batches, then kill it
        // without warning, most likely in the middle of the next one.
        var output = Data()
        let reader = out.fileHandleForReading
        while committedIDs(String(decoding: output, as: UTF8.self)).count < 20 * batchSize {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            output.append(chunk)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        output.append(reader.readDataToEndOfFile())
        #expect(process.terminationReason == .uncaughtSignal)

        let reported = committedIDs(String(decoding: output, as: UTF8.self))
        #expect(reported.count >= 20 * batchSize)

        let log = try EventLog(directory: store)
        let report = try log.verify()
        #expect(report.isIntact, "\(String(describing: report.finding))")
        #expect(report.checked % UInt64(batchSize) == 0, "a partial batch survived: \(report.checked) events")
        #expect(report.checked >= UInt64(reported.count))
        let missing = try log.read { reader in try reported.filter { try reader.position(ofEvent: $0) == nil } }
        #expect(missing.isEmpty, "reported events are missing: \(missing)")
    }

    @Test func twoWriterProcessesBothSucceedAndTheChainStaysLinear() throws {
        // Create the ledger first so neither process races to create it.
        try EventLog(directory: store).close()
        let writers = ["alpha", "beta"].map { name in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Products.executable("ledger-writer"))
            process.arguments = [store, "40", "25", name]
            let out = Pipe()
            process.standardOutput = out
            return (name, process, out)
        }
        for (_, process, _) in writers { try process.run() }
        var outputs: [String: String] = [:]
        for (name, process, out) in writers {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(name) failed")
            outputs[name] = String(decoding: data, as: UTF8.self)
        }
        let log = try EventLog(directory: store)
        let report = try log.verify()
        #expect(report.isIntact, "\(String(describing: report.finding))")
        #expect(report.checked == 2 * 40 * 25)
        let all = outputs.values.flatMap(committedIDs)
        #expect(Set(all).count == 2000)
        let missing = try log.read { reader in try all.filter { try reader.position(ofEvent: $0) == nil } }
        #expect(missing.isEmpty)
        // Each writer's batches are contiguous ranges: one transaction each.
        for output in outputs.values {
            for line in output.split(separator: "\n") {
                let fields = line.split(separator: " ")
                #expect(UInt64(fields[2])! - UInt64(fields[1])! == 24)
            }
        }
    }
}
