import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import SyncWorker

/// `jqc start`: a new inspection from a template at a facility, or a re-inspection.
struct StartCommand: RunnableCommand {
    static let path = ["start"]
    static let template = OptionSpec("template", short: "t", valueName: "TEMPLATE", help: "The template's id or name.")
    static let facility = OptionSpec("facility", short: "f", valueName: "FACILITY", help: "The facility's id or name.")
    static let area = OptionSpec("area", short: "a", valueName: "AREA", help: "An area of the facility, by id or name.")
    static let reinspect = OptionSpec(
        "reinspect", valueName: "ID", help: "Re-inspect this completed inspection: its id here, or its server id.")
    static let spec = CommandSpec(
        "start", abstract: "Start an inspection from a template at a facility (or re-inspect one).",
        discussion: """
            Templates and facilities are named by id or by name (see 'jqc templates', 'jqc facilities'). \
            With --reinspect, the template, facility and area come from the completed inspection that needs \
            follow-up, and its non-scoring answers are copied. An inspection this device does not hold (a \
            colleague's) is re-inspected by its server id, online: the template comes from the pulled reference \
            data, the answers from the server's form when it sends one.
            """,
        group: "Inspecting",
        options: [template, facility, area, reinspect])

    var template: String?
    var facility: String?
    var area: String?
    var reinspect: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        template = try parsed.value(of: Self.template)
        facility = try parsed.value(of: Self.facility)
        area = try parsed.value(of: Self.area)
        reinspect = try parsed.value(of: Self.reinspect)
        if reinspect == nil {
            if template == nil { throw parsed.missing(Self.template) }
            if facility == nil { throw parsed.missing(Self.facility) }
        } else if let given = [(Self.template, template), (Self.facility, facility), (Self.area, area)].first(where: {
            $0.1 != nil
        }) {
            // A re-inspection takes all three from the inspection it follows up.
            throw parsed.unexpected(given.0)
        }
    }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let start: StartInspection
        var fromServer: ServerReinspection?
        if let reinspect {
            do {
                let parentID = try invocation.inspectionID(reinspect)
                guard let parent = try ledger.state(of: parentID) else { throw LookupError.noInspection(reinspect) }
                start = try StartInspection.reinspection(of: parent)
            } catch LookupError.noInspection where APIClient.isServerID(reinspect) {
                // Not recorded here: a record on the server (a colleague's, from 'jqc history').
                let record = try HistoryShowCommand.record(reinspect, invocation)
                let server = try ServerReinspection(of: record, in: ledger)
                fromServer = server
                start = server.start
            }
        } else {
            guard let template, let facility else {
                preconditionFailure("init requires --template and --facility without --reinspect")
            }
            start = try ReferenceChoice.start(template: template, facility: facility, area: area, in: ledger)
        }
        // Random, not time-ordered: people type these ids by their first
        // digits, which must differ between inspections of the same week.
        let id = UUID()
        let earlier = try EarlierReinspection.of(start, in: ledger)
        let (_, state) = try invocation.record(.start(start), on: id)
        if !earlier.isEmpty { invocation.stderr.line("jqc: " + EarlierReinspection.note(earlier, started: id)) }
        if invocation.json {
            invocation.printJSON(FormReport(state: state))
        } else {
            let area = state.areaName.map { ", \(TerminalText.singleLine($0))" } ?? ""
            invocation.stdout.line("Started inspection \(id.lowercased)")
            invocation.stdout.line(
                "  \(TerminalText.singleLine(start.template.name)) at \(TerminalText.singleLine(state.facilityName))\(area)"
            )
            if let server = state.parentServerID, let fromServer {
                let copied = state.values.count
                invocation.stdout.line(
                    "  re-inspection of the server's record \(server); "
                        + (fromServer.serverSentForm
                            ? "\(copied) \(copied == 1 ? "answer" : "answers") copied from its form"
                            : "the server sent no form with it, so nothing was pre-filled"))
                if !fromServer.notCopied.isEmpty {
                    invocation.stdout.line(
                        "  not copied (their values do not fit this device's template): "
                            + fromServer.notCopied.map(TerminalText.singleLine).joined(separator: ", "))
                }
            }
            if let parent = state.parentInspectionID {
                let copied = state.values.count
                invocation.stdout.line(
                    "  re-inspection of \(parent.lowercased); \(copied) \(copied == 1 ? "answer" : "answers") copied")
            }
            invocation.stdout.line("Next: jqc show \(id.lowercased.prefix(8))")
        }
    }
}
