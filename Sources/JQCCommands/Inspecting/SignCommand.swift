import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc sign ID FIELD FILE`: a signature captured as an image.
struct SignCommand: RunnableCommand {
    static let path = ["sign"]
    static let idArgument = PositionalSpec("ID", help: "The inspection.")
    static let fieldArgument = PositionalSpec("FIELD", help: "The signature field's id or label.")
    static let fileArgument = PositionalSpec("FILE", help: "The signature image.")
    static let spec = CommandSpec(
        "sign", abstract: "Capture a signature (an image file) into a signature field.", group: "Inspecting",
        positionals: [idArgument, fieldArgument, fileArgument])

    var id: String
    var field: String
    var file: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(Self.idArgument)
        field = try parsed.require(Self.fieldArgument)
        file = try parsed.require(Self.fileArgument)
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        try invocation.requireField(field, of: inspection, holding: .signature)
        let (events, state) = try invocation.capture(file, for: .field(field), on: inspection)
        report(events, state, invocation, verb: "signed")
    }
}
