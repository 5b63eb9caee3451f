// Appends events to a ledger and reports each commit on stdout as soon as it
// is durable. The crash and concurrency tests run it as a separate process:
// they kill it with SIGKILL, or run two at once, and then check that every
// reported commit is in the log and the chain is intact.
import Foundation
import LedgerCore
import LedgerStore

let arguments = CommandLine.arguments
guard arguments.count >= 4, let batches = Int(arguments[2]), let batchSize = Int(arguments[3]) else {
    FileHandle.standardError.write(
        Data("usage: ledger-writer STORE-DIRECTORY BATCHES BATCH-SIZE [WRITER-NAME]\n".utf8))
    exit(2)
}
let writerName = arguments.count > 4 ? arguments[4] : "writer"
let clock = SystemClock()
do {
    let log = try EventLog(directory: arguments[1])
    let stream = UUID()
    for batch in 0..<batches {
        let events = (0..<batchSize).map { i in
            PendingEvent(
                stream: stream, type: "test.written", schemaVersion: 1,
                actor: Actor(id: writerName, name: writerName, verified: false), device: stream,
                recordedAt: clock.now(),
                payload: CBORValue.textMap([
                    ("batch", .unsigned(UInt64(batch))), ("index", .unsigned(UInt64(i))),
                    ("filler", .text(String(repeating: "x", count: 200))),
                ]).encoded())
        }
        let outcomes = try log.append(events)
        // One line per durable batch: "<writer> <first> <last> <event ids…>".
        let ids = events.map(\.id.lowercased).joined(separator: ",")
        FileHandle.standardOutput.write(
            Data("\(writerName) \(outcomes.first!.position) \(outcomes.last!.position) \(ids)\n".utf8))
    }
} catch {
    FileHandle.standardError.write(Data("ledger-writer: \(error)\n".utf8))
    exit(1)
}
