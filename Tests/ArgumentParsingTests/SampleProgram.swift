import ArgumentParsing

/// A spec shaped like the real `jqc` command line, so the tests exercise the cases the CLI will meet.
enum SampleProgram {
    static let spec = ProgramSpec(
        "jqc",
        abstract: "Record facility inspections in an append-only, verifiable ledger.",
        discussion: """
            Every change is an event in the ledger; views such as inspections and issues are rebuilt from it.

              jqc start --template fire --facility F-12
              jqc flag 42 --severity major --description "Blocked exit"
            """,
        version: "1.2.0",
        globalOptions: [
            OptionSpec(
                "ledger", valueName: "PATH", help: "The ledger directory to use.",
                defaultDescription: "~/.jqc/ledger"),
            OptionSpec("as", valueName: "NAME", help: "Record events as this inspector."),
        ],
        commands: [
            CommandSpec(
                "init", abstract: "Create a ledger.", group: "Ledger",
                options: [OptionSpec("server", valueName: "URL", help: "The sync server.")]
            ),
            CommandSpec(
                "start", abstract: "Start an inspection from a template.", group: "Inspecting",
                options: [
                    OptionSpec("template", short: "t", valueName: "T", help: "The template.", required: true),
                    OptionSpec("facility", short: "f", valueName: "F", help: "The facility.", required: true),
                    OptionSpec("area", valueName: "A", help: "The area within the facility."),
                    OptionSpec("reinspect", valueName: "ID", help: "The inspection this one follows up."),
                ]
            ),
            CommandSpec(
                "set", abstract: "Set a field of an inspection.", group: "Inspecting",
                positionals: [
                    PositionalSpec("ID", help: "The inspection."),
                    PositionalSpec("FIELD", help: "The field."),
                    PositionalSpec("VALUE", help: "The new value."),
                ]
            ),
            CommandSpec(
                "photo", abstract: "Attach a photo to a field or an issue.", group: "Inspecting",
                positionals: [
                    PositionalSpec("ID", help: "The inspection (not with --issue).", optional: true),
                    PositionalSpec("FIELD", help: "The field (not with --issue).", optional: true),
                    PositionalSpec("FILE", help: "The photo; '-' reads standard input."),
                ],
                options: [OptionSpec("issue", valueName: "ISSUE", help: "Attach to this issue instead.")]
            ),
            CommandSpec(
                "flag", abstract: "Record an issue found during an inspection.", group: "Inspecting",
                positionals: [PositionalSpec("ID", help: "The inspection.")],
                options: [
                    OptionSpec(
                        "severity", short: "s", valueName: "S", help: "How serious: minor, major or critical.",
                        required: true),
                    OptionSpec("description", valueName: "TEXT", help: "What was found.", required: true),
                    OptionSpec("photo", valueName: "FILE", help: "A photo of the issue.", repeatable: true),
                ]
            ),
            CommandSpec(
                "show", abstract: "Show an inspection.", group: "Reviewing",
                positionals: [PositionalSpec("ID", help: "The inspection.")],
                flags: [FlagSpec("json", short: "j", help: "Print JSON instead of text.")]
            ),
            CommandSpec(
                "submit", abstract: "Submit a finished inspection.", group: "Reviewing",
                positionals: [PositionalSpec("ID", help: "The inspection.")],
                flags: [
                    FlagSpec("follow-up", short: "f", help: "Schedule a follow-up inspection."),
                    FlagSpec("quiet", short: "q", help: "Print nothing on success."),
                ]
            ),
            CommandSpec(
                "templates", abstract: "Work with inspection templates.", group: "Reviewing",
                subcommands: [
                    CommandSpec(
                        "show", abstract: "Show a template.",
                        positionals: [PositionalSpec("ID", help: "The template.")]),
                    CommandSpec("dump", abstract: "Dump every template for debugging.", hidden: true),
                ]
            ),
            CommandSpec(
                "sync", abstract: "Exchange events with the server.", group: "Syncing",
                subcommands: [
                    CommandSpec(
                        "retry", abstract: "Retry a failed upload.",
                        positionals: [PositionalSpec("ID", help: "The upload.")])
                ]
            ),
            CommandSpec(
                "rebuild", abstract: "Rebuild views from the ledger.", group: "Ledger",
                positionals: [PositionalSpec("PROJECTION", help: "Only this view.", optional: true)]
            ),
            CommandSpec(
                "log", abstract: "List ledger events.", group: "Ledger",
                options: [
                    OptionSpec("inspection", valueName: "ID", help: "Only events of this inspection."),
                    OptionSpec("since", valueName: "X", help: "Only events at or after X."),
                    OptionSpec("until", valueName: "X", help: "Only events before X."),
                    OptionSpec("actor", valueName: "NAME", help: "Only events by this inspector."),
                    OptionSpec("type", valueName: "TYPE", help: "Only events of this type.", repeatable: true),
                    OptionSpec("limit", short: "n", valueName: "N", help: "At most N events."),
                ],
                flags: [FlagSpec("json", help: "Print JSON lines.")]
            ),
            CommandSpec(
                "paths", abstract: "Print paths given (for testing variadics).",
                positionals: [
                    PositionalSpec("FILE", help: "Files.", variadic: true),
                    PositionalSpec("DEST", help: "Destination."),
                ]
            ),
            CommandSpec("debug-dump", abstract: "Dump internal state.", hidden: true),
        ]
    )

    /// Parses and insists on a command outcome, so tests about values read plainly.
    static func command(_ arguments: [String]) throws -> ParsedCommand {
        let outcome = try spec.parse(arguments)
        guard case .command(let parsed) = outcome else {
            throw UnexpectedOutcome(outcome: outcome)
        }
        return parsed
    }

    /// Parses and returns the usage error, or fails with what parsing produced instead.
    static func usageError(_ arguments: [String]) throws -> UsageError {
        do {
            let outcome = try spec.parse(arguments)
            throw UnexpectedOutcome(outcome: outcome)
        } catch let error as UsageError {
            return error
        }
    }
}

struct UnexpectedOutcome: Error {
    var outcome: ParseOutcome
}
