/// One positional argument of a command.
///
/// Declared as data, not parsed ad hoc, so that the parser, the usage line and the help text all read the same
/// description and cannot disagree about what a command accepts. The value is also the handle a command reads
/// the argument by (`parsed.value(of: Self.id)`), so a command declares it once as a constant.
public struct PositionalSpec: Sendable, Hashable {
    /// Shown in usage and help (`"ID"`).
    public var name: String
    /// One sentence for the ARGUMENTS section of the help.
    public var help: String
    /// An optional positional may be left off. When a command has more optional slots than spare values, the
    /// earlier optional slots are filled first, which is what lets `[ID] [FIELD] FILE` accept just `FILE`.
    public var isOptional: Bool
    /// A variadic positional takes every value that no other positional needs, so a command can accept a list.
    public var isVariadic: Bool

    /// Declares a positional; it is required and single unless `optional` or `variadic` say otherwise.
    public init(_ name: String, help: String, optional: Bool = false, variadic: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
        self.isVariadic = variadic
    }
}

/// A named option that takes a value (`--severity major`, `--severity=major`, `-s major`).
///
/// The value is the handle a command reads the option by (`parsed.value(of: Self.severity)`), whichever spelling
/// the user typed; a command declares it once as a constant and lists it in its ``CommandSpec``.
public struct OptionSpec: Sendable, Hashable {
    /// The name after `--`.
    public var long: String
    /// A one-letter alias after a single `-`, for options typed often.
    public var short: Character?
    /// The placeholder shown in usage and help (`--severity S`), telling the user what kind of value to give.
    public var valueName: String
    /// One sentence for the OPTIONS section of the help.
    public var help: String
    /// A required option is reported as missing by the parser, so command implementations need not check it.
    public var isRequired: Bool
    /// A repeatable option keeps every value given (`--photo a.jpg --photo b.jpg`); otherwise the last one wins.
    public var isRepeatable: Bool
    /// What the command does when the option is left off, shown in help; the parser itself never invents values.
    public var defaultDescription: String?

    /// Declares an option; it is optional, single-valued and without a documented default unless told otherwise.
    public init(
        _ long: String,
        short: Character? = nil,
        valueName: String,
        help: String,
        required: Bool = false,
        repeatable: Bool = false,
        defaultDescription: String? = nil
    ) {
        self.long = long
        self.short = short
        self.valueName = valueName
        self.help = help
        self.isRequired = required
        self.isRepeatable = repeatable
        self.defaultDescription = defaultDescription
    }

    /// How the user types it (`--severity`), which is how every message names it.
    public var spelling: String { "--" + long }
}

/// A boolean switch (`--json`, `-f`) that is either present or absent and never takes a value.
///
/// Kept apart from ``OptionSpec`` so the parser can tell `--json value` (a flag followed by a positional) from
/// `--since value` (an option and its value) without guessing. Like an option, the value is the handle the
/// command reads it by (`parsed.isSet(Self.json)`).
public struct FlagSpec: Sendable, Hashable {
    /// The name after `--`.
    public var long: String
    /// A one-letter alias; one-letter flags may be bundled (`-ab`).
    public var short: Character?
    /// One sentence for the OPTIONS section of the help.
    public var help: String

    /// Declares a flag.
    public init(_ long: String, short: Character? = nil, help: String) {
        self.long = long
        self.short = short
        self.help = help
    }

    /// How the user types it (`--json`), which is how every message names it.
    public var spelling: String { "--" + long }
}

/// Everything the parser and the help need to know about one command: what it is called, what it takes, and
/// where it is listed.
///
/// A command either runs (it has positionals, options and flags) or groups other commands (it has
/// `subcommands`); ``ProgramSpec/problems`` reports a spec that mixes the two, because values given to a group
/// would never reach the command that runs.
public struct CommandSpec: Sendable, Hashable {
    /// The word the user types (`"flag"`), and the key in ``ParsedCommand/path``.
    public var name: String
    /// One line shown in command lists and under the usage line.
    public var abstract: String
    /// Longer help shown only on the command's own help page. Paragraphs are separated by blank lines and
    /// re-wrapped; a paragraph whose lines all start with a space (an example) is kept as written.
    public var discussion: String?
    /// The heading the command is listed under in its parent's help (`"Inspecting"`), so that a long list of
    /// commands reads as a few short ones.
    public var group: String?
    /// Positional arguments in the order they are given.
    public var positionals: [PositionalSpec]
    /// Options that take a value.
    public var options: [OptionSpec]
    /// Options that are on or off.
    public var flags: [FlagSpec]
    /// Commands under this one (`templates show`).
    public var subcommands: [CommandSpec]
    /// A hidden command still runs when typed exactly but is left out of help and suggestions, for commands
    /// meant for scripts or debugging.
    public var isHidden: Bool
    /// Whether the command must be followed by one of its subcommands. False
    /// for a command that also runs by itself (`jqc templates` lists, `jqc
    /// templates show ID` draws one).
    public var requiresSubcommand: Bool = true

