import ArgumentParsing

/// A spec shaped like the real `jqc` command line, so the tests exercise the cases the CLI will meet.
///
/// Each command's arguments are declared once, as handles in an enum named after it, and the spec lists them,
/// the way `jqc`'s commands do.
enum SampleProgram {
    static let ledger = OptionSpec(
        "ledger", valueName: "PATH", help: "The ledger directory to use.", defaultDescription: "~/.jqc/ledger")
    static let actingAs = OptionSpec("as", valueName: "NAME", help: "Record events as this inspector.")

    enum Init {
        static let server = OptionSpec("server", valueName: "URL", help: "The sync server.")
    }

    enum Start {
        static let template = OptionSpec("template", short: "t", valueName: "T", help: "The template.", required: true)
        static let facility = OptionSpec("facility", short: "f", valueName: "F", help: "The facility.", required: true)
        static let area = OptionSpec("area", valueName: "A", help: "The area within the facility.")
        static let reinspect = OptionSpec("reinspect", valueName: "ID", help: "The inspection this one follows up.")
    }

    enum SetField {
        static let idArgument = PositionalSpec("ID", help: "The inspection.")
        static let fieldArgument = PositionalSpec("FIELD", help: "The field.")
        static let valueArgument = PositionalSpec("VALUE", help: "The new value.")
    }

    enum Photo {
        static let idArgument = PositionalSpec("ID", help: "The inspection (not with --issue).", optional: true)
        static let fieldArgument = PositionalSpec("FIELD", help: "The field (not with --issue).", optional: true)
        static let fileArgument = PositionalSpec("FILE", help: "The photo; '-' reads standard input.")
        static let issue = OptionSpec("issue", valueName: "ISSUE", help: "Attach to this issue instead.")
    }

    enum Flag {
        static let idArgument = PositionalSpec("ID", help: "The inspection.")
        static let severity = OptionSpec(
            "severity", short: "s", valueName: "S", help: "How serious: minor, major or critical.", required: true)
        static let description = OptionSpec("description", valueName: "TEXT", help: "What was found.", required: true)
        static let photo = OptionSpec("photo", valueName: "FILE", help: "A photo of the issue.", repeatable: true)
    }

    enum Show {
        static let idArgument = PositionalSpec("ID", help: "The inspection.")
        static let json = FlagSpec("json", short: "j", help: "Print JSON instead of text.")
    }

    enum Submit {
        static let idArgument = PositionalSpec("ID", help: "The inspection.")
        static let followUp = FlagSpec("follow-up", short: "f", help: "Schedule a follow-up inspection.")
        static let quiet = FlagSpec("quiet", short: "q", help: "Print nothing on success.")
    }

    enum TemplatesShow {
        static let idArgument = PositionalSpec("ID", help: "The template.")
    }

    enum SyncRetry {
        static let idArgument = PositionalSpec("ID", help: "The upload.")
    }

    enum Rebuild {
        static let projectionArgument = PositionalSpec("PROJECTION", help: "Only this view.", optional: true)
    }

    enum Log {
        static let inspection = OptionSpec("inspection", valueName: "ID", help: "Only events of this inspection.")
        static let since = OptionSpec("since", valueName: "X", help: "Only events at or after X.")
        static let until = OptionSpec("until", valueName: "X", help: "Only events before X.")
        static let actor = OptionSpec("actor", valueName: "NAME", help: "Only events by this inspector.")
        static let type = OptionSpec("type", valueName: "TYPE", help: "Only events of this type.", repeatable: true)
        static let limit = OptionSpec("limit", short: "n", valueName: "N", help: "At most N events.")
        static let json = FlagSpec("json", help: "Print JSON lines.")
    }

    enum Paths {
        static let fileArgument = PositionalSpec("FILE", help: "Files.", variadic: true)
        static let destinationArgument = PositionalSpec("DEST", help: "Destination.")
    }

    static let spec = ProgramSpec(
        "jqc",
        abstract: "Record facility inspections in an append-only, verifiable ledger.",
        discussion: """
            Every change is an event in the ledger; views such as inspections and issues are rebuilt from it.

              jqc start --template fire --facility F-12
              jqc flag 42 --severity major --description "Blocked exit"
            """,
        version: "1.2.0",
        globalOptions: [ledger, actingAs],
        commands: [
            CommandSpec("init", abstract: "Create a ledger.", group: "Ledger", options: [Init.server]),
            CommandSpec(
                "start", abstract: "Start an inspection from a template.", group: "Inspecting",
                options: [Start.template, Start.facility, Start.area, Start.reinspect]
            ),
            CommandSpec(
                "set", abstract: "Set a field of an inspection.", group: "Inspecting",
                positionals: [SetField.idArgument, SetField.fieldArgument, SetField.valueArgument]
            ),
            CommandSpec(
                "photo", abstract: "Attach a photo to a field or an issue.", group: "Inspecting",
                positionals: [Photo.idArgument, Photo.fieldArgument, Photo.fileArgument], options: [Photo.issue]
            ),
            CommandSpec(
                "flag", abstract: "Record an issue found during an inspection.", group: "Inspecting",
                positionals: [Flag.idArgument], options: [Flag.severity, Flag.description, Flag.photo]
            ),
            CommandSpec(
                "show", abstract: "Show an inspection.", group: "Reviewing",
                positionals: [Show.idArgument], flags: [Show.json]
            ),
            CommandSpec(
                "submit", abstract: "Submit a finished inspection.", group: "Reviewing",
                positionals: [Submit.idArgument], flags: [Submit.followUp, Submit.quiet]
            ),
            CommandSpec(
                "templates", abstract: "Work with inspection templates.", group: "Reviewing",
                subcommands: [
                    CommandSpec("show", abstract: "Show a template.", positionals: [TemplatesShow.idArgument]),
                    CommandSpec("dump", abstract: "Dump every template for debugging.", hidden: true),
                ]
            ),
            CommandSpec(
                "sync", abstract: "Exchange events with the server.", group: "Syncing",
                subcommands: [
                    CommandSpec("retry", abstract: "Retry a failed upload.", positionals: [SyncRetry.idArgument])
                ]
            ),
            CommandSpec(
                "rebuild", abstract: "Rebuild views from the ledger.", group: "Ledger",
                positionals: [Rebuild.projectionArgument]
            ),
            CommandSpec(
                "log", abstract: "List ledger events.", group: "Ledger",
                options: [Log.inspection, Log.since, Log.until, Log.actor, Log.type, Log.limit], flags: [Log.json]
            ),
            CommandSpec(
                "paths", abstract: "Print paths given (for testing variadics).",
                positionals: [Paths.fileArgument, Paths.destinationArgument]
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
