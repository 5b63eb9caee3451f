import ArgumentParsing
import FoundationEssentials
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc key`: the device's signing key in force and every key its log published.
struct KeyCommand: CommandWithoutArguments {
    static let path = ["key"]
    static let spec = CommandSpec(
        "key", abstract: "Show the device's signing key: the one in force, and every key its log published.",
        discussion: """
            The log, not the key file, says which key is in force: the one published last. device.key is used \
            only when it is that key; a missing, different or exposed key file is an error, never replaced \
            silently. 'jqc key rotate' records a new key.
            """,
        group: "Auditing")

    func run(_ invocation: Invocation) throws {
        let config = try invocation.config()
        let identity = DeviceIdentity(directory: invocation.home, device: config.deviceID)
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let published = try identity.publishedKeys(auditor.log)
        let state: String
        do {
            switch try identity.decide(log: auditor.log) {
            case .use: state = "device.key is the key in force"
            case .publish: state = "device.key is not published yet (the next checkpoint or sync publishes it)"
            case .create: state = "no key yet (the next checkpoint or sync makes and publishes one)"
            }
        } catch let error as DeviceKeyError {
            state = "device.key cannot be used: \(error)"
        }
        if invocation.json {
            invocation.printJSON(
                .object([
                    "published": .array(
                        published.map {
                            .object([
                                "key": .string($0.key), "key_id": .string(DeviceKeyFile.keyID($0.key)),
                                "position": .integer($0.position),
                            ])
                        }),
                    "in_force": published.last.map { .string($0.key) } ?? .null,
                    "key_file": .string(state),
                ]))
            return
        }
        if published.isEmpty {
            invocation.stdout.line("The log has published no signing key for this device.")
        }
        for (index, entry) in published.enumerated() {
            let role = index == published.count - 1 ? "in force" : "replaced"
            invocation.stdout.line(
                "key \(DeviceKeyFile.keyID(entry.key)) (record \(entry.position), \(role)): \(entry.key)")
        }
        if published.count > 1 {
            invocation.stdout.line(
                "The log published \(published.count) keys: a checkpoint is verified with the key in force at its size."
            )
        }
        invocation.stdout.line(TerminalText.singleLine(state))
    }
}
