import ArgumentParsing
import Testing

/// Reading values by handle: the spec values a command declares are the only keys it can read by, a handle its
/// spec does not list is caught (on every build), and errors about a value name it as the user types it.
@Suite struct HandleTests {
    typealias Flag = SampleProgram.Flag
    typealias Show = SampleProgram.Show

    @Test func aHandleOfAnotherCommandIsUndeclared() throws {
        let parsed = try SampleProgram.command(["show", "7"])
        #expect(throws: UsageError.undeclared("the option --severity", context: parsed.context)) {
            try parsed.value(of: Flag.severity)
        }
        #expect(throws: UsageError.undeclared("the flag --follow-up", context: parsed.context)) {
            try parsed.isSet(SampleProgram.Submit.followUp)
        }
        #expect(throws: UsageError.undeclared("the positional FILE", context: parsed.context)) {
            try parsed.values(of: SampleProgram.Paths.fileArgument)
        }
        #expect(throws: UsageError.self) { try parsed.integer(of: SampleProgram.Log.limit) }
    }

    @Test func aLookalikeHandleIsUndeclared() throws {
        // Same long name, another declaration: it would parse differently, so it is not the declared handle.
        let parsed = try SampleProgram.command(["flag", "1", "-s", "major", "--description", "d"])
        let lookalike = OptionSpec("severity", valueName: "S", help: "How serious.", required: true)
        #expect(throws: UsageError.undeclared("the option --severity", context: parsed.context)) {
            try parsed.value(of: lookalike)
        }
        #expect(try parsed.value(of: Flag.severity) == "major")
    }

    @Test func theMessageSaysItIsAProgramBug() throws {
        let parsed = try SampleProgram.command(["show", "7"])
        let error = UsageError.undeclared("the option --severity", context: parsed.context)
        #expect(
            error.message == "'jqc show' reads the option --severity, which its spec does not declare. "
                + "This is a bug in jqc, not in what was typed; please report it.")
    }

    /// Every command that runs, with the fewest arguments its spec accepts.
    static let leaves: [[String]] = {
        func walk(_ command: CommandSpec, _ path: [String]) -> [[String]] {
            command.subcommands.isEmpty ? [path] : command.subcommands.flatMap { walk($0, path + [$0.name]) }
        }
        return SampleProgram.spec.commands.flatMap { walk($0, [$0.name]) }
    }()

    static func minimalLine(_ command: CommandSpec, _ path: [String]) -> [String] {
        let positionals = command.positionals.filter { !$0.isOptional }.map { _ in "x" }
        let options = command.options.filter(\.isRequired).flatMap { [$0.spelling, "x"] }
        return path + positionals + options
    }

    /// Walks every command: what its spec lists (and the globals) reads, any other command's handle does not.
    @Test(arguments: leaves)
    func everyCommandReadsExactlyWhatItsSpecDeclares(_ path: [String]) throws {
        let command = try SampleProgram.spec.command(at: path)
        let parsed = try SampleProgram.command(Self.minimalLine(command, path))
        for positional in command.positionals { _ = try parsed.values(of: positional) }
        for option in command.options + SampleProgram.spec.globalOptions { _ = try parsed.values(of: option) }
        for flag in command.flags { _ = try parsed.isSet(flag) }
        for other in Self.leaves where other != path {
            let spec = try SampleProgram.spec.command(at: other)
            for option in spec.options where !command.options.contains(option) {
                #expect(throws: UsageError.undeclared("the option \(option.spelling)", context: parsed.context)) {
                    try parsed.value(of: option)
                }
            }
            for flag in spec.flags where !command.flags.contains(flag) {
                #expect(throws: UsageError.undeclared("the flag \(flag.spelling)", context: parsed.context)) {
                    try parsed.isSet(flag)
                }
            }
            for positional in spec.positionals where !command.positionals.contains(positional) {
                #expect(throws: UsageError.undeclared("the positional \(positional.name)", context: parsed.context)) {
                    try parsed.value(of: positional)
                }
            }
        }
    }

    @Test func errorsAreSpelledFromTheHandle() throws {
        let parsed = try SampleProgram.command(["flag", "1", "-s", "major", "--description", "d"])
        #expect(
            parsed.invalid(Flag.severity, value: "huge", reason: "expected minor, major or critical")
                == .invalidValue(
                    option: "--severity", value: "huge", reason: "expected minor, major or critical",
                    context: parsed.context))
        #expect(
            parsed.invalid(Flag.idArgument, value: "?", reason: "expected an id")
                == .invalidValue(option: "ID", value: "?", reason: "expected an id", context: parsed.context))
        #expect(parsed.missing(Flag.photo) == .missingOption("--photo", valueName: "FILE", context: parsed.context))
        #expect(parsed.missing(Flag.idArgument) == .missingPositional("ID", context: parsed.context))
        #expect(
            parsed.unexpected(Flag.photo, "without a photo")
                == .unexpectedArgument("--photo without a photo", context: parsed.context))
        #expect(parsed.unexpected(Show.json) == .unexpectedArgument("--json", context: parsed.context))
    }
}
