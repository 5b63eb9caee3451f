import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc edit ID`: the form as a text document in `$VISUAL`/`$EDITOR`.
struct EditCommand: CommandWithOneArgument {
    static let path = ["edit"]
    static let argument = PositionalSpec.draft
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
        positionals: [argument])

    var id: String

    init(argument: String) { id = argument }

    func run(_ invocation: Invocation) throws {
        let (inspection, state, template) = try invocation.editableDraft(id)
        let document = FormDocument(template: template, state: state)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "jqc-edit-\(inspection.lowercased.prefix(8))-\(UUID().uuidString.prefix(8)).txt")
        defer { try? FileManager.default.removeItem(at: file) }  // a leftover temporary file is harmless
        let outcome = try FormEditing(document: document).edit(
            in: { text in
                try Data(text.utf8).write(to: file)
                try Self.runEditor(on: file.path, invocation)
                return String(decoding: try Data(contentsOf: file), as: UTF8.self)
            },
            record: { try invocation.record($0, on: inspection) },
            refused: { invocation.stderr.line("jqc: refused; reopening the editor with the reasons at the top.") })
        switch outcome {
        case .unchanged: invocation.stdout.line("No answer changed; nothing recorded.")
        case .recorded(let events, let after): report(events, after, invocation, verb: "set")
        }
    }

    /// Runs the person's editor on `path` through the shell, so an editor
    /// given with arguments (`code --wait`) works, with the terminal as is.
    static func runEditor(on path: String, _ invocation: Invocation) throws {
        let environment = invocation.environment
        let editor = [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let ending: ChildProcess.Ending
        do {
            ending = try ChildProcess.run(
                "/bin/sh", arguments: ["-c", "\(editor) \"$1\"", "jqc-edit", path], environment: environment,
                output: .inherited, inheritingInput: true)
        } catch {
            throw EditError.editorFailed(command: editor, status: 127)
        }
        guard ending.succeeded else {
            throw EditError.editorFailed(command: editor, status: ending.status ?? ending.signal ?? 1)
        }
    }
}
