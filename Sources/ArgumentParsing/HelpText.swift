extension ProgramSpec {
    /// The synopsis of the command at `path`, without the `usage:` prefix, on one line
    /// (`"jqc flag ID --severity S --description TEXT [--photo FILE ...]"`).
    public func usage(for path: [String]) throws(UsageError) -> String {
        usageLine(for: try command(at: path), path: path)
    }

    /// The help page of the command at `path` (`[]` for the program), wrapped to `width` columns, without a
    /// trailing newline. Built from the spec alone, so it lists exactly what the parser accepts.
    public func help(for path: [String], width: Int = 80) throws(UsageError) -> String {
        let command = try command(at: path)
        var blocks: [HelpBlock] = []

        let head = ["usage:", name] + path
        let arguments = Array(usageUnits(for: command, path: path).dropFirst(1 + path.count))
        blocks.append(.lines(Wrapping.usage(head: head, arguments: arguments, width: width)))
        blocks.append(.lines(Wrapping.words(command.abstract, width: width)))
        if let discussion = command.discussion {
            for paragraph in Wrapping.paragraphs(discussion, width: width) {
                blocks.append(.lines(paragraph))
            }
        }

        if !command.positionals.isEmpty {
            blocks.append(.section(title: "ARGUMENTS:", rows: command.positionals.map(Self.row(for:))))
        }
        if !command.options.isEmpty || !command.flags.isEmpty {
            blocks.append(.section(title: "OPTIONS:", rows: Self.rows(command.options, command.flags)))
        }
        blocks += subcommandSections(of: command, path: path)
        blocks.append(.section(title: "GLOBAL OPTIONS:", rows: globalRows))

        if !command.subcommands.isEmpty {
            let noun = path.isEmpty ? "COMMAND" : "SUBCOMMAND"
            let topic = ([name, BuiltIn.helpCommand] + path + [noun]).joined(separator: " ")
            let sentence = "See '\(topic)' for more about a \(noun.lowercased())."
            blocks.append(.lines(Wrapping.words(sentence, width: width)))
        }
        return HelpBlock.render(blocks, width: width)
    }

    func usageLine(for command: CommandSpec, path: [String]) -> String {
        // Joined by hand: every parse makes this line, and the standard
        // library's generic `joined(separator:)` made the Swift runtime scan
        // every protocol conformance of the binary at its first call (a
        // tenth of what `jqc --version` ran).
        var line = ""
        for unit in usageUnits(for: command, path: path) {
            if !line.isEmpty { line += " " }
            line += unit
        }
        return line
    }

    /// The synopsis as pieces that must not be split across lines (`[--photo FILE ...]` stays whole).
    private func usageUnits(for command: CommandSpec, path: [String]) -> [String] {
        var units = [name] + path
        if path.isEmpty {
            units += globalOptions.map(Self.usageUnit(for:))
            units += globalFlags.map { "[--\($0.long)]" }
        }
        if !command.subcommands.isEmpty {
            let noun = path.isEmpty ? "COMMAND" : "SUBCOMMAND"
            guard !command.requiresSubcommand else {
                units.append(noun)
                return units
            }
            // A command that also runs alone: `jqc sync [SUBCOMMAND] [--watch]`.
            units.append("[\(noun)]")
        }
        for positional in command.positionals {
            let text = positional.name + (positional.isVariadic ? "..." : "")
            units.append(positional.isOptional ? "[\(text)]" : text)
        }
        units += command.options.map(Self.usageUnit(for:))
        units += command.flags.map { "[--\($0.long)]" }
        return units
    }

    private static func usageUnit(for option: OptionSpec) -> String {
        let text = "--\(option.long) \(option.valueName)" + (option.isRepeatable ? " ..." : "")
        return option.isRequired ? text : "[\(text)]"
    }

    private static func row(for positional: PositionalSpec) -> HelpRow {
        var notes: [String] = []
        if positional.isOptional { notes.append("optional") }
        if positional.isVariadic { notes.append("one or more") }
        if positional.isVariadic && positional.isOptional { notes = ["any number"] }
        let label = positional.name + (positional.isVariadic ? "..." : "")
        return HelpRow(label: label, text: annotated(positional.help, notes))
    }

    /// Option rows with long names aligned. Every page lists `-h, --help`, so rows without a short name are
    /// always indented by the width of `-x, `.
    private static func rows(_ options: [OptionSpec], _ flags: [FlagSpec]) -> [HelpRow] {
        func prefix(_ short: Character?) -> String {
            if let short { return "-\(short), " }
            return "    "
        }
        var rows = options.map { option in
            var notes: [String] = []
            if option.isRequired { notes.append("required") }
            if let defaultDescription = option.defaultDescription { notes.append("default: \(defaultDescription)") }
            if option.isRepeatable { notes.append("repeatable") }
            return HelpRow(
                label: prefix(option.short) + "--\(option.long) \(option.valueName)",
                text: annotated(option.help, notes)
            )
        }
        rows += flags.map { HelpRow(label: prefix($0.short) + "--\($0.long)", text: $0.help) }
        return rows
    }

    private static func annotated(_ help: String, _ notes: [String]) -> String {
        notes.isEmpty ? help : "\(help) (\(notes.joined(separator: "; ")))"
    }

    private var globalRows: [HelpRow] {
        var flags = globalFlags
        flags.append(FlagSpec(BuiltIn.helpLong, short: BuiltIn.helpShort, help: "Show this help."))
        if version != nil {
            flags.append(FlagSpec(BuiltIn.versionLong, help: "Show the version."))
        }
        return Self.rows(globalOptions, flags)
    }

    /// Subcommands under their group headings, groups in the order they first appear, ungrouped ones last.
    private func subcommandSections(of command: CommandSpec, path: [String]) -> [HelpBlock] {
        var visible = command.visibleSubcommands
        if path.isEmpty && command.subcommand(named: BuiltIn.helpCommand) == nil {
            let example = "\(name) help \(visible.first?.name ?? "COMMAND")"
            visible.append(CommandSpec(BuiltIn.helpCommand, abstract: "Show the help of a command, e.g. '\(example)'."))
        }
        guard !visible.isEmpty else { return [] }
        let noun = path.isEmpty ? "COMMANDS" : "SUBCOMMANDS"
        var groups: [String] = []
        for subcommand in visible {
            if let group = subcommand.group, !groups.contains(group) { groups.append(group) }
        }
        var sections: [HelpBlock] = groups.map { group in
            let members = visible.filter { $0.group == group }
            return .section(
                title: "\(group.uppercased()) \(noun):",
                rows: members.map { HelpRow(label: $0.name, text: $0.abstract) }
            )
        }
        let ungrouped = visible.filter { $0.group == nil }
        if !ungrouped.isEmpty {
            sections.append(
                .section(
                    title: groups.isEmpty ? "\(noun):" : "OTHER \(noun):",
                    rows: ungrouped.map { HelpRow(label: $0.name, text: $0.abstract) }
                )
            )
        }
        return sections
    }
}