    /// Declares a command. Most commands need only a few of the parameters, so all but the name and abstract
    /// have defaults.
    public init(
        _ name: String,
        abstract: String,
        discussion: String? = nil,
        group: String? = nil,
        positionals: [PositionalSpec] = [],
        options: [OptionSpec] = [],
        flags: [FlagSpec] = [],
        subcommands: [CommandSpec] = [],
        hidden: Bool = false
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.group = group
        self.positionals = positionals
        self.options = options
        self.flags = flags
        self.subcommands = subcommands
        self.isHidden = hidden
    }

    /// The subcommand the user named, hidden ones included since typing a hidden name exactly is allowed.
    func subcommand(named word: String) -> CommandSpec? {
        subcommands.first { $0.name == word }
    }

    /// Subcommands the help and suggestions may mention.
    var visibleSubcommands: [CommandSpec] {
        subcommands.filter { !$0.isHidden }
    }
}

/// The whole command line of a program: its commands, the options accepted anywhere, and its version.
///
/// Global options live here rather than on each command so they are declared once and cannot be forgotten on
/// a new command. `--help`/`-h` and (when `version` is set) `--version` are built in, as is the `help` command.
public struct ProgramSpec: Sendable, Hashable {
    /// The executable's name, used in usage lines and messages (`"jqc"`).
    public var name: String
    /// One line shown at the top of the program's help.
    public var abstract: String
    /// Longer text for the program's help, formatted like ``CommandSpec/discussion``.
    public var discussion: String?
    /// The version printed for `--version`; when nil, `--version` is an unknown option.
    public var version: String?
    /// Options accepted before or after any command word.
    public var globalOptions: [OptionSpec]
    /// Flags accepted before or after any command word.
    public var globalFlags: [FlagSpec]
    /// The top-level commands.
    public var commands: [CommandSpec]

    /// Declares a program.
    public init(
        _ name: String,
        abstract: String,
        discussion: String? = nil,
        version: String? = nil,
        globalOptions: [OptionSpec] = [],
        globalFlags: [FlagSpec] = [],
        commands: [CommandSpec]
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.globalOptions = globalOptions
        self.globalFlags = globalFlags
        self.commands = commands
    }

    /// The program seen as a command whose subcommands are the top-level commands, so walking a path needs no
    /// special case for the top.
    var root: CommandSpec {
        CommandSpec(name, abstract: abstract, discussion: discussion, subcommands: commands)
    }

    /// The command at `path` (`[]` is the program itself), or the error a user would get for typing that path.
    public func command(at path: [String]) throws(UsageError) -> CommandSpec {
        var command = root
        for (depth, word) in path.enumerated() {
            guard let next = command.subcommand(named: word) else {
                let parentPath = Array(path.prefix(depth))
                throw UsageError.unknownCommand(
                    word,
                    suggestion: suggestedCommand(for: word, in: command, atTop: parentPath.isEmpty),
                    context: context(for: parentPath, command: command)
                )
            }
            command = next
        }
        return command
    }

    /// What an error about the command at `path` needs to tell the user where to look.
    func context(for path: [String], command: CommandSpec) -> CommandContext {
        CommandContext(programName: name, path: path, usage: usageLine(for: command, path: path))
    }

    /// The closest visible command name to a mistyped one; at the top the built-in `help` counts too.
    func suggestedCommand(for word: String, in command: CommandSpec, atTop: Bool) -> String? {
        var names = command.visibleSubcommands.map(\.name)
        if atTop && command.subcommand(named: BuiltIn.helpCommand) == nil {
            names.append(BuiltIn.helpCommand)
        }
        return Suggestion.closest(to: word, among: names)
    }
}

/// Names the parser reserves, kept in one place so parsing, help and spec checks agree on them.
enum BuiltIn {
    static let helpCommand = "help"
    static let helpLong = "help"
    static let helpShort: Character = "h"
    static let versionLong = "version"
}
