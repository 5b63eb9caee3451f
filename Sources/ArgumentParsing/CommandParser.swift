extension ProgramSpec {
    /// Decides what the user asked for. Pure: reads nothing but `arguments` (argv without the program name)
    /// and the spec, and prints nothing.
    ///
    /// `-h`/`--help` anywhere before `--` asks for the help of the deepest command named, even if the rest of
    /// the line has mistakes (except a mistyped command word, which is reported so the user learns the right
    /// one). `--version` likewise wins over mistakes. Global options are accepted before and after command
    /// words.
    public func parse(_ arguments: [String]) throws(UsageError) -> ParseOutcome {
        let tokens = ArgumentToken.split(arguments)
        let wantsHelp = tokens.prefix { $0 != .terminator }.contains(where: Self.asksForHelp)
        let wantsVersion =
            version != nil
            && tokens.prefix { $0 != .terminator }.contains { token in
                if case .long(BuiltIn.versionLong, _) = token { return true }
                return false
            }
        var walk = CommandWalk(program: self, tokens: tokens)
        do throws(UsageError) {
            let outcome = try walk.run()
            if wantsHelp { return .help(path: walk.path) }
            if wantsVersion { return .version }
            return outcome
        } catch {
            if wantsHelp {
                if case .unknownCommand = error { throw error }
                return .help(path: walk.path)
            }
            if wantsVersion { return .version }
            throw error
        }
    }

    private static func asksForHelp(_ token: ArgumentToken) -> Bool {
        switch token {
        case .long(let name, _): return name == BuiltIn.helpLong
        // Options never sit inside a bundle, so an `h` in one is always the help flag.
        case .short(let letters): return letters.contains(BuiltIn.helpShort)
        case .value, .terminator: return false
        }
    }
}

/// The state of one left-to-right pass over the tokens: which command has been reached and what was given.
private struct CommandWalk {
    let program: ProgramSpec
    let tokens: [ArgumentToken]
    private var index = 0
    /// The command words read so far; kept readable after an error so help can be shown for that command.
    private(set) var path: [String] = []
    private var command: CommandSpec
    private var positionalValues: [String] = []
    private var commandValues = ParsedValues()
    private var globalValues = ParsedValues()
    private var afterTerminator = false
    /// After the `help` command word, command words name the help topic instead of a command to run.
    private var namingHelpTopic = false

    init(program: ProgramSpec, tokens: [ArgumentToken]) {
        self.program = program
        self.tokens = tokens
        self.command = program.root
    }

    private var context: CommandContext {
        program.context(for: path, command: command)
    }

