import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc discard ID`.
struct DiscardCommand: RunnableCommand {
    static let path = ["discard"]
    static let idArgument = PositionalSpec("ID", help: "The draft inspection.")
    static let reason = OptionSpec("reason", valueName: "TEXT", help: "Why, for the audit trail.")
    static let spec = CommandSpec(
        "discard", abstract: "Discard a draft. It disappears from every view; the log keeps it for auditors.",
        group: "Inspecting",
        positionals: [idArgument], options: [reason])

    var id: String
    var reason: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(Self.idArgument)
        reason = try parsed.value(of: Self.reason)
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        try invocation.record(.discard(reason: reason), on: inspection)
        if invocation.json {
            invocation.printJSON(
                .object(["inspection": .string(inspection.lowercased), "status": .string("discarded")]))
        } else {
            invocation.stdout.line("Discarded draft \(inspection.lowercased)")
        }
    }
}
