import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore

/// `jqc receive FILE` (`Reception`).
struct ReceiveCommand: RunnableCommand {
    static let path = ["receive"]
    static let fileArgument = PositionalSpec("FILE", help: "A handover file written by 'jqc handover'.")
    static let key = OptionSpec(
        "key", valueName: "VKEY",
        help: "The sender's verifier key as you hold it ('jqc key' on that device): the file must be signed by it, "
            + "and it is pinned for that device.")
    static let spec = CommandSpec(
        "receive", abstract: "Take over an inspection from a handover file, after verifying all of it.",
        discussion: """
            Verifies the whole file before recording anything: the sender's signature, every record's inclusion \
            in the signed tree, the stream complete from its first record through its back-links, the handover \
            record last, each photo's SHA-256 and the template's content hash. Any failure is refused with the \
            reason and nothing is recorded. Then it records the reception, keeping the sender's records \
            verifiable as the sender's, and the inspection continues here (set, photo, flag, sign, submit, \
            sync). Receiving the same file again records nothing.

            The first verified file from a device pins its key on this ledger; a later file under that device's \
            name signed by another key is refused, unless its key record is that device's rotation endorsed by \
            the pinned key. --key VKEY pins the key you hold instead. Two checkpoints of one device that cannot \
            both be its history are a fork: the file is refused, the fork is recorded as evidence and 'jqc \
            audit' says FORKED. A file of an inspection held here must start with the same record, and reuse \
            no record id with other bytes. 'jqc devices' lists the devices heard from.
            """,
        group: "Inspecting",
        positionals: [fileArgument], options: [key])

    var file: String
    var key: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        file = try parsed.require(Self.fileArgument)
        key = try parsed.value(of: Self.key)
    }

    func run(_ invocation: Invocation) throws {
        let received = try Reception(ledger: try invocation.ledger(), device: try invocation.config().deviceID)
            .receive(file: file, actor: try invocation.actor(), clock: invocation.clock, key: key)
        if invocation.json {
            invocation.printJSON(
                .object([
                    "inspection": .string(received.inspection.lowercased),
                    "from_device": .string(received.fromDevice.lowercased), "recorded": .bool(received.recorded),
                    "records": .integer(received.records), "photos": .integer(received.photos),
                    "pinned_template": .bool(received.pinnedTemplate), "sha256": .string(received.sha256.hex),
                    "merged": .bool(received.merged), "changes": received.changes.jsonValue,
                    "addressed_to": .optional(received.addressedTo?.lowercased),
                    "read_only_copy_of": .optional(received.readOnlyCopyOf?.lowercased),
                ]))
            return
        }
        // A plain handover bound to another device: said before anything else.
        if let owner = received.readOnlyCopyOf {
            invocation.stdout.line(
                "Read-only copy: this handover file was addressed to device \(owner.lowercased), which alone records "
                    + "and submits inspection \(received.inspection.lowercased); this device can show and audit it, "
                    + "not record on it or submit it.")
        }
        if !received.recorded {
            invocation.stdout.line(
                "Nothing new: inspection \(received.inspection.lowercased) already holds every record of this file; "
                    + "nothing was recorded.")
            return
        }
        if received.merged {
            // What the file changed here, not a bare "merged": the form's
            // answers, photos, issues, conflicts, and a submit or discard
            // (closing the copy, or overtaken by work it had not seen).
            invocation.stdout.line(
                "Merged inspection \(received.inspection.lowercased) with the copy of device "
                    + "\(received.fromDevice.lowercased.prefix(8)): \(Plural.of(received.records, "record")) and "
                    + "\(Plural.of(received.photos, "photo")) verified against its signed checkpoint.")
            for line in received.changes.lines(sanitise: TerminalText.singleLine) {
                invocation.stdout.line("  " + line)
            }
            invocation.stdout.line(
                "'jqc show \(received.inspection.lowercased.prefix(8))' shows the merged form and any conflict.")
            return
        }
        invocation.stdout.line(
            "Received inspection \(received.inspection.lowercased) from device "
                + "\(received.fromDevice.lowercased.prefix(8)): \(Plural.of(received.records, "record")) and "
                + "\(Plural.of(received.photos, "photo")) verified against its signed checkpoint. "
                + (received.readOnlyCopyOf == nil ? "It continues here" : "Read-only here") + ": 'jqc show "
                + "\(received.inspection.lowercased.prefix(8))'.")
    }
}