    mutating func run() throws(UsageError) -> ParseOutcome {
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            switch token {
            case .terminator:
                afterTerminator = true
            case .value(let value):
                try take(value)
            case .long(let name, let value):
                try takeLong(name, attached: value)
            case .short(let letters):
                try takeShort(letters)
            }
        }
        if namingHelpTopic { return .help(path: path) }
        return .command(try finish())
    }

    private mutating func take(_ value: String) throws(UsageError) {
        let isGroup = !command.subcommands.isEmpty
        if !isGroup && !namingHelpTopic {
            positionalValues.append(value)
            return
        }
        // A group takes no values of its own, a help topic is made of command words only, and after `--`
        // nothing is a command word.
        if !isGroup || afterTerminator {
            throw .unexpectedArgument(value, context: context)
        }
        if let subcommand = command.subcommand(named: value) {
            path.append(value)
            command = subcommand
            return
        }
        if path.isEmpty && value == BuiltIn.helpCommand {
            // `help help` is as good as `help`.
            namingHelpTopic = true
            return
        }
        throw .unknownCommand(
            value,
            suggestion: program.suggestedCommand(for: value, in: command, atTop: path.isEmpty),
            context: context
        )
    }

    private mutating func takeLong(_ name: String, attached: String?) throws(UsageError) {
        if let option = command.options.first(where: { $0.long == name }) {
            commandValues.add(try value(for: option, attached: attached), for: option.long)
        } else if let option = program.globalOptions.first(where: { $0.long == name }) {
            globalValues.add(try value(for: option, attached: attached), for: option.long)
        } else if let flag = command.flags.first(where: { $0.long == name }) {
            try checkNoValue(flag, attached: attached)
            commandValues.set(flag.long)
        } else if let flag = program.globalFlags.first(where: { $0.long == name }) {
            try checkNoValue(flag, attached: attached)
            globalValues.set(flag.long)
        } else if name == BuiltIn.helpLong || (name == BuiltIn.versionLong && program.version != nil) {
            // Acted on by `parse` before the walk; nothing to record.
        } else {
            throw .unknownOption(
                "--\(name)",
                suggestion: suggestedOption(for: name),
                context: context
            )
        }
    }

    private mutating func takeShort(_ letters: [Character]) throws(UsageError) {
        for (offset, letter) in letters.enumerated() {
            let isLast = offset == letters.count - 1
            if let option = command.options.first(where: { $0.short == letter }), isLast {
                commandValues.add(try value(for: option, attached: nil), for: option.long)
            } else if let option = program.globalOptions.first(where: { $0.short == letter }), isLast {
                globalValues.add(try value(for: option, attached: nil), for: option.long)
            } else if let flag = command.flags.first(where: { $0.short == letter }) {
                commandValues.set(flag.long)
            } else if let flag = program.globalFlags.first(where: { $0.short == letter }) {
                globalValues.set(flag.long)
            } else if letter == BuiltIn.helpShort {
                // Acted on by `parse` before the walk.
            } else {
                // Either an unknown letter or an option inside a bundle, where its value would be ambiguous.
                // A bundle is often a long name typed with one dash (`-severity`), so suggest from long names.
                let typed = "-" + String(letters)
                let suggestion = letters.count > 1 ? suggestedOption(for: String(letters)) : nil
                throw .unknownOption(typed, suggestion: suggestion, context: context)
            }
        }
    }

    /// The option's value: attached with `=`, or else the next token if it is a plain value. A next token that
    /// looks like an option is not taken, since the user more likely forgot the value than meant `--x --y`.
    /// A missing value is reported under the long name even when `-x` was typed, because only the long
    /// spelling can carry a value with `=`.
    private mutating func value(for option: OptionSpec, attached: String?) throws(UsageError) -> String {
        if let attached { return attached }
        if index < tokens.count, case .value(let next) = tokens[index], !afterTerminator {
            index += 1
            return next
        }
        throw .missingValue(option: "--\(option.long)", valueName: option.valueName, context: context)
    }

    private func checkNoValue(_ flag: FlagSpec, attached: String?) throws(UsageError) {
        if let attached {
            throw .flagGivenValue(flag: "--\(flag.long)", value: attached, context: context)
        }
    }

    private func suggestedOption(for name: String) -> String? {
        var names = (command.options + program.globalOptions).map(\.long)
        names += (command.flags + program.globalFlags).map(\.long)
        names.append(BuiltIn.helpLong)
        if program.version != nil { names.append(BuiltIn.versionLong) }
        return Suggestion.closest(to: name, among: names).map { "--" + $0 }
    }

    private func finish() throws(UsageError) -> ParsedCommand {
        if !command.subcommands.isEmpty && command.requiresSubcommand {
            throw .missingSubcommand(available: command.visibleSubcommands.map(\.name), context: context)
        }
        let assigned = try assignPositionals()
        for option in command.options where option.isRequired && commandValues.optionValues[option.long] == nil {
            throw .missingOption("--\(option.long)", valueName: option.valueName, context: context)
        }
        for option in program.globalOptions where option.isRequired && globalValues.optionValues[option.long] == nil {
            throw .missingOption("--\(option.long)", valueName: option.valueName, context: context)
        }
        return ParsedCommand(
            path: path,
            positionalValues: assigned,
            commandValues: commandValues,
            globals: globalValues,
            context: context,
            declared: DeclaredArguments(command: command, program: program)
        )
    }

    /// Hands the values to the positionals in order: each required one gets one value, then spare values fill
    /// optional ones from the left, and a variadic one takes whatever is still spare.
    private func assignPositionals() throws(UsageError) -> [String: [String]] {
        let specs = command.positionals
        let requiredCount = specs.filter { !$0.isOptional }.count
        if positionalValues.count < requiredCount {
            // The values fill required slots in order, so the first unfilled one is the one to report.
            let missing = specs.filter { !$0.isOptional }[positionalValues.count]
            throw .missingPositional(missing.name, context: context)
        }
        var spare = positionalValues.count - requiredCount
        var counts: [Int] = []
        for spec in specs where !spec.isVariadic {
            if !spec.isOptional {
                counts.append(1)
            } else if spare > 0 {
                counts.append(1)
                spare -= 1
            } else {
                counts.append(0)
            }
        }
        // A variadic positional, wherever it stands, gets the values the others left over.
        var assigned: [String: [String]] = [:]
        var next = 0
        var fixedIndex = 0
        for spec in specs {
            var count: Int
            if spec.isVariadic {
                count = (spec.isOptional ? 0 : 1) + spare
                spare = 0
            } else {
                count = counts[fixedIndex]
                fixedIndex += 1
            }
            if count > 0 {
                assigned[spec.name] = Array(positionalValues[next..<next + count])
                next += count
            }
        }
        if next < positionalValues.count {
            throw .unexpectedArgument(positionalValues[next], context: context)
        }
        return assigned
    }
}
