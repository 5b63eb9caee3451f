import FoundationEssentials
import InspectionDomain
import LedgerCore

/// `jqc fill`'s walk through the form, apart from the terminal: the fields
/// in layout order, where a sitting starts, which headings and labels come
/// before the field asked, what a reply at the prompt means, and the path of
/// an image file typed for a photo field. The command asks, reads, records
/// and prints; every decision about where the walk goes is made here.
public struct FormFilling: Sendable {
    /// Every field of the template in layout order: by row, then column
    /// (the form as drawn), the template's order breaking ties.
    public let fields: [TemplateField]
    /// The positions in `fields` of the fields asked (not display-only).
    public let inputs: [Int]
    /// Which of `inputs` is asked now; `inputs.count` once past the last.
    public private(set) var position: Int
    /// The index in `fields` of the last field whose context was shown; -1
    /// after a jump (the start, going back), so the section is shown again.
    private var shownUpTo = -1

    /// A walk of `template`'s form that resumes at the first required field
    /// `state` still lacks, else at the first field without an answer, else
    /// at the top.
    public init(template: Template, state: InspectionState) {
        fields = template.fields.enumerated().sorted { a, b in
            (a.element.row, a.element.col, a.offset) < (b.element.row, b.element.col, b.offset)
        }.map(\.element)
        let fields = fields
        inputs = fields.indices.filter { !fields[$0].type.isDisplayOnly }
        let missing = Set(state.missingRequiredFields().map(\.id))
        position =
            inputs.firstIndex { missing.contains(fields[$0].id) }
            ?? inputs.firstIndex { state.values[fields[$0].id] == nil } ?? 0
    }

    /// The field asked now, or nil once the walk is past the last.
    public var current: TemplateField? { position < inputs.count ? fields[inputs[position]] : nil }

    /// How many fields are asked in all (the `N` of `[n/N]`).
    public var total: Int { inputs.count }

    /// The section headings and label texts to show before the current
    /// field: those between the last field shown and this one, or after a
    /// jump those of this field's section up to it; none when the same field
    /// is asked again. Marks the current field as shown.
    public mutating func context() -> [TemplateField] {
        guard position < inputs.count else { return [] }
        let index = inputs[position]
        defer { shownUpTo = index }
        if shownUpTo == index { return [] }
        let from: Int
        if shownUpTo > index || shownUpTo < 0 {
            from = fields[..<index].lastIndex(where: { $0.type == .section }) ?? 0
        } else {
            from = shownUpTo + 1
        }
        return fields[from..<index].filter { $0.type == .section || $0.type == .label }
    }

    /// On to the next field (an answer kept, recorded or cleared).
    public mutating func advance() { position = min(position + 1, inputs.count) }

    /// Back one field, its section shown again.
    public mutating func goBack() {
        position = max(0, position - 1)
        shownUpTo = -1
    }

    /// What a line typed at the prompt asks for.
    public enum Reply: Equatable, Sendable {
        /// Enter: keep the current answer.
        case keep
        /// `q`: stop, every answer given kept.
        case stop
        /// `<`: back one field.
        case back
        /// `?`: the keys and what the field accepts.
        case help
        /// `-`: clear the answer.
        case clear
        /// Anything else: this text as the answer (a leading backslash,
        /// which makes a key an answer, removed).
        case answer(String)
    }

    /// The meaning of `line` at the prompt: the keys compared without
    /// surrounding blanks, an answer kept as typed.
    public static func reply(_ line: String) -> Reply {
        switch line.trimming(.spaces) {
        case "": .keep
        case "q", "Q": .stop
        case "<": .back
        case "?": .help
        case "-": .clear
        default: .answer(line.hasPrefix("\\") ? String(line.dropFirst()) : line)
        }
    }

    /// The file an answer to a photo or signature field names: blanks
    /// trimmed, the quotes a terminal adds to a dragged path removed, `~/`
    /// for `home`.
    public static func imagePath(_ answer: String, home: String?) -> String {
        var path = answer.trimming(.spaces)
        if path.count >= 2, let first = path.first, first == path.last, first == "'" || first == "\"" {
            path = String(path.dropFirst().dropLast())
        }
        if path.hasPrefix("~/"), let home { path = home + path.dropFirst() }
        return path
    }

    /// The files whose names start with what was typed (a terminal in line
    /// mode has no Tab completion), hidden files left out, sorted: up to
    /// `limit`, and whether there were more.
    public static func suggestions(for typed: String, limit: Int = 10) -> (paths: [String], more: Bool) {
        let url = URL(fileURLWithPath: typed)
        let directory = typed.hasSuffix("/") ? url : url.deletingLastPathComponent()
        let start = typed.hasSuffix("/") ? "" : url.lastPathComponent
        // An unreadable directory simply offers nothing.
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            return ([], false)
        }
        let matches = names.filter { $0.hasPrefix(start) && !$0.hasPrefix(".") }.sorted()
        return (matches.prefix(limit).map { directory.appendingPathComponent($0).path }, matches.count > limit)
    }

    /// Whether a reply to a yes/no question is yes (`y` or `yes`, any case);
    /// no reply (end of input) is no.
    public static func isYes(_ reply: String?) -> Bool {
        ["y", "yes"].contains(reply?.trimming(.spaces).lowercased() ?? "")
    }
}
