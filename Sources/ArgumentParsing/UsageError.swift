/// Which command a usage error is about, so the message can name it and point at its help and usage line.
public struct CommandContext: Sendable, Hashable {
    /// The executable's name (`"jqc"`).
    public var programName: String
    /// The command words (`["templates", "show"]`; empty for the program itself).
    public var path: [String]
    /// The command's synopsis without the `usage:` prefix (`"jqc show ID [--json]"`), on one line.
    public var usage: String

    /// Records a context; the parser builds these, but tests and command implementations may too.
    public init(programName: String, path: [String], usage: String) {
        self.programName = programName
        self.path = path
        self.usage = usage
    }

    /// How the user would type the command (`"jqc flag"`).
    public var commandName: String {
        ([programName] + path).joined(separator: " ")
    }

    /// The sentence that closes every message, telling the user where to read more.
    var helpHint: String {
        "See '\(commandName) --help'."
    }
}

/// A mistake in what the user typed, as opposed to a failure while running a command.
///
/// Typed so a CLI can print these differently (message, usage line, exit status 64) from operational errors,
/// and so tests can assert the exact mistake. Each case carries the ``CommandContext`` it concerns; ``message``
/// says what was wrong and what to do about it.
public enum UsageError: Error, Sendable, Hashable {
    /// A command word that is not a subcommand of the command before it.
    case unknownCommand(String, suggestion: String?, context: CommandContext)
    /// An option (as typed, e.g. `--sevrity`) the command does not accept; the suggestion is spelled with dashes.
    case unknownOption(String, suggestion: String?, context: CommandContext)
    /// An option (long spelling) that was given without its value.
    case missingValue(option: String, valueName: String, context: CommandContext)
    /// A required positional (by name) that was not given.
    case missingPositional(String, context: CommandContext)
    /// A required option (long spelling) that was not given.
    case missingOption(String, valueName: String, context: CommandContext)
    /// A command that only groups other commands was given none of them.
    case missingSubcommand(available: [String], context: CommandContext)
    /// A value beyond what the command's positionals take.
    case unexpectedArgument(String, context: CommandContext)
    /// A flag (long spelling) given a value with `=`, which flags never take.
    case flagGivenValue(flag: String, value: String, context: CommandContext)
    /// A value that was given but cannot be used, with the reason (e.g. "expected a whole number").
    case invalidValue(option: String, value: String, reason: String, context: CommandContext)
    /// A command implementation read an argument (described, e.g. "the option --photo") that its spec does not
    /// declare: a bug in the program, not in what was typed. Thrown on every build, so a test that builds each
    /// command from its spec finds it.
    case undeclared(String, context: CommandContext)

    /// The command the mistake concerns.
    public var context: CommandContext {
        switch self {
        case .unknownCommand(_, _, let context), .unknownOption(_, _, let context),
            .missingValue(_, _, let context), .missingPositional(_, let context),
            .missingOption(_, _, let context), .missingSubcommand(_, let context),
            .unexpectedArgument(_, let context), .flagGivenValue(_, _, let context),
            .invalidValue(_, _, _, let context), .undeclared(_, let context):
            return context
        }
    }

    /// The usage line of the command concerned (without the `usage:` prefix).
    public var usage: String { context.usage }

    /// What went wrong and what to do, in one or two sentences ending with where to find help.
    public var message: String {
        let name = context.commandName
        let hint = context.helpHint
        switch self {
        case .unknownCommand(let word, let suggestion, _):
            if let suggestion {
                return "unknown command '\(word)' for '\(name)'. Did you mean '\(suggestion)'? \(hint)"
            }
            return "unknown command '\(word)' for '\(name)'. \(hint)"
        case .unknownOption(let option, let suggestion, _):
            if let suggestion {
                return "unknown option '\(option)' for '\(name)'. Did you mean '\(suggestion)'? \(hint)"
            }
            return "unknown option '\(option)' for '\(name)'. \(hint)"
        case .missingValue(let option, let valueName, _):
            return "option '\(option)' needs a value: write '\(option) \(valueName)', or '\(option)=\(valueName)' "
                + "when the value starts with '-'. \(hint)"
        case .missingPositional(let positional, _):
            return "missing argument \(positional) for '\(name)'. \(hint)"
        case .missingOption(let option, let valueName, _):
            return "missing required option '\(option) \(valueName)' for '\(name)'. \(hint)"
        case .missingSubcommand(let available, _):
            return "'\(name)' needs a subcommand: \(available.joined(separator: ", ")). \(hint)"
        case .unexpectedArgument(let argument, _):
            return "unexpected argument '\(argument)' for '\(name)'. Remove it, or quote it if it belongs to "
                + "another value. \(hint)"
        case .flagGivenValue(let flag, let value, _):
            return "flag '\(flag)' does not take a value (got '\(value)'); write just '\(flag)'. \(hint)"
        case .invalidValue(let option, let value, let reason, _):
            return "invalid value '\(value)' for '\(option)': \(reason). \(hint)"
        case .undeclared(let argument, _):
            return "'\(name)' reads \(argument), which its spec does not declare. This is a bug in "
                + "\(context.programName), not in what was typed; please report it."
        }
    }
}

extension UsageError: CustomStringConvertible {
    /// The message followed by the usage line, which is what a CLI prints to standard error.
    public var description: String {
        "\(message)\nusage: \(usage)"
    }
}
