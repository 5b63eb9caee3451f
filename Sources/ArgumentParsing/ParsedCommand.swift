/// What parsing decided the user asked for.
///
/// Help and version are outcomes rather than errors or side effects so that parsing stays pure and a CLI
/// decides in one place what to print and with which exit status.
public enum ParseOutcome: Sendable, Hashable {
    /// Run this command.
    case command(ParsedCommand)
    /// Show the help of the command at this path (`[]` for the program); from `-h`/`--help` anywhere or from
    /// `help COMMAND...`.
    case help(path: [String])
    /// Print the program's version.
    case version
}

/// Option values and flags as given, keyed by long name, for one scope (a command's own, or the globals).
///
/// Internal: commands read values through ``ParsedCommand``'s handle-typed accessors, never by a name.
struct ParsedValues: Sendable, Hashable {
    /// Every value given for each option, in order; single-valued options read the last (the last one wins).
    var optionValues: [String: [String]] = [:]
    /// The long names of the flags that were given.
    var flags: Set<String> = []

    mutating func add(_ value: String, for option: String) {
        optionValues[option, default: []].append(value)
    }

    mutating func set(_ flag: String) {
        flags.insert(flag)
    }
}

/// A command the user asked to run, with its arguments sorted out and checked against the spec.
///
/// Command implementations read values with the spec values themselves as handles: a command declares
/// `static let severity = OptionSpec("severity", …)`, lists it in its ``CommandSpec``, and reads
/// `parsed.value(of: Self.severity)`. A misspelled handle does not compile, and a handle the command's spec
/// does not list (nor the program's globals) throws ``UsageError/undeclared(_:context:)`` on every build, so a
/// test that builds every command finds it. Their own checks throw the same ``UsageError``s the parser does,
/// spelled from the handle (``OptionSpec/spelling``), so a message cannot name an option differently.
public struct ParsedCommand: Sendable, Hashable {
    /// The command words (`["templates", "show"]`); the CLI dispatches on this.
    public let path: [String]
    /// Positional values by positional name; a variadic positional may hold several, an absent one is missing.
    let positionalValues: [String: [String]]
    /// The command's own options and flags.
    let commandValues: ParsedValues
    /// Global options and flags, wherever on the command line they were given.
    let globals: ParsedValues
    /// Which command this is, for errors raised while reading values.
    public let context: CommandContext
    /// What the spec declares: the only handles this command may read.
    let declared: DeclaredArguments

    init(
        path: [String],
        positionalValues: [String: [String]],
        commandValues: ParsedValues,
        globals: ParsedValues,
        context: CommandContext,
        declared: DeclaredArguments
    ) {
        self.path = path
        self.positionalValues = positionalValues
        self.commandValues = commandValues
        self.globals = globals
        self.context = context
        self.declared = declared
    }

    // MARK: Positionals

    /// The value of a single positional, or nil when an optional one was left off.
    public func value(of positional: PositionalSpec) throws(UsageError) -> String? {
        try values(of: positional).first
    }

    /// All values of a positional: the list for a variadic one, at most one otherwise.
    public func values(of positional: PositionalSpec) throws(UsageError) -> [String] {
        guard declared.positionals.contains(positional) else {
            throw .undeclared("the positional \(positional.name)", context: context)
        }
        return positionalValues[positional.name] ?? []
    }

    /// The value of a positional this invocation needs even though the spec cannot require it (e.g. `ID`
    /// unless `--issue` is given); a required positional is always there, since the parser checked it.
    public func require(_ positional: PositionalSpec) throws(UsageError) -> String {
        guard let value = try value(of: positional) else { throw missing(positional) }
        return value
    }

    // MARK: Options

    /// The option's value (the last one given), or nil when it was not given.
    public func value(of option: OptionSpec) throws(UsageError) -> String? {
        try values(of: option).last
    }

    /// Every value given for an option, in order (several only for a repeatable one).
    public func values(of option: OptionSpec) throws(UsageError) -> [String] {
        guard declared.options.contains(option) else {
            throw .undeclared("the option \(option.spelling)", context: context)
        }
        return commandValues.optionValues[option.long] ?? globals.optionValues[option.long] ?? []
    }

    /// The value of an option this invocation needs even though the spec cannot require it (e.g. `--template`
    /// unless `--reinspect` is given).
    public func require(_ option: OptionSpec) throws(UsageError) -> String {
        guard let value = try value(of: option) else { throw missing(option) }
        return value
    }

    /// The option's value as a whole number, or nil when it was not given.
    public func integer(of option: OptionSpec) throws(UsageError) -> Int? {
        guard let text = try value(of: option) else { return nil }
        guard let number = Int(text) else {
            throw invalid(option, value: text, reason: "expected a whole number")
        }
        return number
    }

    /// The option's value as a whole number, or `defaultValue` when it was not given.
    public func integer(of option: OptionSpec, default defaultValue: Int) throws(UsageError) -> Int {
        try integer(of: option) ?? defaultValue
    }

    // MARK: Flags

    /// Whether the flag was given.
    public func isSet(_ flag: FlagSpec) throws(UsageError) -> Bool {
        guard declared.flags.contains(flag) else {
            throw .undeclared("the flag \(flag.spelling)", context: context)
        }
        return commandValues.flags.contains(flag.long) || globals.flags.contains(flag.long)
    }

    // MARK: Errors spelled from handles

    /// The error for a value of `option` that cannot be used, naming the option as the user types it.
    public func invalid(_ option: OptionSpec, value: String, reason: String) -> UsageError {
        .invalidValue(option: option.spelling, value: value, reason: reason, context: context)
    }

    /// The error for a value of `positional` that cannot be used, naming the positional as the help does.
    public func invalid(_ positional: PositionalSpec, value: String, reason: String) -> UsageError {
        .invalidValue(option: positional.name, value: value, reason: reason, context: context)
    }

    /// The error for an option this invocation needs but was not given.
    public func missing(_ option: OptionSpec) -> UsageError {
        .missingOption(option.spelling, valueName: option.valueName, context: context)
    }

    /// The error for a positional this invocation needs but was not given.
    public func missing(_ positional: PositionalSpec) -> UsageError {
        .missingPositional(positional.name, context: context)
    }

    /// The error for an option given where it does not belong (e.g. `--template` with `--reinspect`).
    /// `detail` follows the spelling (`"without --watch"`).
    public func unexpected(_ option: OptionSpec, _ detail: String? = nil) -> UsageError {
        .unexpectedArgument([option.spelling, detail].compactMap { $0 }.joined(separator: " "), context: context)
    }

    /// The error for a flag given where it does not belong.
    public func unexpected(_ flag: FlagSpec, _ detail: String? = nil) -> UsageError {
        .unexpectedArgument([flag.spelling, detail].compactMap { $0 }.joined(separator: " "), context: context)
    }
}

/// The arguments a command (with the globals) declares: the handles it may read.
struct DeclaredArguments: Sendable, Hashable {
    var positionals: [PositionalSpec]
    var options: [OptionSpec]
    var flags: [FlagSpec]

    init(command: CommandSpec, program: ProgramSpec) {
        positionals = command.positionals
        options = command.options + program.globalOptions
        flags = command.flags + program.globalFlags
    }
}
