import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc submit ID [--follow-up]`.
struct SubmitCommand: RunnableCommand {
    static let path = ["submit"]
    static let idArgument = PositionalSpec("ID", help: "The inspection.")
    static let followUp = FlagSpec("follow-up", help: "Mark that this facility needs a re-inspection.")
    static let spec = CommandSpec(
        "submit", abstract: "Submit a draft: its score is computed and recorded, and it joins the outbox.",
        group: "Inspecting",
        positionals: [idArgument], flags: [followUp])

    var id: String
    var followUp: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(Self.idArgument)
        followUp = try parsed.isSet(Self.followUp)
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        let (_, state) = try invocation.record(.submit(followUpRequired: followUp), on: inspection)
        if invocation.json {
            invocation.printJSON(FormReport(state: state))
            return
        }
        let score = state.score.map { FixedPoint.text($0, places: 2) } ?? "none (nothing scoreable answered)"
        invocation.stdout.line("Submitted \(inspection.lowercased): score \(score)")
        if followUp { invocation.stdout.line("Follow-up required: re-inspect with 'jqc start --reinspect \(id)'") }
        if let parent = state.parentInspectionID {
            // Only the first re-inspection submitted clears the follow-up.
            let resolvedBy = try invocation.ledger().state(of: parent)?.followUpResolvedBy
            if resolvedBy == inspection {
                invocation.stdout.line("Follow-up of \(parent.lowercased) cleared")
            } else if let resolvedBy {
                invocation.stdout.line(
                    "Follow-up of \(parent.lowercased) was already cleared by re-inspection \(resolvedBy.lowercased)")
            }
        }
        invocation.stdout.line("Queued for sync ('jqc outbox', 'jqc sync').")
    }
}
