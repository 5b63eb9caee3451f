extension ProgramSpec {
    /// Mistakes in the spec itself (clashing names, a group command with arguments, two variadic positionals),
    /// one sentence each; empty when the spec is sound.
    ///
    /// A spec is written by the program's authors, not its users, so these are reported for a test to assert
    /// empty rather than checked on every run or turned into crashes.
    public var problems: [String] {
        var problems: [String] = []
        let globalNames = globalOptions.map(\.long) + globalFlags.map(\.long)
        var reserved = [BuiltIn.helpLong]
        if version != nil { reserved.append(BuiltIn.versionLong) }
        problems += nameProblems(globalNames, reserved: reserved, owner: "the global options")
        let globalShorts = (globalOptions.map(\.short) + globalFlags.map(\.short)).compactMap { $0 }
        problems += shortProblems(globalShorts, owner: "the global options")
        if commands.contains(where: { $0.name == BuiltIn.helpCommand }) {
            problems.append("'\(name) help' is built in; a command named 'help' hides it")
        }
        problems += commandProblems(root, path: [], inherited: globalNames + reserved, inheritedShorts: globalShorts)
        return problems
    }

    private func commandProblems(
        _ command: CommandSpec,
        path: [String],
        inherited: [String],
        inheritedShorts: [Character]
    ) -> [String] {
        let owner = "'\(([name] + path).joined(separator: " "))'"
        var problems: [String] = []
        let names = command.options.map(\.long) + command.flags.map(\.long)
        problems += nameProblems(names, reserved: inherited, owner: owner)
        let shorts = (command.options.map(\.short) + command.flags.map(\.short)).compactMap { $0 }
        problems += shortProblems(shorts, owner: owner)
        for short in shorts where inheritedShorts.contains(short) {
            problems.append("\(owner) declares '-\(short)', which a global option already uses")
        }

        let positionalNames = command.positionals.map(\.name)
        for duplicate in duplicates(in: positionalNames) {
            problems.append("\(owner) declares the positional \(duplicate) more than once")
        }
        if command.positionals.filter(\.isVariadic).count > 1 {
            problems.append("\(owner) has more than one variadic positional, so their values cannot be told apart")
        }
        if !command.subcommands.isEmpty && command.requiresSubcommand
            && !(command.positionals.isEmpty && command.options.isEmpty && command.flags.isEmpty)
        {
            problems.append(
                "\(owner) has subcommands and its own arguments; only the subcommand's arguments are kept"
            )
        }
        let subcommandNames = command.subcommands.map(\.name)
        for duplicate in duplicates(in: subcommandNames) {
            problems.append("\(owner) has two subcommands named '\(duplicate)'")
        }
        for subcommand in command.subcommands {
            if subcommand.name.isEmpty || subcommand.name.hasPrefix("-") || subcommand.name.contains(" ") {
                problems.append("\(owner) has a subcommand named '\(subcommand.name)', which cannot be typed as a word")
            }
            problems += commandProblems(
                subcommand,
                path: path + [subcommand.name],
                inherited: inherited,
                inheritedShorts: inheritedShorts
            )
        }
        return problems
    }

    /// Long names must be typeable and unique among everything accepted at one place on the command line.
    private func nameProblems(_ names: [String], reserved: [String], owner: String) -> [String] {
        var problems: [String] = []
        for name in names where name.isEmpty || name.hasPrefix("-") || name.contains("=") || name.contains(" ") {
            problems.append("\(owner) declares '--\(name)', which cannot be typed as one option")
        }
        for duplicate in duplicates(in: names) {
            problems.append("\(owner) declares '--\(duplicate)' more than once")
        }
        for name in names where reserved.contains(name) {
            problems.append("\(owner) declares '--\(name)', which is built in or already a global option")
        }
        return problems
    }

    /// Short names must be unique, and must not be `h` (help), a digit (read as a negative number) or `-`.
    private func shortProblems(_ shorts: [Character], owner: String) -> [String] {
        var problems: [String] = []
        for short in shorts where short == BuiltIn.helpShort || short.isWholeNumber || short == "-" || short == "." {
            problems.append("\(owner) declares '-\(short)', which is reserved")
        }
        for duplicate in duplicates(in: shorts) {
            problems.append("\(owner) declares '-\(duplicate)' more than once")
        }
        return problems
    }

    private func duplicates<Name: Hashable>(in names: [Name]) -> [Name] {
        var seen: Set<Name> = []
        var reported: Set<Name> = []
        var result: [Name] = []
        for name in names where !seen.insert(name).inserted && reported.insert(name).inserted {
            result.append(name)
        }
        return result
    }
}
