import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc show ID`.
struct ShowCommand: CommandWithOneArgument {
    static let path = ["show"]
    static let argument = PositionalSpec.inspection
    static let spec = CommandSpec(
        "show", abstract: "Show an inspection: its form and answers, what is still required, score, issues, sync.",
        discussion: "Required fields are marked '*', and '!' while still empty.", group: "Reviewing",
        positionals: [argument])

    var id: String

    init(argument: String) { id = argument }

    func run(_ invocation: Invocation) throws {
        let state = try invocation.reading { ledger in
            guard let state = try ledger.state(of: try ledger.resolveInspection(id)) else {
                throw LookupError.noInspection(id)
            }
            return state
        }
        // Only this device's own records name an actor this ledger checked.
        let report = FormReport(state: state, ownDevice: try invocation.config().deviceID)
        invocation.stdout.line(invocation.json ? JSONOutput.render(report) : report.text)
    }
}
