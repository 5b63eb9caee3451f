import ArgumentParsing
import Testing

@Suite struct CommandParserTests {
    typealias Flag = SampleProgram.Flag
    typealias Log = SampleProgram.Log
    typealias Photo = SampleProgram.Photo
    typealias Paths = SampleProgram.Paths
    typealias Rebuild = SampleProgram.Rebuild
    typealias SetField = SampleProgram.SetField
    typealias Show = SampleProgram.Show
    typealias Submit = SampleProgram.Submit
    typealias TemplatesShow = SampleProgram.TemplatesShow

    @Test func sampleSpecHasNoProblems() {
        #expect(SampleProgram.spec.problems == [])
    }

    @Test func readsPositionalsOptionsAndFlags() throws {
        let parsed = try SampleProgram.command(["flag", "42", "--severity", "major", "--description=Blocked exit"])
        #expect(parsed.path == ["flag"])
        #expect(try parsed.value(of: Flag.idArgument) == "42")
        #expect(try parsed.value(of: Flag.severity) == "major")
        #expect(try parsed.value(of: Flag.description) == "Blocked exit")
        #expect(try parsed.values(of: Flag.photo) == [])
        #expect(try parsed.value(of: Flag.photo) == nil)
    }

    @Test(arguments: [
        ["flag", "42", "-s", "major", "--description", "x"],
        ["flag", "-s", "major", "42", "--description", "x"],
        ["flag", "--severity=major", "--description", "x", "42"],
        ["flag", "--description", "x", "--severity", "minor", "--severity", "major", "42"],
    ])
    func optionsMayComeInAnyOrderAndLastWins(_ arguments: [String]) throws {
        let parsed = try SampleProgram.command(arguments)
        #expect(try parsed.value(of: Flag.idArgument) == "42")
        #expect(try parsed.value(of: Flag.severity) == "major")
        #expect(try parsed.value(of: Flag.description) == "x")
    }

    @Test func repeatableOptionKeepsEveryValueInOrder() throws {
        let parsed = try SampleProgram.command([
            "flag", "1", "-s", "minor", "--description", "d", "--photo", "a.jpg", "--photo=b.jpg", "--photo", "-",
        ])
        #expect(try parsed.values(of: Flag.photo) == ["a.jpg", "b.jpg", "-"])
        #expect(try parsed.value(of: Flag.photo) == "-")
    }

    @Test func valueStartingWithDashNeedsEquals() throws {
        let parsed = try SampleProgram.command(["log", "--since=-3d", "--until", "-1"])
        #expect(try parsed.value(of: Log.since) == "-3d")
        #expect(try parsed.value(of: Log.until) == "-1", "negative numbers are values")
        let error = try SampleProgram.usageError(["log", "--since", "-x"])
        #expect(error == .missingValue(option: "--since", valueName: "X", context: error.context))
    }

    @Test func loneDashIsAPositionalValue() throws {
        let parsed = try SampleProgram.command(["photo", "--issue", "I-9", "-"])
        #expect(try parsed.value(of: Photo.fileArgument) == "-")
        #expect(try parsed.value(of: Photo.idArgument) == nil)
        #expect(try parsed.value(of: Photo.issue) == "I-9")
    }

    @Test func optionalPositionalsBeforeARequiredOneFillFromTheLeft() throws {
        let one = try SampleProgram.command(["photo", "a.jpg"])
        #expect(try one.value(of: Photo.fileArgument) == "a.jpg")
        #expect(try one.value(of: Photo.idArgument) == nil && one.value(of: Photo.fieldArgument) == nil)
        let three = try SampleProgram.command(["photo", "42", "exits", "a.jpg"])
        let values = try [Photo.idArgument, Photo.fieldArgument, Photo.fileArgument].map { try three.value(of: $0) }
        #expect(values == ["42", "exits", "a.jpg"])
        #expect(try three.require(Photo.fieldArgument) == "exits")
        let two = try SampleProgram.command(["photo", "42", "a.jpg"])
        #expect(try two.value(of: Photo.idArgument) == "42" && two.value(of: Photo.fieldArgument) == nil)
    }

    @Test func optionalTrailingPositional() throws {
        #expect(try SampleProgram.command(["rebuild"]).value(of: Rebuild.projectionArgument) == nil)
        #expect(try SampleProgram.command(["rebuild", "issues"]).value(of: Rebuild.projectionArgument) == "issues")
    }

