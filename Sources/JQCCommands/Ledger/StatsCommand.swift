import ArgumentParsing
import FoundationEssentials
import LedgerStore

/// `jqc stats`: sizes of the log and the storage.
struct StatsCommand: CommandWithoutArguments {
    static let path = ["stats"]
    static let spec = CommandSpec(
        "stats", abstract: "Show the ledger's size: events, streams, storage.", group: "Ledger")

    func run(_ invocation: Invocation) throws {
        // Read-only: stats works on an auditor's copy and never takes the writer lock.
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let log = auditor.log
        let (events, head) = try log.read { reader in (try reader.count(), try reader.head()) }
        let info = try log.storageInfo()
        let config = try invocation.config()
        if invocation.json {
            invocation.printJSON(
                .object([
                    "ledger": .string(invocation.home.path), "events": .integer(events),
                    "head": .string(head.description), "device_id": .string(config.deviceID.lowercased),
                    "map_size_bytes": .integer(info.mapSize),
                    "used_bytes": .integer(info.usedBytes),
                    "readers": .integer(info.readersUsed),
                ]))
        } else {
            invocation.printTable(
                header: ["ledger", invocation.home.path],
                rows: [
                    ["device", config.deviceID.lowercased],
                    ["events", "\(events)"], ["head", head.description],
                    ["storage used", "\(info.usedBytes) bytes of a \(info.mapSize)-byte map"],
                ])
        }
    }
}
