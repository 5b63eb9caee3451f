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
public struct ParsedValues: Sendable, Hashable {
    /// Every value given for each option, in order; single-valued options read the last (the last one wins).
    public internal(set) var optionValues: [String: [String]]
    /// The long names of the flags that were given.
    public internal(set) var flags: Set<String>

    /// No values: what a command starts with before the user's arguments are read.
    public init(optionValues: [String: [String]] = [:], flags: Set<String> = []) {
        self.optionValues = optionValues
        self.flags = flags
    }

    mutating func add(_ value: String, for option: String) {
        optionValues[option, default: []].append(value)
    }

    mutating func set(_ flag: String) {
        flags.insert(flag)
    }
}

/// A command the user asked to run, with its arguments sorted by name, checked against the spec.
///
/// Command implementations read values through the accessors below instead of looking at argv, so they never
/// repeat the parsing rules and their own checks throw the same ``UsageError``s the parser does. Options are
/// looked up among the command's own first and then among the globals, so `option("ledger")` works anywhere.
public struct ParsedCommand: Sendable, Hashable {
    /// The command words (`["templates", "show"]`); the CLI dispatches on this.
    public let path: [String]
    /// Positional values by positional name; a variadic positional may hold several, an absent one is missing.
    public let positionalValues: [String: [String]]
    /// The command's own options and flags.
    public let commandValues: ParsedValues
    /// Global options and flags, wherever on the command line they were given.
    public let globals: ParsedValues
    /// Which command this is, for errors raised while reading values.
    public let context: CommandContext
    /// What the spec declares, to catch a misspelled name in a command implementation during development.
    let declared: DeclaredNames

    init(
        path: [String],
        positionalValues: [String: [String]],
        commandValues: ParsedValues,
        globals: ParsedValues,
        context: CommandContext,
        declared: DeclaredNames
    ) {
        self.path = path
        self.positionalValues = positionalValues
        self.commandValues = commandValues
        self.globals = globals
        self.context = context
        self.declared = declared
    }

    /// The value of a single positional, or nil when an optional one was left off.
    public func positional(_ name: String) -> String? {
        positionals(name).first
    }

    /// All values of a positional: the list for a variadic one, at most one otherwise.
    public func positionals(_ name: String) -> [String] {
        assert(declared.positionals.contains(name), "'\(name)' is not a positional of '\(context.commandName)'")
        return positionalValues[name] ?? []
    }

    /// The value of a positional, or else of an option, that this invocation needs even though the spec cannot
    /// require it (e.g. `ID` unless `--issue` is given).
    public func require(_ name: String) throws(UsageError) -> String {
        if declared.positionals.contains(name) {
            guard let value = positional(name) else { throw .missingPositional(name, context: context) }
            return value
        }
        guard let value = option(name) else {
            throw .missingOption("--\(name)", valueName: declared.valueNames[name] ?? "VALUE", context: context)
        }
        return value
    }

    /// The option's value (the last one given), or nil when it was not given.
    public func option(_ name: String) -> String? {
        options(name).last
    }

    /// Every value given for a repeatable option, in order.
    public func options(_ name: String) -> [String] {
        assert(declared.valueNames[name] != nil, "'--\(name)' is not an option of '\(context.commandName)'")
        return commandValues.optionValues[name] ?? globals.optionValues[name] ?? []
    }

    /// Whether the flag was given.
    public func flag(_ name: String) -> Bool {
        assert(declared.flags.contains(name), "'--\(name)' is not a flag of '\(context.commandName)'")
        return commandValues.flags.contains(name) || globals.flags.contains(name)
    }

    /// The option's value as a whole number, or nil when it was not given.
    public func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = option(name) else { return nil }
        guard let number = Int(text) else {
            throw .invalidValue(option: "--\(name)", value: text, reason: "expected a whole number", context: context)
        }
        return number
    }

    /// The option's value as a whole number, or `defaultValue` when it was not given.
    public func integer(_ name: String, default defaultValue: Int) throws(UsageError) -> Int {
        try integer(name) ?? defaultValue
    }
}

/// The names a command (with the globals) declares, by kind.
struct DeclaredNames: Sendable, Hashable {
    var positionals: Set<String> = []
    /// Option long name to value name, which doubles as the set of option names.
    var valueNames: [String: String] = [:]
    var flags: Set<String> = []

    init(command: CommandSpec, program: ProgramSpec) {
        positionals = Set(command.positionals.map(\.name))
        for option in program.globalOptions + command.options {
            valueNames[option.long] = option.valueName
        }
        flags = Set((program.globalFlags + command.flags).map(\.long))
    }
}
