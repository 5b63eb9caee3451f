import ArgumentParsing
import FoundationEssentials
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc key rotate`: records a new signing key, endorsed by the old one.
struct KeyRotateCommand: RunnableCommand {
    static let path = ["key", "rotate"]
    static let oldKeyLost = FlagSpec(
        "old-key-lost", help: "The old key is gone: record the new key without its endorsement, saying so.")
    static let spec = CommandSpec(
        "rotate", abstract: "Make a new signing key and record it in the log, endorsed by the old key.",
        discussion: """
            The old key signs a note naming the new one, recorded with it, so an auditor can follow the \
            change; checkpoints signed before stay verifiable with the old key. With --old-key-lost (device.key \
            deleted, or known to others), the new key is recorded as replacing a lost one.
            """,
        group: "Auditing", flags: [oldKeyLost])

    var lost: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) { lost = try parsed.isSet(Self.oldKeyLost) }

    func run(_ invocation: Invocation) throws {
        let config = try invocation.config()
        let identity = DeviceIdentity(directory: invocation.home, device: config.deviceID)
        let rotation = try identity.rotate(ledger: invocation.ledger(), at: invocation.clock.now(), oldKeyLost: lost)
        if invocation.json {
            invocation.printJSON(
                .object([
                    "key": .string(rotation.key), "previous": rotation.previous.map { .string($0) } ?? .null,
                    "endorsed": .bool(rotation.endorsed),
                ]))
            return
        }
        invocation.stdout.line("Recorded the new signing key \(DeviceKeyFile.keyID(rotation.key)): \(rotation.key)")
        if let previous = rotation.previous {
            invocation.stdout.line(
                rotation.endorsed
                    ? "It replaces key \(DeviceKeyFile.keyID(previous)), which endorsed it."
                    : "It replaces key \(DeviceKeyFile.keyID(previous)), recorded as lost (no endorsement).")
        }
    }
}