/// One line of a two-column help section: what to type, and what it does.
struct HelpRow {
    var label: String
    var text: String
}

/// A piece of a help page, kept apart from its rendering so that every section shares one column width.
enum HelpBlock {
    case lines([String])
    case section(title: String, rows: [HelpRow])

    static let indent = 2
    static let gap = 2

    static func render(_ blocks: [HelpBlock], width: Int) -> String {
        let labels = blocks.flatMap { block -> [String] in
            if case .section(_, let rows) = block { return rows.map(\.label) }
            return []
        }
        // Labels longer than the cap get their own line, so one long label does not squeeze every description.
        let cap = max(10, width * 2 / 5)
        let labelWidth = min(labels.map(\.count).max() ?? 0, cap)
        let column = indent + labelWidth + gap
        let textWidth = max(width - column, 10)
        let padding = String(repeating: " ", count: column)

        var rendered: [[String]] = []
        for block in blocks {
            switch block {
            case .lines(let lines):
                if !lines.isEmpty { rendered.append(lines) }
            case .section(let title, let rows):
                var lines = [title]
                for row in rows {
                    let label = String(repeating: " ", count: indent) + row.label
                    var text = Wrapping.words(row.text, width: textWidth)
                    if row.label.count > labelWidth || text.isEmpty {
                        lines.append(label)
                    } else {
                        let first = text.removeFirst()
                        lines.append(label + String(repeating: " ", count: column - label.count) + first)
                    }
                    lines += text.map { padding + $0 }
                }
                rendered.append(lines)
            }
        }
        return rendered.map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
    }
}

/// Greedy line filling, shared by prose and by the usage line.
enum Wrapping {
    /// Reflows text into lines of at most `width` columns; a word longer than that gets a line to itself
    /// rather than being broken, since a broken option name or path is worse than a long line.
    static func words(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" }) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// Lays out a usage line: continuation lines are indented under the first argument, so the command name
    /// stands out, unless that would push an argument past the width. `arguments` are never split inside.
    static func usage(head: [String], arguments: [String], width: Int) -> [String] {
        var line = head.joined(separator: " ")
        let longest = arguments.map(\.count).max() ?? 0
        let hang = line.count + 1 + longest > width ? 4 : line.count + 1
        let padding = String(repeating: " ", count: hang)
        var lines: [String] = []
        for argument in arguments {
            if line.count + 1 + argument.count <= width {
                line += " " + argument
            } else {
                lines.append(line)
                line = padding + argument
            }
        }
        lines.append(line)
        return lines
    }

    /// Splits text at blank lines and reflows each paragraph; a paragraph whose lines all start with a space
    /// (an example command, a list) is kept as written.
    static func paragraphs(_ text: String, width: Int) -> [[String]] {
        var paragraphs: [[Substring]] = [[]]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) {
                if !(paragraphs.last?.isEmpty ?? true) { paragraphs.append([]) }
            } else {
                paragraphs[paragraphs.count - 1].append(line)
            }
        }
        return paragraphs.filter { !$0.isEmpty }.map { lines in
            if lines.allSatisfy({ $0.hasPrefix(" ") }) { return lines.map(String.init) }
            return words(lines.joined(separator: " "), width: width)
        }
    }
}
