import ArgumentParsing
import FoundationEssentials
import Glibc
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore

/// Why `jqc fill` cannot walk the form.
enum FillError: Error, CustomStringConvertible {
    /// Standard input or output is not a terminal.
    case noTerminal(String)

    var description: String {
        switch self {
        case .noTerminal(let id):
            "jqc fill asks one question at a time and needs a terminal, but standard input or output is not one. "
                + "From a script, record answers with 'jqc set \(id) FIELD=VALUE …' or 'jqc set \(id) --from FILE'."
        }
    }
}

/// `jqc fill ID`: the form, one field at a time, in layout order; each
/// answer is checked and recorded as soon as it is given.
struct FillCommand: CommandWithOneArgument {
    static let path = ["fill"]
    static let argument = PositionalSpec.draft
    static let spec = CommandSpec(
        "fill", abstract: "Fill in a draft field by field, interactively.",
        discussion: """
            Walks the form in layout order, section by section, showing each field's label, type, options, \
            whether it is required and its current answer. Each answer is checked at once and recorded as \
            soon as it is given (durable, like 'jqc set'); a refused answer is explained and asked again. \
            It starts at the first required field still empty, so stopping and running it again resumes there.

            At the prompt: Enter keeps the current answer, '-' clears it, '<' goes back one field, '?' shows \
            this help and what the field accepts, 'q' (or end of input) stops. For image and signature fields \
            give the path of the image file ('~/' for your home; a path that names no file lists the files \
            starting so). To record an answer that is one of these keys, start it with a \
            backslash ('\\-' records "-"). At the end it lists what is still required and the score so far, \
            and offers to submit (asking whether a follow-up is needed).

            Needs a terminal; from a script use 'jqc set ID FIELD=VALUE …' or 'jqc set ID --from FILE'.
            """,
        group: "Inspecting",
        positionals: [argument])

    var id: String

    init(argument: String) { id = argument }

    func run(_ invocation: Invocation) throws {
        guard isatty(STDIN_FILENO) == 1, invocation.stdout.isTerminal else { throw FillError.noTerminal(id) }
        let (_, state, template) = try invocation.editableDraft(id)
        let walk = FormWalk(
            template: template, state: state, invocation: invocation, reference: String(id.prefix(8)),
            readLine: { Swift.readLine(strippingNewline: true) })
        try walk.run()
    }
}

/// One sitting of `jqc fill`: where in the form it is, and what it printed.
final class FormWalk {
    let template: Template
    var state: InspectionState
    let invocation: Invocation
    /// How the inspection is named in the advice printed (the prefix typed).
    let reference: String
    let readLine: () -> String?

    init(
        template: Template, state: InspectionState, invocation: Invocation, reference: String,
        readLine: @escaping () -> String?
    ) {
        self.template = template
        self.state = state
        self.invocation = invocation
        self.reference = reference
        self.readLine = readLine
    }

    private func say(_ text: String) { invocation.stdout.line(text) }

    private func say(_ lines: [String]) { for line in lines { say(line) } }

    func run() throws {
        var walk = FormFilling(template: template, state: state)
        say(FormFilling.opening(state, template: template))
        var stopped = false
        while let field = walk.current {
            say(FormFilling.contextLines(walk.context()))
            say(FormFilling.question(field, number: walk.position + 1, of: walk.total, current: state.values[field.id]))
            invocation.stdout.write("> ")
            guard let line = readLine() else {
                say("")
                stopped = true
                break
            }
            switch FormFilling.reply(line) {
            case .keep: walk.advance()
            case .stop: stopped = true
            case .back: walk.goBack()
            case .help:
                say(FormFilling.keys)
                say("  " + FieldValue.expectation(for: field))
            case .clear:
                if answer(.clearField(field: field.id.rawValue)) { walk.advance() }
            case .answer(let text):
                if answer(text, for: field) { walk.advance() }
            }
            if stopped { break }
        }
        try finish(stopped: stopped)
    }

    /// Records `text` as `field`'s answer; false (and the reason shown) when refused.
    private func answer(_ text: String, for field: TemplateField) -> Bool {
        if field.type.holdsPhoto {
            let path = FormFilling.imagePath(text, home: invocation.environment["HOME"])
            if !FileManager.default.fileExists(atPath: path) {
                say(FormFilling.noFile(path))
                return false
            }
            return perform { try invocation.capture(path, for: .field(field.id.rawValue), on: state.id) }
        }
        return answer(.setField(field: field.id.rawValue, to: .text(text)))
    }

    private func answer(_ command: InspectionCommand) -> Bool {
        perform { try invocation.record(command, on: state.id) }
    }

    private func perform(
        _ recording: () throws -> (events: [InspectionEvent], state: InspectionState)
    ) -> Bool {
        do {
            let (events, after) = try recording()
            state = after
            say(FormFilling.recorded(events))
            return true
        } catch {
            say("  refused: \(TerminalText.safe(JQC.message(for: error)))")
            return false
        }
    }

    private func finish(stopped: Bool) throws {
        let closing = FormFilling.closing(state, template: template, stopped: stopped, reference: reference)
        say(closing.lines)
        guard closing.canSubmit else { return }
        invocation.stdout.write("Submit now? [y/N] ")
        guard FormFilling.isYes(readLine()) else {
            say(FormFilling.notSubmitted(reference: reference))
            return
        }
        invocation.stdout.write("Does the facility need a re-inspection (a follow-up)? [y/N] ")
        let followUp = FormFilling.isYes(readLine())
        if perform({ try invocation.record(.submit(followUpRequired: followUp), on: state.id) }) {
            say(FormFilling.submitted(state, followUp: followUp, reference: reference))
        }
    }
}
