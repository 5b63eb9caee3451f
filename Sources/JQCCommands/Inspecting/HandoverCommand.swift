import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore

/// `jqc handover ID -o FILE [--to DEVICE|NAME] [--share]` (`Handover`).
struct HandoverCommand: RunnableCommand {
    static let path = ["handover"]
    static let output = OptionSpec(
        "output", short: "o", valueName: "FILE", help: "Where to write the handover file.", required: true)
    static let to = OptionSpec(
        "to", valueName: "DEVICE|NAME",
        help: "The receiving device's id, as its 'jqc status' or 'jqc key' shows it: the file is bound to that "
            + "device, and any other device receiving it gets a read-only copy. Any other NAME is only recorded "
            + "(unbound).")
    static let share = FlagSpec(
        "share", help: "Hand a copy and keep recording here (merging copies comes later).")
    static let spec = CommandSpec(
        "handover", abstract: "Hand a draft to another device in one verifiable file.",
        discussion: """
            Records the handover, then writes one file holding the inspection's records exactly as this device \
            wrote them, each proven against a checkpoint signed with this device's key, its pinned template and \
            its photo files (Schemas/ledger-format.md, Handover files). Afterwards this device records nothing \
            more on the inspection and its sync never sends it; the other device takes it over with \
            'jqc receive FILE'. Run again, it writes the file again and records nothing. Give --to the receiving \
            device's id so that only that device takes it over.
            """,
        group: "Inspecting",
        positionals: [.draft], options: [output, to], flags: [share])

    var id: String
    var outputPath: String
    var recipient: String?
    var sharing: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(.draft)
        outputPath = try parsed.require(Self.output)
        recipient = try parsed.value(of: Self.to)
        sharing = try parsed.isSet(Self.share)
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        let identity = DeviceIdentity(directory: invocation.home, device: try invocation.config().deviceID)
        let written = try Handover(ledger: try invocation.ledger(), identity: identity).write(
            inspection: inspection, to: recipient, mode: sharing ? .share : .handover, output: outputPath,
            actor: try invocation.actor(), clock: invocation.clock)
        if invocation.json {
            invocation.printJSON(
                .object([
                    "inspection": .string(inspection.lowercased), "file": .string(written.path),
                    "recorded": .bool(written.recorded), "mode": .string(written.mode.rawValue),
                    "to": .optional(written.to), "to_device": .optional(written.toDevice?.lowercased),
                    "records": .integer(written.records),
                    "photos": .integer(written.photos), "checkpoint_size": .integer(written.checkpointSize),
                    "sha256": .string(written.sha256.hex),
                ]))
            return
        }
        let sharing = written.mode == .share
        let to =
            written.toDevice.map {
                " for device \($0.lowercased)"
                    + (sharing ? "" : " (bound: only that device takes it over)")
            }
            ?? written.to.map { " for \(TerminalText.singleLine($0))" } ?? ""
        let done =
            sharing
            ? (written.recorded ? "Shared a copy of" : "Already shared; wrote again a copy of")
            : (written.recorded ? "Handed over" : "Already handed over; wrote again")
        invocation.stdout.line(
            "\(done) inspection \(inspection.lowercased)\(to): \(written.path) (\(Plural.of(written.records, "record")), "
                + "\(Plural.of(written.photos, "photo")), proven against a checkpoint of "
                + "\(Plural.of(Int(written.checkpointSize), "record")), SHA-256 \(written.sha256.hex.prefix(16))…)")
        if written.mode == .handover {
            invocation.stdout.line("This device records nothing more on it; receive it with 'jqc receive FILE'.")
        }
    }
}
