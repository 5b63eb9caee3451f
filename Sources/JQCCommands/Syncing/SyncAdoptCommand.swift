import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore

/// `jqc sync adopt ID`: this device becomes the sender of a submission
/// recorded on another device (`SyncAdoption`).
struct SyncAdoptCommand: CommandWithOneArgument {
    static let path = ["sync", "adopt"]
    static let argument = PositionalSpec(
        "ID", help: "A submitted inspection recorded on another device (any unique prefix of its id).")
    static let spec = CommandSpec(
        "adopt",
        abstract: "Make this device the sender of a submission recorded on another device that cannot send it.",
        discussion: """
            For a copy submitted on another device (received with 'jqc receive') that no device has reported \
            sent, when that device cannot send it (wiped, lost): 'jqc outbox' and 'jqc status' list such copies. \
            The adoption is recorded (shown in 'jqc log' and 'jqc audit'); the inspection, its photos and issues \
            join this device's outbox, and 'jqc sync' sends them, looking the inspection up on the server first, \
            so if the submitter sent it after all the server keeps one record (its issues are then sent too and \
            said to be possibly twice: no endpoint lists issues). Only one device sends: adopting is refused once \
            this device holds another device's adoption. Share the copy afterwards so the others learn of it.
            """,
        group: "Syncing",
        positionals: [argument])

    var reference: String

    init(argument: String) { reference = argument }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(reference)
        let adopted = try SyncAdoption.adopt(
            inspection, in: try invocation.ledger(), actor: try invocation.actor(),
            device: try invocation.config().deviceID, clock: invocation.clock, advise: AdvisedRefusal.advising)
        let adoption = adopted.adoption
        if invocation.json {
            invocation.printJSON(
                .object([
                    "inspection_id": .string(inspection.lowercased),
                    "submitted_on_device": .string(adoption.submittedOnDevice.lowercased),
                    "submit_event": .string(adoption.submitEvent.lowercased),
                    "adopted_at": .string(adoption.at.iso8601), "outbox": .array(adopted.outbox.map(\.jsonValue)),
                ]))
            return
        }
        let short = inspection.lowercased.prefix(8)
        let counts = SyncItemKind.allCases.compactMap { kind -> String? in
            let n = adopted.outbox.filter { $0.item.kind == kind }.count
            return n == 0 ? nil : "\(n) \(kind.rawValue)\(n == 1 ? "" : "s")"
        }
        invocation.stdout.line(
            "Adopted inspection \(inspection.lowercased): submitted on device \(adoption.submittedOnDevice.lowercased), "
                + "this device sends it now (in the outbox: \(counts.isEmpty ? "nothing" : counts.joined(separator: ", ")))."
        )
        invocation.stdout.line(
            "Run 'jqc sync': it looks the inspection up on the server first, so if that device sent it after all "
                + "the server keeps one record. Share it ('jqc handover \(short) --share -o FILE') so the other "
                + "devices learn that this one sends it.")
    }
}
