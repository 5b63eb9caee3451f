import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc flag ID --severity S --description TEXT [--photo FILE]`.
struct FlagCommand: RunnableCommand {
    static let path = ["flag"]
    static let idArgument = PositionalSpec("ID", help: "The inspection.")
    static let severity = OptionSpec(
        "severity", short: "s", valueName: "SEVERITY", help: "low, medium, high or critical.", required: true)
    static let description = OptionSpec(
        "description", short: "d", valueName: "TEXT", help: "What is wrong.", required: true)
    static let photo = OptionSpec("photo", valueName: "FILE", help: "A photo of it.")
    static let spec = CommandSpec(
        "flag", abstract: "Flag an issue found during an inspection.", group: "Inspecting",
        positionals: [idArgument], options: [severity, description, photo])

    var id: String
    var severity: String
    var description: String
    var photo: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(Self.idArgument)
        severity = try parsed.require(Self.severity)
        description = try parsed.require(Self.description)
        photo = try parsed.value(of: Self.photo)
    }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let inspection = try invocation.inspectionID(id)
        let prepared = try photo.map { try ledger.photos.prepare(fileAt: $0, exactPath: RawArgument.bytes(of: $0)) }
        let flag = FlagIssue(
            issueID: UUID(), severity: severity, description: description,
            photo: prepared.map(invocation.prepareReference))
        var added = false
        let (events, state): ([InspectionEvent], InspectionState)
        do {
            (events, state) = try invocation.record(.flagIssue(flag), on: inspection) {
                if let prepared { added = try ledger.photos.keep(prepared) || added }
            }
        } catch {
            // The event did not commit: the file it would have named goes too.
            if added, let prepared { ledger.photos.discard(prepared) }
            throw error
        }
        if invocation.json {
            invocation.printJSON(
                .object(["inspection": .string(inspection.lowercased), "issue": .string(flag.issueID.lowercased)]))
        } else {
            report(events, state, invocation, verb: "flagged")
        }
    }
}
