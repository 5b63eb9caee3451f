import ArgumentParsing

/// A `jqc` command: its spec (which the parser and the help both read), how
/// it is built from parsed arguments (pure, no I/O), and how it runs.
protocol RunnableCommand: Sendable {
    /// The command words, e.g. `["templates", "show"]`.
    static var path: [String] { get }
    static var spec: CommandSpec { get }
    init(_ parsed: ParsedCommand) throws(UsageError)
    func run(_ invocation: Invocation) throws
}

/// A command that takes no arguments or options of its own (the global
/// ones are read by `Globals`): built from nothing, whatever was parsed.
protocol CommandWithoutArguments: RunnableCommand {
    init()
}

extension CommandWithoutArguments {
    init(_ parsed: ParsedCommand) throws(UsageError) { self.init() }
}

/// A command whose only input is one required positional (`jqc show ID`,
/// `jqc backup DEST`): built from its value.
protocol CommandWithOneArgument: RunnableCommand {
    /// The positional, as the command's spec lists it.
    static var argument: PositionalSpec { get }
    init(argument: String)
}

extension CommandWithOneArgument {
    init(_ parsed: ParsedCommand) throws(UsageError) { self.init(argument: try parsed.require(Self.argument)) }
}