    @Test func variadicPositionalTakesWhatTheOthersLeave() throws {
        let parsed = try SampleProgram.command(["paths", "a", "b", "c", "dest"])
        #expect(try parsed.values(of: Paths.fileArgument) == ["a", "b", "c"])
        #expect(try parsed.value(of: Paths.destinationArgument) == "dest")
        let error = try SampleProgram.usageError(["paths", "dest"])
        #expect(error == .missingPositional("DEST", context: error.context))
    }

    @Test func terminatorMakesEverythingAfterItPositional() throws {
        let parsed = try SampleProgram.command(["set", "42", "--", "--notes", "-h"])
        #expect(try parsed.value(of: SetField.fieldArgument) == "--notes")
        #expect(try parsed.value(of: SetField.valueArgument) == "-h")
        let option = try SampleProgram.usageError(["flag", "1", "--description", "--", "x"])
        #expect(option == .missingValue(option: "--description", valueName: "TEXT", context: option.context))
    }

    @Test func terminatorDoesNotTurnValuesIntoCommandWords() throws {
        let error = try SampleProgram.usageError(["--", "show", "1"])
        #expect(error == .unexpectedArgument("show", context: error.context))
        #expect(error.context.path == [])
    }

    @Test(arguments: [
        ["--ledger", "/tmp/l", "--as", "ana", "show", "7"],
        ["show", "7", "--ledger", "/tmp/l", "--as", "ana"],
        ["--ledger=/tmp/l", "show", "--as=ana", "7"],
        ["--ledger", "/tmp/other", "show", "7", "--ledger", "/tmp/l", "--as", "ana"],
    ])
    func globalsBeforeAndAfterTheCommand(_ arguments: [String]) throws {
        let parsed = try SampleProgram.command(arguments)
        #expect(parsed.path == ["show"])
        #expect(try parsed.value(of: Show.idArgument) == "7")
        #expect(try parsed.value(of: SampleProgram.ledger) == "/tmp/l")
        #expect(try parsed.values(of: SampleProgram.actingAs) == ["ana"])
    }

    @Test func globalsWorkUnderNestedSubcommands() throws {
        let parsed = try SampleProgram.command(["--as", "ana", "templates", "--ledger", "l", "show", "fire"])
        #expect(parsed.path == ["templates", "show"])
        #expect(try parsed.value(of: TemplatesShow.idArgument) == "fire")
        #expect(try parsed.value(of: SampleProgram.actingAs) == "ana")
        #expect(try parsed.value(of: SampleProgram.ledger) == "l")
    }

    @Test func hiddenCommandsRunWhenTypedExactly() throws {
        #expect(try SampleProgram.command(["templates", "dump"]).path == ["templates", "dump"])
        #expect(try SampleProgram.command(["debug-dump"]).path == ["debug-dump"])
    }

    @Test(arguments: [
        (["show", "1", "--json"], true, false),
        (["show", "1", "-j"], true, false),
        (["show", "1"], false, false),
        (["submit", "1", "-fq"], true, true),
        (["submit", "1", "-q"], false, true),
        (["submit", "-qf", "1"], true, true),
    ])
    func flagsAndBundles(_ arguments: [String], _ first: Bool, _ second: Bool) throws {
        let parsed = try SampleProgram.command(arguments)
        if parsed.path == ["show"] {
            #expect(try parsed.isSet(Show.json) == first)
        } else {
            #expect(try parsed.isSet(Submit.followUp) == first)
            #expect(try parsed.isSet(Submit.quiet) == second)
        }
    }

