import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc flag ID --severity S --description TEXT [--photo FILE]`.
struct FlagCommand: RunnableCommand {
    static let path = ["flag"]
    static let spec = CommandSpec(
        "flag", abstract: "Flag an issue found during an inspection.", group: "Inspecting",
        positionals: [PositionalSpec("ID", help: "The inspection.")],
        options: [
            OptionSpec(
                "severity", short: "s", valueName: "SEVERITY", help: "low, medium, high or critical.", required: true),
            OptionSpec("description", short: "d", valueName: "TEXT", help: "What is wrong.", required: true),
            OptionSpec("photo", valueName: "FILE", help: "A photo of it."),
        ])

    var id: String
    var severity: String
    var description: String
    var photo: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require("ID")
        severity = try parsed.require("severity")
        description = try parsed.require("description")
        photo = parsed.option("photo")
    }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let inspection = try invocation.inspectionID(id)
        let prepared = try photo.map { try ledger.photos.prepare(fileAt: $0) }
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
            invocation.stdout.line(
                JSONOutput.render(
                    .object(["inspection": .string(inspection.lowercased), "issue": .string(flag.issueID.lowercased)])))
        } else {
            report(events, state, invocation, verb: "flagged")
        }
    }
}
