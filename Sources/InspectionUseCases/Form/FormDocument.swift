import FoundationEssentials
import InspectionDomain
import LedgerCore

/// The form as the text `jqc edit` writes and reads back.
public struct FormDocument {
    public let template: Template
    public let state: InspectionState

    public init(template: Template, state: InspectionState) {
        self.template = template
        self.state = state
    }

    static let refusalMarker = "# refused: "

    /// Fields in layout order (row, then column).
    var layout: [TemplateField] {
        template.fields.enumerated().sorted { a, b in
            (a.element.row, a.element.col, a.offset) < (b.element.row, b.element.col, b.offset)
        }.map(\.element)
    }

    public var text: String {
        var lines = [
            "# Inspection \(state.id.lowercased): \(template.name) at \(state.facilityName)",
            "# One line per field: [ID] LABEL = VALUE. Change the text after '=', or leave it empty to clear.",
            "# Only changed lines are recorded, all together or none. Lines starting with '#' are ignored.",
        ]
        for field in layout {
            switch field.type {
            case .section:
                lines += ["", "## \(Self.oneLine(field.label))"]
            case .label:
                lines.append("#   \(Self.oneLine(field.label))")
            case .image, .signature:
                let now = state.values[field.id].map(\.displayText) ?? "none"
                let command = field.type == .image ? "photo" : "sign"
                lines.append(
                    "# [\(field.id)] \(Self.oneLine(field.label)) (\(field.type)): \(now); "
                        + "capture with 'jqc \(command) \(state.id.lowercased.prefix(8)) \(field.id) FILE'")
            default:
                var comment = "# \(field.type)" + (field.required ? ", required" : "")
                if let options = field.options, field.type.offersOptions {
                    comment += "; options: " + options.joined(separator: " | ")
                }
                if field.type == .table, let columns = field.columns {
                    comment += "; columns: " + columns.joined(separator: ", ") + " (rows ';', cells ',')"
                }
                if field.type == .rating { comment += "; 1-5" }
                lines.append(comment)
                lines.append("[\(field.id)] \(Self.oneLine(field.label)) = \(value(of: field))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A label on one line (a line break would split the field's line).
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\r" || $0 == "\n" ? " " : $0 }))
    }

    /// The answer as text that `jqc set` reads back to the same value.
    func value(of field: TemplateField) -> String {
        guard let value = state.values[field.id], !value.isEmpty else { return "" }
        switch value {
        case .text(let text)
        where text.contains(where: \.isNewline) || text != text.trimming(.spaces):
            return JSONValue.string(text).description
        case .table(let rows) where rows.joined().contains(where: { $0.contains(where: { ",;[".contains($0) }) }):
            return JSONValue.array(rows.map { .array($0.map(JSONValue.string)) }).description
        default:
            return value.displayText
        }
    }

    /// The commands for the lines whose value differs from what was written.
    public func commands(from text: String) throws(EditError) -> [InspectionCommand] {
        var written: [FieldID: String] = [:]
        for field in layout where !field.type.isDisplayOnly && !field.type.holdsPhoto {
            written[field.id] = value(of: field)
        }
        var commands: [InspectionCommand] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimming(.spaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") else {
                throw EditError.malformedLine(number: number + 1, text: String(line))
            }
            let id = FieldID(rawValue: String(trimmed[trimmed.index(after: trimmed.startIndex)..<close]))
            var rest = trimmed[trimmed.index(after: close)...].drop { $0 == " " }
            // The label as written, else up to the first '='.
            if let field = template.field(id: id), rest.hasPrefix(Self.oneLine(field.label)) {
                rest = rest.dropFirst(Self.oneLine(field.label).count)
            } else if let equals = rest.firstIndex(of: "=") {
                rest = rest[equals...]
            }
            rest = rest.drop { $0 == " " }
            guard rest.hasPrefix("=") else { throw EditError.malformedLine(number: number + 1, text: String(line)) }
            let value = rest.dropFirst().trimming(.spaces)
            guard let before = written[id] else {
                // An unknown id or a photo field: let the decision name it.
                commands.append(.setField(field: id.rawValue, to: .text(value)))
                continue
            }
            if value == before { continue }
            // A JSON string, as written for text with line breaks; anything else (JSON or not) is plain text.
            if value.isEmpty {
                commands.append(.clearField(field: id.rawValue))
            } else if value.hasPrefix("\""), let json = try? JSONValue(parsing: value), case .string = json {
                commands.append(.setField(field: id.rawValue, to: .json(json)))
            } else {
                commands.append(.setField(field: id.rawValue, to: .text(value)))
            }
        }
        return commands
    }

    /// `content` with `reasons` as comments on top.
    public static func withRefusals(_ reasons: [String], _ content: String) -> String {
        let comments = reasons.flatMap { $0.split(separator: "\n").map { refusalMarker + $0 } }
        return (comments + ["# Correct the lines below, save and quit; quit without a change to stop.", ""])
            .joined(separator: "\n") + "\n" + content
    }

    /// The document without the refusal comments `withRefusals` added.
    public static func withoutRefusals(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        while let first = lines.first,
            first.hasPrefix(refusalMarker) || first.hasPrefix("# Correct the lines below")
        {
            lines.removeFirst()
            if lines.first == "" { lines.removeFirst() }
        }
        return lines.joined(separator: "\n")
    }
}
