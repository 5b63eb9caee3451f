import ArgumentParsing
import Foundation
import LedgerCore
import LedgerStore

// MARK: - init

/// `jqc init`: creates the ledger directory, its store and its device id.
struct InitCommand: RunnableCommand {
    static let path = ["init"]
    static let spec = CommandSpec(
        "init", abstract: "Create a ledger (the directory, the event log and this device's id).",
        discussion: "The server URL can be given now or later; nothing here needs the network.",
        group: "Setup",
        options: [
            OptionSpec("server", valueName: "URL", help: "The server's API base URL, e.g. https://jqc.example/api/v1."),
            OptionSpec("ca-bundle", valueName: "FILE", help: "A CA bundle to trust for the server (PEM)."),
        ])

    var server: String?
    var caBundle: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        server = parsed.option("server")
        caBundle = parsed.option("ca-bundle")
        if let server, !(server.hasPrefix("https://") || server.hasPrefix("http://")) {
            throw .invalidValue(
                option: "server", value: server, reason: "expected an http:// or https:// URL",
                context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let home = invocation.home
        if home.exists { throw JQCError.ledgerExists(home.path) }
        try FileStore.makeDirectory(home.path)
        try FileStore.makeDirectory(home.photosPath)
        try EventLog(directory: home.storePath).close()
        let config = LedgerConfig(
            deviceID: UUID(), serverURL: server, caBundle: caBundle, createdAt: invocation.clock.now())
        try config.save(home)
        try DeviceKeyFile.create(home, device: config.deviceID)
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render([
                    "ledger": home.path, "device_id": config.deviceID.lowercased,
                    "server_url": config.serverURL as Any? ?? NSNull(),
                ]))
        } else {
            invocation.stdout.line("Created a ledger at \(home.path)")
            invocation.stdout.line("Device id \(config.deviceID.lowercased)")
            if let server { invocation.stdout.line("Server \(server)") }
        }
    }
}

// MARK: - stats

/// `jqc stats`: sizes of the log and the storage.
struct StatsCommand: RunnableCommand {
    static let path = ["stats"]
    static let spec = CommandSpec(
        "stats", abstract: "Show the ledger's size: events, streams, storage.", group: "Ledger")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let log = try invocation.log()
        let (events, head) = try log.read { reader in (try reader.count(), try reader.head()) }
        let info = try log.environment.info()
        let config = try invocation.config()
        let stats: [String: Any] = [
            "ledger": invocation.home.path, "events": events, "head": head.description,
            "device_id": config.deviceID.lowercased, "map_size_bytes": info.mapSize,
            "used_bytes": (info.lastPage + 1) * info.pageSize, "readers": info.readersUsed,
        ]
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(stats))
        } else {
            invocation.stdout.line(
                TextTable.render(
                    header: ["ledger", invocation.home.path],
                    rows: [
                        ["device", config.deviceID.lowercased],
                        ["events", "\(events)"], ["head", head.description],
                        ["storage used", "\((info.lastPage + 1) * info.pageSize) bytes of a \(info.mapSize)-byte map"],
                    ]))
        }
    }
}