    @Test func requireReadsPositionalsAndOptions() throws {
        let parsed = try SampleProgram.command(["photo", "a.jpg"])
        #expect(try parsed.require(Photo.fileArgument) == "a.jpg")
        #expect(throws: UsageError.missingPositional("ID", context: parsed.context)) {
            try parsed.require(Photo.idArgument)
        }
        #expect(throws: UsageError.missingOption("--issue", valueName: "ISSUE", context: parsed.context)) {
            try parsed.require(Photo.issue)
        }
    }

    @Test(arguments: [
        (["log"], 50),
        (["log", "--limit", "7"], 7),
        (["log", "-n", "12"], 12),
        (["log", "--limit=0"], 0),
    ])
    func integerOptions(_ arguments: [String], _ expected: Int) throws {
        #expect(try SampleProgram.command(arguments).integer(of: Log.limit, default: 50) == expected)
    }

    @Test func integerOptionRejectsNonNumbers() throws {
        let parsed = try SampleProgram.command(["log", "--limit", "ten"])
        #expect(throws: UsageError.self) { try parsed.integer(of: Log.limit, default: 50) }
        do {
            _ = try parsed.integer(of: Log.limit, default: 50)
        } catch {
            #expect(
                error
                    == .invalidValue(
                        option: "--limit", value: "ten", reason: "expected a whole number", context: parsed.context))
            #expect(error.message.contains("'--limit'"))
            #expect(error.message.contains("'ten'"))
        }
        #expect(try SampleProgram.command(["log"]).integer(of: Log.limit) == nil)
    }

    // MARK: - Help and version

    @Test(
        arguments: [
            (["-h"], []),
            (["--help"], []),
            (["help"], []),
            (["help", "help"], []),
            (["flag", "-h"], ["flag"]),
            (["flag", "--help"], ["flag"]),
            (["-h", "flag"], ["flag"]),
            (["help", "flag"], ["flag"]),
            (["show", "1", "-jh"], ["show"]),
            (["templates", "show", "--help"], ["templates", "show"]),
            (["help", "templates", "show"], ["templates", "show"]),
            (["templates", "-h"], ["templates"]),
            (["--ledger", "x", "help", "sync", "retry"], ["sync", "retry"]),
            (["flag", "--sevrity", "x", "-h"], ["flag"]),
            (["flag", "--severity", "-h"], ["flag"]),
        ] as [([String], [String])])
    func helpOutcomes(_ arguments: [String], _ path: [String]) throws {
        #expect(try SampleProgram.spec.parse(arguments) == .help(path: path))
    }

    @Test func bareProgramNameIsAMissingSubcommand() throws {
        // The CLI is expected to print the top-level help for this one.
        let error = try SampleProgram.usageError([])
        let visible = SampleProgram.spec.commands.filter { !$0.isHidden }.map(\.name)
        #expect(error == .missingSubcommand(available: visible, context: error.context))
        #expect(!visible.contains("debug-dump"))
    }

    @Test func helpAfterTerminatorIsAValue() throws {
        let parsed = try SampleProgram.command(["show", "--", "-h"])
        #expect(try parsed.value(of: Show.idArgument) == "-h")
    }

    @Test func helpDoesNotHideAMistypedCommand() throws {
        let error = try SampleProgram.usageError(["flg", "--help"])
        #expect(error == .unknownCommand("flg", suggestion: "flag", context: error.context))
        let topic = try SampleProgram.usageError(["help", "templates", "shw"])
        #expect(topic == .unknownCommand("shw", suggestion: "show", context: topic.context))
        #expect(topic.context.path == ["templates"])
    }

    @Test(arguments: [["--version"], ["show", "1", "--version"], ["--version", "bogus"]])
    func versionOutcome(_ arguments: [String]) throws {
        #expect(try SampleProgram.spec.parse(arguments) == .version)
    }

    @Test func versionIsUnknownWithoutAVersion() throws {
        var spec = SampleProgram.spec
        spec.version = nil
        #expect(throws: UsageError.self) { try spec.parse(["--version"]) }
    }

    @Test func specProblemsAreReported() {
        let spec = ProgramSpec(
            "tool", abstract: "A broken tool.",
            globalOptions: [OptionSpec("ledger", short: "l", valueName: "P", help: "")],
            commands: [
                CommandSpec(
                    "a", abstract: "",
                    positionals: [
                        PositionalSpec("X", help: "", variadic: true), PositionalSpec("Y", help: "", variadic: true),
                    ],
                    options: [OptionSpec("ledger", valueName: "P", help: "")],
                    flags: [
                        FlagSpec("help", help: ""), FlagSpec("x", short: "l", help: ""),
                        FlagSpec("y", short: "h", help: ""),
                    ]
                ),
                CommandSpec("a", abstract: ""),
                CommandSpec(
                    "group", abstract: "", flags: [FlagSpec("z", help: "")],
                    subcommands: [CommandSpec("leaf", abstract: "")]),
            ]
        )
        let problems = spec.problems
        #expect(problems.contains { $0.contains("'tool a'") && $0.contains("'--ledger'") })
        #expect(problems.contains { $0.contains("'tool a'") && $0.contains("'--help'") })
        #expect(problems.contains { $0.contains("'-l'") })
        #expect(problems.contains { $0.contains("'-h'") })
        #expect(problems.contains { $0.contains("variadic") })
        #expect(problems.contains { $0.contains("two subcommands named 'a'") })
        #expect(problems.contains { $0.contains("'tool group'") && $0.contains("subcommands") })
        #expect(problems.count == 7)
    }
}
