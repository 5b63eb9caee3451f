import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore

/// Why `jqc edit` stopped without recording.
enum EditError: Error, CustomStringConvertible {
    case editorFailed(command: String, status: Int32)
    case abandoned(reason: String)
    case malformedLine(number: Int, text: String)

    var description: String {
        switch self {
        case .editorFailed(let command, let status):
            "the editor ('\(TerminalText.singleLine(command))') exited with status \(status); nothing was recorded. "
                + "Set VISUAL or EDITOR to an editor that exits with 0 after saving."
        case .abandoned(let reason):
            "\(reason); nothing was recorded."
        case .malformedLine(let number, let text):
            "line \(number) (\(TerminalText.singleLine(text))) is not '[ID] LABEL = VALUE' and not a comment"
        }
    }
}

/// `jqc edit ID`: the form as a text document in `$VISUAL`/`$EDITOR`.
struct EditCommand: RunnableCommand {
    static let path = ["edit"]
    static let idArgument = PositionalSpec("ID", help: "The draft inspection (any unique prefix of its id).")
    static let spec = CommandSpec(
        "edit", abstract: "Edit a draft's answers in your text editor ($VISUAL, else $EDITOR, else vi).",
        discussion: """
            The form is written as one line per field, '[ID] LABEL = VALUE', in layout order, with comments \
            ('#') giving each field's type, options and whether it is required. Change the text after '=' \
            (empty clears the field), save and quit: only the answers you changed are recorded, together in \
            one transaction. If any is refused, nothing is recorded and the editor opens again with the \
            reasons as comments at the top; quitting without a change then stops. Values are written as for \
            'jqc set'; a text with line breaks or edge spaces is a JSON string ("…"). Image and signature \
            fields are shown as comments: capture them with 'jqc photo' and 'jqc sign'.
            """,
        group: "Inspecting",
        positionals: [idArgument])

    var id: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(Self.idArgument)
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        guard let state = try invocation.ledger().state(of: inspection) else { throw LookupError.noInspection(id) }
        guard state.isEditable, let template = state.template else {
            throw Invocation.advised(.inspectionNotEditable(inspection, status: state.status), state)
        }
        let document = FormDocument(template: template, state: state)
        let original = document.text
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "jqc-edit-\(inspection.lowercased.prefix(8))-\(UUID().uuidString.prefix(8)).txt")
        defer { try? FileManager.default.removeItem(at: file) }  // a leftover temporary file is harmless
        var text = original
        var lastRefused: String?
        for _ in 0..<20 {
            try Data(text.utf8).write(to: file)
            try Self.runEditor(on: file.path, invocation)
            let edited = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            let content = FormDocument.withoutRefusals(edited)
            if let lastRefused, content == lastRefused {
                throw EditError.abandoned(reason: "the document was saved unchanged after the refusal")
            }
            do {
                let commands = try document.commands(from: content)
                guard !commands.isEmpty else {
                    invocation.stdout.line("No answer changed; nothing recorded.")
                    return
                }
                let (events, after) = try invocation.record(commands, on: inspection)
                report(events, after, invocation, verb: "set")
                return
            } catch let error as EditError {
                guard case .malformedLine = error else { throw error }
                text = FormDocument.withRefusals([error.description], content)
                lastRefused = content
            } catch let error as RecordingError {
                guard case .batchRefused(_, let refusals, _) = error else { throw error }
                text = FormDocument.withRefusals(refusals.map(\.description), content)
                lastRefused = content
            } catch let error as DomainError {
                text = FormDocument.withRefusals([error.description], content)
                lastRefused = content
            }
            invocation.stderr.line("jqc: refused; reopening the editor with the reasons at the top.")
        }
        throw EditError.abandoned(reason: "refused 20 times in a row")
    }

    /// Runs the person's editor on `path` through the shell, so an editor
    /// given with arguments (`code --wait`) works, with the terminal as is.
    static func runEditor(on path: String, _ invocation: Invocation) throws {
        let environment = invocation.environment
        let editor = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(editor) \"$1\"", "jqc-edit", path]
        process.environment = environment
        do {
            try process.run()
        } catch {
            throw EditError.editorFailed(command: editor, status: 127)
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw EditError.editorFailed(command: editor, status: process.terminationStatus)
        }
    }
}

/// The form as the text `jqc edit` writes and reads back.
struct FormDocument {
    let template: Template
    let state: InspectionState

    static let refusalMarker = "# refused: "

    /// Fields in layout order (row, then column).
    var layout: [TemplateField] {
        template.fields.enumerated().sorted { a, b in
            (a.element.row, a.element.col, a.offset) < (b.element.row, b.element.col, b.offset)
        }.map(\.element)
    }

    var text: String {
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
        text.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
    }

    /// The answer as text that `jqc set` reads back to the same value.
    func value(of field: TemplateField) -> String {
        guard let value = state.values[field.id], !value.isEmpty else { return "" }
        switch value {
        case .text(let text)
        where text.contains(where: \.isNewline) || text != text.trimmingCharacters(in: .whitespaces):
            return JSONValue.string(text).description
        case .table(let rows) where rows.joined().contains(where: { $0.contains(where: { ",;[".contains($0) }) }):
            return JSONValue.array(rows.map { .array($0.map(JSONValue.string)) }).description
        default:
            return value.displayText
        }
    }

    /// The commands for the lines whose value differs from what was written.
    func commands(from text: String) throws -> [InspectionCommand] {
        var written: [FieldID: String] = [:]
        for field in layout where !field.type.isDisplayOnly && !field.type.holdsPhoto {
            written[field.id] = value(of: field)
        }
        var commands: [InspectionCommand] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
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
            let value = rest.dropFirst().trimmingCharacters(in: .whitespaces)
            guard let before = written[id] else {
                // An unknown id or a photo field: let the decision name it.
                commands.append(.setField(field: id.rawValue, to: .text(value)))
                continue
            }
            if value == before { continue }
            if value.isEmpty {
                commands.append(.clearField(field: id.rawValue))
            } else if value.hasPrefix("\""), let json = try? JSONValue(parsing: value), case .string = json {
                // A JSON string, as written for text with line breaks; anything else is plain text.
                commands.append(.setField(field: id.rawValue, to: .json(json)))
            } else {
                commands.append(.setField(field: id.rawValue, to: .text(value)))
            }
        }
        return commands
    }

    /// `content` with `reasons` as comments on top.
    static func withRefusals(_ reasons: [String], _ content: String) -> String {
        let comments = reasons.flatMap { $0.split(separator: "\n").map { refusalMarker + $0 } }
        return (comments + ["# Correct the lines below, save and quit; quit without a change to stop.", ""])
            .joined(separator: "\n") + "\n" + content
    }

    /// The document without the refusal comments `withRefusals` added.
    static func withoutRefusals(_ text: String) -> String {
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
