import ArgumentParsing
import Testing

@Suite struct UsageErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        /// The error expected, given the context the parser reports (checked separately below).
        var expected: @Sendable (CommandContext) -> UsageError
        var path: [String]
        var message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(
            arguments: ["flag", "1", "--sevrity", "major", "--description", "d"],
            expected: { .unknownOption("--sevrity", suggestion: "--severity", context: $0) },
            path: ["flag"],
            message: "unknown option '--sevrity' for 'jqc flag'. Did you mean '--severity'? See 'jqc flag --help'."
        ),
        Case(
            arguments: ["flag", "1", "-severity", "major"],
            expected: { .unknownOption("-severity", suggestion: "--severity", context: $0) },
            path: ["flag"],
            message: "unknown option '-severity' for 'jqc flag'. Did you mean '--severity'? See 'jqc flag --help'."
        ),
        Case(
            arguments: ["show", "1", "-x"],
            expected: { .unknownOption("-x", suggestion: nil, context: $0) },
            path: ["show"],
            message: "unknown option '-x' for 'jqc show'. See 'jqc show --help'."
        ),
        Case(
            arguments: ["show", "1", "--ledgr", "x"],
            expected: { .unknownOption("--ledgr", suggestion: "--ledger", context: $0) },
            path: ["show"],
            message: "unknown option '--ledgr' for 'jqc show'. Did you mean '--ledger'? See 'jqc show --help'."
        ),
        Case(
            arguments: ["--json", "show", "1"],
            expected: { .unknownOption("--json", suggestion: nil, context: $0) },
            path: [],
            message: "unknown option '--json' for 'jqc'. See 'jqc --help'."
        ),
        Case(
            arguments: ["sumbit", "1"],
            expected: { .unknownCommand("sumbit", suggestion: "submit", context: $0) },
            path: [],
            message: "unknown command 'sumbit' for 'jqc'. Did you mean 'submit'? See 'jqc --help'."
        ),
        Case(
            arguments: ["templ", "show", "x"],
            expected: { .unknownCommand("templ", suggestion: "templates", context: $0) },
            path: [],
            message: "unknown command 'templ' for 'jqc'. Did you mean 'templates'? See 'jqc --help'."
        ),
        Case(
            arguments: ["hlep"],
            expected: { .unknownCommand("hlep", suggestion: "help", context: $0) },
            path: [],
            message: "unknown command 'hlep' for 'jqc'. Did you mean 'help'? See 'jqc --help'."
        ),
        Case(
            arguments: ["debug-dmp"],
            expected: { .unknownCommand("debug-dmp", suggestion: nil, context: $0) },
            path: [],
            message: "unknown command 'debug-dmp' for 'jqc'. See 'jqc --help'."
        ),
        Case(
            arguments: ["templates", "shwo", "x"],
            expected: { .unknownCommand("shwo", suggestion: "show", context: $0) },
            path: ["templates"],
            message: "unknown command 'shwo' for 'jqc templates'. Did you mean 'show'? See 'jqc templates --help'."
        ),
        Case(
            arguments: ["flag", "1", "--description", "d", "--severity"],
            expected: { .missingValue(option: "--severity", valueName: "S", context: $0) },
            path: ["flag"],
            message: "option '--severity' needs a value: write '--severity S', or '--severity=S' when the value "
                + "starts with '-'. See 'jqc flag --help'."
        ),
        Case(
            arguments: ["flag", "1", "-s", "--description", "d"],
            expected: { .missingValue(option: "--severity", valueName: "S", context: $0) },
            path: ["flag"],
            message: "option '--severity' needs a value: write '--severity S', or '--severity=S' when the value "
                + "starts with '-'. See 'jqc flag --help'."
        ),
        Case(
            arguments: ["show"],
            expected: { .missingPositional("ID", context: $0) },
            path: ["show"],
            message: "missing argument ID for 'jqc show'. See 'jqc show --help'."
        ),
        Case(
            arguments: ["set", "1", "notes"],
            expected: { .missingPositional("VALUE", context: $0) },
            path: ["set"],
            message: "missing argument VALUE for 'jqc set'. See 'jqc set --help'."
        ),
        Case(
            arguments: ["flag", "1", "--severity", "major"],
            expected: { .missingOption("--description", valueName: "TEXT", context: $0) },
            path: ["flag"],
            message: "missing required option '--description TEXT' for 'jqc flag'. See 'jqc flag --help'."
        ),
        Case(
            arguments: ["sync"],
            expected: { .missingSubcommand(available: ["retry"], context: $0) },
            path: ["sync"],
            message: "'jqc sync' needs a subcommand: retry. See 'jqc sync --help'."
        ),
        Case(
            arguments: ["show", "1", "2"],
            expected: { .unexpectedArgument("2", context: $0) },
            path: ["show"],
            message: "unexpected argument '2' for 'jqc show'. Remove it, or quote it if it belongs to another "
                + "value. See 'jqc show --help'."
        ),
        Case(
            arguments: ["log", "today"],
            expected: { .unexpectedArgument("today", context: $0) },
            path: ["log"],
            message: "unexpected argument 'today' for 'jqc log'. Remove it, or quote it if it belongs to another "
                + "value. See 'jqc log --help'."
        ),
        Case(
            arguments: ["help", "show", "extra"],
            expected: { .unexpectedArgument("extra", context: $0) },
            path: ["show"],
            message: "unexpected argument 'extra' for 'jqc show'. Remove it, or quote it if it belongs to another "
                + "value. See 'jqc show --help'."
        ),
        Case(
            arguments: ["show", "1", "--json=yes"],
            expected: { .flagGivenValue(flag: "--json", value: "yes", context: $0) },
            path: ["show"],
            message: "flag '--json' does not take a value (got 'yes'); write just '--json'. See 'jqc show --help'."
        ),
    ]

    @Test(arguments: cases)
    func reportsTheMistakeAndWhatToDo(_ testCase: Case) throws {
        let error = try SampleProgram.usageError(testCase.arguments)
        #expect(error.context.path == testCase.path)
        #expect(error == testCase.expected(error.context))
        #expect(error.message == testCase.message)
        #expect(error.usage == (try SampleProgram.spec.usage(for: testCase.path)))
        #expect(error.description == "\(testCase.message)\nusage: \(error.usage)")
    }

    @Test func carriesTheUsageLineOfTheCommandConcerned() throws {
        let error = try SampleProgram.usageError(["flag", "1"])
        #expect(error.usage == "jqc flag ID --severity S --description TEXT [--photo FILE ...]")
        #expect(error.context.commandName == "jqc flag")
    }

    @Test(arguments: [
        ("sevrity", ["severity", "description"], "severity" as String?),
        ("SHOW", ["show", "set"], "show"),
        ("st", ["set", "show", "start"], "set"),
        ("temp", ["templates", "template"], "templates"),
        ("xyz", ["show", "set"], nil),
        ("", ["show"], nil),
        ("q", ["json", "quiet"], nil),
    ])
    func suggestionsPickTheClosePlausibleName(_ typed: String, _ candidates: [String], _ expected: String?) {
        #expect(Suggestion.closest(to: typed, among: candidates) == expected)
    }

    @Test(arguments: [
        ("", "", 0), ("abc", "", 3), ("kitten", "sitting", 3), ("sumbit", "submit", 1), ("show", "show", 0),
        ("ab", "ba", 1), ("flag", "flg", 1),
    ])
    func editDistance(_ a: String, _ b: String, _ expected: Int) {
        #expect(Suggestion.editDistance(a, b) == expected)
        #expect(Suggestion.editDistance(b, a) == expected)
    }
}
