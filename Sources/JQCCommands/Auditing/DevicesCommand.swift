import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore

/// `jqc devices`: the other devices this ledger received files from, each
/// with its pinned key, when it was first and last heard from, how many of
/// its records are held, and whether it was seen with two histories
/// (`DevicePins`).
struct DevicesCommand: CommandWithoutArguments {
    static let path = ["devices"]
    static let spec = CommandSpec(
        "devices", abstract: "List the devices this ledger received files from, with the key pinned for each.",
        discussion: """
            One line per device: its id, the key id pinned for it (the first verified file pinned it; a \
            rotation endorsed by the pinned key, or 'jqc receive --key VKEY', pins another), when its first \
            and last file was received, how many of its records this ledger holds, and FORKED when two \
            checkpoints of it cannot both be its history. A reception recorded before keys were pinned counts \
            as a pin of the key it was verified with.
            """,
        group: "Auditing")

    func run(_ invocation: Invocation) throws {
        let own = try invocation.config().deviceID
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let pins = try auditor.log.read { reader in try DevicePins.read(reader, own: own) }
        let devices = pins.ordered
        if invocation.json {
            invocation.printJSON(.array(devices.map(Self.json)))
            return
        }
        if devices.isEmpty {
            invocation.stdout.line("This ledger has received no file from another device.")
            return
        }
        for device in devices {
            let key = device.currentKey.map { "key \($0.keyID)" } ?? "no key pinned"
            let earlier = device.keys.count > 1 ? " (\(device.keys.count - 1) earlier)" : ""
            let first = device.firstSeen.map { $0.iso8601 } ?? "never"
            let last = device.lastSeen.map { $0.iso8601 } ?? "never"
            var line =
                "\(device.id.lowercased)  \(key)\(earlier)  first \(first)  last \(last)  "
                + "\(device.leaves.count) record\(device.leaves.count == 1 ? "" : "s") in \(device.receptions) "
                + "file\(device.receptions == 1 ? "" : "s")"
            if device.isForked {
                line += "  FORKED (\(device.forks.count) fork\(device.forks.count == 1 ? "" : "s") recorded)"
            }
            invocation.stdout.line(line)
        }
    }

    static func json(_ device: DevicePins.Device) -> JSONValue {
        .object([
            "device": .string(device.id.lowercased),
            "key_id": device.currentKey.map { .string($0.keyID) } ?? .null,
            "public_key": device.currentKey.map { .string($0.key) } ?? .null,
            "keys": .array(
                device.keys.map { pinned in
                    let source: (String, UInt64, JSONValue) =
                        switch pinned.source {
                        case .event(let position, let sha256): ("pinned", position, .string(sha256.hex))
                        case .reception(let position): ("reception", position, .null)
                        }
                    return .object([
                        "key_id": .string(pinned.keyID), "public_key": .string(pinned.key),
                        "source": .string(source.0), "position": .integer(source.1), "file_sha256": source.2,
                    ])
                }),
            "first_seen": device.firstSeen.map { .string($0.iso8601) } ?? .null,
            "last_seen": device.lastSeen.map { .string($0.iso8601) } ?? .null,
            "records": .integer(device.leaves.count),
            "files": .integer(device.receptions),
            "forked": .bool(device.isForked),
        ])
    }
}
