import FoundationEssentials
import InspectionAudit
import InspectionDomain
import LedgerCore

/// What `jqc fill` says, apart from the terminal it says it on: the lines
/// before the walk, a field's context and question, what an answer
/// recorded, and how the sitting ends. Every person-written part (labels,
/// options, answers, paths) is shown through `TerminalText`.
extension FormFilling {
    /// The keys at the prompt, said at the start and with `?`.
    public static let keys = """
        Enter keeps the answer, - clears it, < goes back, ? shows this help, q stops (answers given are kept).
        """

    /// The lines before the first question: the inspection, what a merge
    /// of shared copies left to look at, and the keys.
    public static func opening(_ state: InspectionState, template: Template) -> [String] {
        [
            "Inspection \(state.id.lowercased): \(TerminalText.singleLine(template.name)) at "
                + TerminalText.singleLine(state.facilityName)
        ] + MergeReport(state).lines(sanitise: TerminalText.singleLine) + [keys]
    }

    /// The headings and labels `context()` gives, as shown: a section after a blank line.
    public static func contextLines(_ shown: [TemplateField]) -> [String] {
        shown.flatMap { field in
            field.type == .section
                ? ["", "== \(TerminalText.singleLine(field.label))"] : ["   \(TerminalText.safe(field.label))"]
        }
    }

    /// The question of field `number` of `total` after a blank line: its
    /// label, type and whether it is required, the options or columns it
    /// takes, and its answer now.
    public static func question(
        _ field: TemplateField, number: Int, of total: Int, current: FieldValue?
    ) -> [String] {
        var lines = [
            "",
            "[\(number)/\(total)] \(TerminalText.singleLine(field.label)) (\(field.type.rawValue)"
                + (field.required ? ", required)" : ")"),
        ]
        if let options = field.options, field.type.offersOptions {
            lines.append("  options: " + options.map(TerminalText.singleLine).joined(separator: ", "))
        }
        if field.type == .table, let columns = field.columns {
            lines.append(
                "  columns: " + columns.map(TerminalText.singleLine).joined(separator: ", ") + " (rows ';', cells ',')")
        }
        if field.type.holdsPhoto { lines.append("  give the path of an image file") }
        lines.append("  now: \(current.map { TerminalText.safe($0.shownText) } ?? "—")")
        return lines
    }

    /// A path typed for a photo field that names no file, with the files
    /// that start so, so the next try can be exact.
    public static func noFile(_ path: String) -> String {
        let (paths, more) = suggestions(for: path)
        return "  refused: no file \(TerminalText.singleLine(path))."
            + (paths.isEmpty
                ? ""
                : " Files there that start so: " + paths.map(TerminalText.singleLine).joined(separator: ", ")
                    + (more ? ", …" : ""))
    }

    /// What an answer recorded: the value as recorded, a clear, or nothing new.
    public static func recorded(_ events: [InspectionEvent]) -> [String] {
        guard !events.isEmpty else { return ["  unchanged"] }
        return events.compactMap { event in
            switch event {
            case .fieldSet(let set): "  recorded: \(TerminalText.safe(set.value.displayText))"
            case .fieldCleared: "  cleared"
            default: nil
            }
        }
    }

    /// The lines that end a sitting, after a blank line: what is still
    /// required and the score so far, then, when the sitting stopped or a
    /// required field is empty, how to go on (`reference`, the id as typed).
    /// `canSubmit` is whether the submit question follows.
    public static func closing(_ state: InspectionState, template: Template, stopped: Bool, reference: String) -> (
        lines: [String], canSubmit: Bool
    ) {
        var lines = [""]
        let missing = state.missingRequiredFields()
        if !missing.isEmpty {
            lines.append("Still required: " + missing.map { TerminalText.singleLine($0.label) }.joined(separator: ", "))
        }
        let score = Score.compute(template: template, values: state.values)
        lines.append("Score so far: " + (score.map { FixedPoint.text($0, places: 2) } ?? "none"))
        guard !stopped, missing.isEmpty else {
            lines.append("Every answer given is recorded. Continue with 'jqc fill \(reference)'.")
            return (lines, false)
        }
        return (lines, true)
    }

    /// Said when the submit question is answered no.
    public static func notSubmitted(reference: String) -> String {
        "Not submitted. Submit later with 'jqc submit \(reference)'."
    }

    /// Said once the inspection is submitted: its score, and how to re-inspect when a follow-up is needed.
    public static func submitted(_ state: InspectionState, followUp: Bool, reference: String) -> [String] {
        [
            "Submitted \(state.id.lowercased): score "
                + (state.score.map { FixedPoint.text($0, places: 2) } ?? "none (nothing scoreable answered)")
        ] + (followUp ? ["Follow-up required: re-inspect with 'jqc start --reinspect \(reference)'"] : [])
    }
}
