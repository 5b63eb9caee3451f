import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc clear ID FIELD`.
struct ClearCommand: RunnableCommand {
    static let path = ["clear"]
    static let fieldArgument = PositionalSpec("FIELD", help: "The field's id or label.")
    static let spec = CommandSpec(
        "clear", abstract: "Clear a field's answer (it becomes unanswered).", group: "Inspecting",
        positionals: [.inspection, fieldArgument])

    var id: String
    var field: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(.inspection)
        field = try parsed.require(Self.fieldArgument)
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        let (events, state) = try invocation.record(.clearField(field: field), on: inspection)
        report(events, state, invocation, verb: "cleared")
    }
}
