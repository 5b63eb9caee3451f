extension ProgramSpec {
    /// The manual page (section 1, roff `man` macros) of the program and
    /// every command, from the same specs as `help`: one page, `man NAME`.
    /// `date` is the page's date (`YYYY-MM-DD`), given so the output is
    /// reproducible.
    public func manPage(date: String, sections extra: [(title: String, text: String)] = []) -> String {
        var out: [String] = []
        out.append(
            ".TH \(Roff.quoted(name.uppercased())) 1 \(Roff.quoted(date)) \(Roff.quoted("\(name) \(version ?? "")")) \(Roff.quoted("User Commands"))"
        )
        out.append(".SH NAME")
        out.append(Roff.text("\(name) - \(abstract)"))
        out.append(".SH SYNOPSIS")
        out.append(".B \(Roff.escape(name))")
        out.append(Roff.text("[GLOBAL OPTIONS] COMMAND [ARGUMENTS] [OPTIONS]"))
        if let discussion {
            out.append(".SH DESCRIPTION")
            out += Roff.paragraphs(discussion)
        }
        out.append(".SH GLOBAL OPTIONS")
        for option in globalOptions { out += Roff.option(option) }
        for flag in globalFlags { out += Roff.flag(flag) }
        out += Roff.flag(FlagSpec(BuiltIn.helpLong, short: BuiltIn.helpShort, help: "Show the help."))
        if version != nil { out += Roff.flag(FlagSpec(BuiltIn.versionLong, help: "Show the version.")) }
        out.append(".SH COMMANDS")
        for command in commands where !command.isHidden {
            out += manSection(command, path: [command.name])
            for subcommand in command.visibleSubcommands {
                out += manSection(subcommand, path: [command.name, subcommand.name])
            }
        }
        for section in extra {
            out.append(".SH \(Roff.escape(section.title.uppercased()))")
            out += Roff.paragraphs(section.text)
        }
        return out.joined(separator: "\n") + "\n"
    }

    private func manSection(_ command: CommandSpec, path: [String]) -> [String] {
        var out = [".SS \(Roff.quoted(path.joined(separator: " ")))"]
        out.append(".B \(Roff.escape(usageLine(for: command, path: path)))")
        out.append(".PP")
        out.append(Roff.text(command.abstract))
        if let discussion = command.discussion { out += Roff.paragraphs(discussion) }
        for positional in command.positionals {
            out.append(".TP")
            out.append(".I \(Roff.escape(positional.name + (positional.isVariadic ? "..." : "")))")
            out.append(Roff.text(positional.help + (positional.isOptional ? " (optional)" : "")))
        }
        for option in command.options { out += Roff.option(option) }
        for flag in command.flags { out += Roff.flag(flag) }
        return out
    }
}

/// Writing roff: every text is escaped so that a backslash, a leading dot or
/// quote, or a hyphen in an option name is printed as written.
enum Roff {
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "\n": out += " "
            default: out.append(character)
            }
        }
        // A line starting with '.' or '\'' would be read as a request.
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }

    static func quoted(_ text: String) -> String {
        "\"" + String(escape(text).flatMap { $0 == "\"" ? Array("\\(dq") : [$0] }) + "\""
    }

    static func text(_ text: String) -> String { escape(text) }

    /// Paragraphs as `help` lays them out: blank lines separate them, and a
    /// paragraph of indented lines (an example) is kept as written.
    static func paragraphs(_ text: String) -> [String] {
        var out: [String] = []
        var paragraph: [Substring] = []
        func flush() {
            guard !paragraph.isEmpty else { return }
            out.append(".PP")
            if paragraph.allSatisfy({ $0.hasPrefix(" ") }) {
                out.append(".nf")
                out += paragraph.map { escape(String($0)) }
                out.append(".fi")
            } else {
                out.append(escape(paragraph.joined(separator: " ")))
            }
            paragraph = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) { flush() } else { paragraph.append(line) }
        }
        flush()
        return out
    }

    static func option(_ option: OptionSpec) -> [String] {
        let short = option.short.map { "\\-\($0), " } ?? ""
        var help = option.help
        if option.isRequired { help += " (required)" }
        if let value = option.defaultDescription { help += " (default: \(value))" }
        return [".TP", ".B \(short)\\-\\-\(escape(option.long)) \\fI\(escape(option.valueName))\\fR", escape(help)]
    }

    static func flag(_ flag: FlagSpec) -> [String] {
        let short = flag.short.map { "\\-\($0), " } ?? ""
        return [".TP", ".B \(short)\\-\\-\(escape(flag.long))", escape(flag.help)]
    }
}
