import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

struct TemplatesShowCommand: RunnableCommand {
    static let path = ["templates", "show"]
    static let templateArgument = PositionalSpec("TEMPLATE", help: "The template's id or name.")
    static let spec = CommandSpec(
        "show", abstract: "Draw a template's form on its 12-column grid.", positionals: [templateArgument])

    var reference: String

    init(_ parsed: ParsedCommand) throws(UsageError) { reference = try parsed.require(Self.templateArgument) }

    func run(_ invocation: Invocation) throws {
        let template = try ReferenceChoice.template(named: reference, in: invocation.ledger())
        if invocation.json {
            invocation.printJSON(template.jsonValue)
        } else {
            invocation.stdout.line(TemplateGrid(template: template).text)
        }
    }
}

/// A template drawn as text: one line of boxes per grid row, each box as
/// wide as its column span.
struct TemplateGrid {
    let template: Template
    static let columnWidth = 7

    var text: String {
        var lines = [
            "\(template.name.terminalSafe) (template \(template.id.terminalSafe), version \(template.version))"
        ]
        // The cache only stores validated templates, but a ledger kept by
        // someone else may hold any layout: one outside the grid is described,
        // not drawn (its spans would overflow the arithmetic below).
        do {
            try template.validate()
        } catch {
            return (lines + ["cannot be drawn: \(error)"]).joined(separator: "\n").terminalSafe
        }
        let rows = Dictionary(grouping: template.fields, by: \.row).sorted { $0.key < $1.key }
        let ruler = "+" + String(repeating: "-", count: 12 * Self.columnWidth - 1) + "+"
        lines.append(ruler)
        for (_, fields) in rows {
            var line = ""
            var column = 1
            for field in fields.sorted(by: { $0.col < $1.col }) {
                if field.col > column {
                    line += "|" + String(repeating: " ", count: (field.col - column) * Self.columnWidth - 1)
                }
                let width = field.colSpan * Self.columnWidth - 1
                let name = field.label.terminalSafe
                var label = field.type.isDisplayOnly ? name : "\(field.required ? "*" : "")\(name)"
                if !field.type.isDisplayOnly { label += " [\(field.id.rawValue.terminalSafe):\(field.type.rawValue)]" }
                if label.count > width - 1 { label = String(label.prefix(width - 2)) + "…" }
                line += "|" + " " + label + String(repeating: " ", count: max(0, width - 1 - label.count))
                column = field.col + field.colSpan
            }
            if column <= 12 { line += "|" + String(repeating: " ", count: (13 - column) * Self.columnWidth - 1) }
            lines.append(line + "|")
            lines.append(ruler)
        }
        lines.append("* required; [id:type] is how 'jqc set' names a field.")
        lines.append("")
        lines.append("Fields (whole labels, every option):")
        lines.append(contentsOf: Self.fieldLines(template))
        return lines.joined(separator: "\n")
    }

    /// One line per field in form order (row, then column): its id, whole
    /// label, type, whether it is required, and what it accepts.
    static func fieldLines(_ template: Template) -> [String] {
        let fields = template.fields.sorted { ($0.row, $0.col) < ($1.row, $1.col) }
        let idWidth = fields.map { $0.id.rawValue.terminalSafe.count }.max() ?? 0
        return fields.map { field in
            let id = field.id.rawValue.terminalSafe
            var line = "  " + id + String(repeating: " ", count: idWidth - id.count) + "  "
            line += field.label.terminalSafe
            if field.type.isDisplayOnly { return line + " (\(field.type.rawValue), nothing to answer)" }
            var kind = field.type.rawValue
            switch field.type {
            case .rating: kind += " 1–5 (0 leaves it unanswered)"
            case .passFail: kind += ": pass, fail"
            case .checkbox: kind += ": yes, no"
            case _ where field.type.offersOptions:
                kind += ": " + (field.options ?? []).map(\.terminalSafe).joined(separator: ", ")
            case .table:
                kind += ", columns: " + (field.columns ?? []).map(\.terminalSafe).joined(separator: ", ")
            default: break
            }
            return line + " — " + kind + (field.required ? ", required" : "")
        }
    }
}
