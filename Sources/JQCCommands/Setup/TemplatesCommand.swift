import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc templates` and `jqc templates show ID`.
struct TemplatesCommand: CommandWithoutArguments {
    static let path = ["templates"]
    static let spec = CommandSpec(
        "templates", abstract: "List the templates (from the last pull); 'templates show ID' draws one.",
        group: "Setup")

    func run(_ invocation: Invocation) throws {
        let templates = try invocation.reading { try $0.reference.allTemplates() }
        if invocation.json {
            invocation.printJSON(.array(templates.map(\.listingJSON)))
            return
        }
        invocation.printTable(
            header: ["ID", "NAME", "VERSION", "FIELDS"],
            rows: templates.map { [$0.id, $0.name, "\($0.version)", "\($0.fields.count)"] },
            none: "No templates yet: run 'jqc pull' (or 'jqc pull --from FILE').")
    }
}
