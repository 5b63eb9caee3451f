import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc set ID FIELD=VALUE …`, `jqc set ID --from FILE`, and the original
/// `jqc set ID FIELD VALUE`: answers recorded together, all or none.
struct SetCommand: RunnableCommand {
    static let path = ["set"]
    static let answerArgument = PositionalSpec(
        "ANSWER", help: "FIELD=VALUE (or FIELD VALUE for a single answer).", optional: true, variadic: true)
    static let from = OptionSpec(
        "from", valueName: "FILE", help: "Read answers from a JSON file ('-' for standard input).")
    static let spec = CommandSpec(
        "set", abstract: "Answer fields of a draft inspection (one, or many at once).",
        discussion: """
            Each ANSWER is FIELD=VALUE, split at the first '='; a single answer may also be given as two \
            words, FIELD VALUE. FIELD is the field's id or its label. VALUE is read by the field's type: \
            yes/no for a checkbox, an offered option for radio and select, options separated by commas for \
            a checkbox group, 0-5 for a rating, pass/fail for pass_fail, YYYY-MM-DD for a date, rows \
            separated by ';' and cells by ',' (or a JSON array of arrays) for a table. An empty VALUE \
            (FIELD=) clears the field.

            --from FILE reads a JSON object of answers, keyed by field id or label, with values as \
            'jqc show --json' prints them ({"2": 4, "Notes": "ok"}), or a whole 'show --json' document (its \
            "fields"); null clears a field. '-' reads standard input.

            Every answer is checked before anything is recorded: if any does not fit, nothing is recorded \
            and each refusal is listed; otherwise all of them are recorded in one durable transaction. \
            Use 'jqc photo' and 'jqc sign' for image and signature fields, 'jqc fill' to walk the form.
            """,
        group: "Inspecting",
        positionals: [.inspection, answerArgument], options: [from])

    var id: String
    /// Answers in the order given; a nil value (`FIELD=`) clears the field.
    var answers: [(field: String, value: String?)]
    var from: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(.inspection)
        from = try parsed.value(of: Self.from)
        answers = try Self.answers(parsed.values(of: Self.answerArgument), context: parsed.context)
        if answers.isEmpty && from == nil {
            throw parsed.missing(Self.answerArgument)
        }
    }

    /// `FIELD=VALUE` words, or the two words `FIELD VALUE` of the original form.
    static func answers(_ words: [String], context: CommandContext) throws(UsageError) -> [(
        field: String, value: String?
    )] {
        if words.count == 2, !words[0].contains("=") { return [(words[0], words[1])] }
        /// Answers in the order given; a nil value (`FIELD=`) clears the field.
        var answers: [(field: String, value: String?)] = []
        for word in words {
            guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                throw .invalidValue(
                    option: answerArgument.name, value: word,
                    reason: "expected FIELD=VALUE (for one answer, FIELD VALUE also works)", context: context)
            }
            let value = String(word[word.index(after: equals)...])
            answers.append((String(word[..<equals]), value.isEmpty ? nil : value))
        }
        return answers
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        var commands: [InspectionCommand] = []
        if let from { commands += try Self.commands(fromFile: from, invocation) }
        for answer in answers {
            commands.append(
                answer.value.map { .setField(field: answer.field, to: .text($0)) } ?? .clearField(field: answer.field))
        }
        let (events, state) = try invocation.record(commands, on: inspection)
        report(events, state, invocation, verb: "set")
    }

    /// The commands a JSON answers file asks for, in the file's order.
    static func commands(fromFile path: String, _ invocation: Invocation) throws -> [InspectionCommand] {
        let data: Data
        do throws(OpenFileError) {
            data = Data(try (path == "-" ? OpenFile.standardInput : OpenFile(reading: path)).readToEnd())
        } catch {
            throw JQCError.unreadableFile(path, error.reason)
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: Array(data))
        } catch {
            throw JQCError.unreadableFile(path, "\(error)")
        }
        return try commands(fromJSON: json, file: path)
    }

    /// Reads `{"FIELD": value, …}` (keys are field ids or labels), or a whole
    /// `jqc show --json` document, whose `fields` give `id` and `value`.
    static func commands(fromJSON json: JSONValue, file: String) throws -> [InspectionCommand] {
        guard case .object(let members) = json else {
            throw JQCError.unreadableFile(
                file, "expected a JSON object of answers ({\"FIELD\": value, …}) or 'jqc show --json' output")
        }
        var answers: [(field: String, value: JSONValue)] = []
        if let fields = members.first(where: { $0.key == "fields" }), case .array(let items) = fields.value {
            for item in items {
                guard case .object(let field) = item,
                    let id = field.first(where: { $0.key == "id" }), case .string(let fieldID) = id.value,
                    let value = field.first(where: { $0.key == "value" })
                else {
                    throw JQCError.unreadableFile(
                        file, "each member of \"fields\" needs an \"id\" and a \"value\", as 'jqc show --json' prints")
                }
                answers.append((fieldID, value.value))
            }
        } else {
            answers = members.map { ($0.key, $0.value) }
        }
        return answers.map { answer in
            if case .null = answer.value { return .clearField(field: answer.field) }
            return .setField(field: answer.field, to: .json(answer.value))
        }
    }
}
