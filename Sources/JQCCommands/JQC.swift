import ArgumentParsing
import FoundationEssentials
import InspectionStore
import LedgerCore
import LedgerStore

/// The `jqc` program: its command table, and the one place that turns
/// outcomes and errors into output and exit status.
public enum JQC {
    public static let version = "0.1.0"

    /// Every command, in the order help lists them within their groups.
    static let commands: [any RunnableCommand.Type] = [
        InitCommand.self, ConfigCommand.self, ConfigListCommand.self, ConfigGetCommand.self, ConfigSetCommand.self,
        ConfigUnsetCommand.self, PullCommand.self, FacilitiesCommand.self, TemplatesCommand.self,
        TemplatesShowCommand.self,
        StartCommand.self, SetCommand.self, FillCommand.self, EditCommand.self, ClearCommand.self, PhotoCommand.self,
        SignCommand.self,
        FlagCommand.self,
        SubmitCommand.self, DiscardCommand.self, HandoverCommand.self, ReceiveCommand.self,
        ShowCommand.self, InspectionsCommand.self, DraftsCommand.self, IssuesCommand.self, FollowUpsCommand.self,
        OutboxCommand.self, StatusCommand.self,
        LoginCommand.self, LogoutCommand.self, WhoamiCommand.self, SyncCommand.self, SyncRetryCommand.self,
        ServiceCommand.self, ServiceInstallCommand.self, ServiceStatusCommand.self, ServiceUninstallCommand.self,
        ServiceUnitCommand.self,
        SyncDismissCommand.self,
        WitnessCommand.self, WitnessListCommand.self, WitnessAddCommand.self, WitnessRemoveCommand.self,
        WitnessSyncCommand.self,
        SyncAdoptCommand.self,
        HistoryCommand.self, HistoryShowCommand.self,
        VerifyCommand.self, DigestCommand.self, CheckpointCommand.self, KeyCommand.self, KeyRotateCommand.self,
        DevicesCommand.self,
        ProveCommand.self, LogCommand.self,
        AuditCommand.self,
        RebuildCommand.self, ViewsCommand.self, StatsCommand.self, BackupCommand.self, RestorePointCommand.self,
        RestorePointClearCommand.self, SalvageCommand.self,
        SalvageReadCommand.self, CheckCommand.self, CompletionCommand.self,
    ]

    /// `--ledger PATH`, accepted by every command.
    static let ledger = OptionSpec(
        "ledger", valueName: "PATH",
        help: "The ledger directory (default: $JQC_HOME, else $XDG_DATA_HOME/jqc, else ~/.local/share/jqc).")
    /// `--as NAME`, accepted by every command (read by ``ActorName``).
    static let actingAs = OptionSpec(
        "as", valueName: "NAME",
        help: "Record as NAME when nobody is logged in (marked unverified; default: $JQC_ACTOR, else "
            + "'jqc config set actor NAME').")
    /// `--json`, accepted by every command.
    static let json = FlagSpec("json", help: "Print results as JSON (stable field names, for scripts).")

    static let globalOptions = [ledger, actingAs]

    /// `--verbose`, accepted by every command.
    static let verbose = FlagSpec("verbose", help: "Say everything about a connection error, not just one line.")

    static let globalFlags = [json, verbose]

    /// What every command reads from the global options.
    struct Globals {
        var ledger: String?
        var actingAs: String?
        var json: Bool
        var verbose: Bool

        init(_ parsed: ParsedCommand) throws(UsageError) {
            ledger = try parsed.value(of: JQC.ledger)
            actingAs = try ActorName.parse(parsed)
            json = try parsed.isSet(JQC.json)
            verbose = try parsed.isSet(JQC.verbose)
        }
    }

    /// The spec the parser reads and the help is generated from.
    public static let program: ProgramSpec = {
        // Commands with subcommands ("templates show") are declared by their
        // group word; the leaves are attached under it.
        var top: [CommandSpec] = []
        for command in commands {
            let path = command.path
            if path.count == 1 {
                if let i = top.firstIndex(where: { $0.name == path[0] }) {
                    // A leaf that is also a group word: keep the subcommands.
                    var spec = command.spec
                    spec.subcommands = top[i].subcommands
                    spec.requiresSubcommand = false
                    top[i] = spec
                } else {
                    top.append(command.spec)
                }
            } else if let i = top.firstIndex(where: { $0.name == path[0] }) {
                top[i].subcommands.append(command.spec)
                // A group word that is itself a command runs without a subcommand.
                top[i].requiresSubcommand = !commands.contains { $0.path == [path[0]] }
            } else {
                preconditionFailure("command \(path) is declared before its group \(path[0])")
            }
        }
        return ProgramSpec(
            "jqc",
            abstract: "Record facility inspections offline in a verifiable ledger, and sync them.",
            discussion: """
                Every action is an event appended to the ledger, durable when the command returns. \
                Inspections and issues can be named by any unique prefix of their id.

                Exit status: 0 success, 1 refused or failed (the message says why), 2 usage error.
                """,
            version: version, globalOptions: globalOptions, globalFlags: globalFlags, commands: top)
    }()

    /// Exit statuses, documented in the help.
    public enum ExitStatus {
        public static let success: Int32 = 0
        public static let refused: Int32 = 1
        public static let usage: Int32 = 2
    }

    /// Runs `jqc` with `arguments` (without the program name) and returns the exit status.
    ///
    /// Output that could not be written makes a command that succeeded
    /// fail (status 1), unless its reader went away (`jqc log | head`): that
    /// reader took what it wanted.
    public static func main(
        arguments: [String], environment: [String: String], stdout: TextOutput, stderr: TextOutput,
        clock: LedgerClock = SystemClock()
    ) -> Int32 {
        defer { stderr.flush() }
        var status = dispatch(
            arguments: arguments, environment: environment, stdout: stdout, stderr: stderr, clock: clock)
        stdout.flush()
        if let code = stdout.writeFailure {
            let error = JQCError.outputNotWritten(code)
            FailureReport(stderr: stderr, environment: environment).say(
                error.description, kind: ErrorKind(of: error), detail: ErrorKind.detail(of: error))
            if status == ExitStatus.success { status = ExitStatus.refused }
        }
        return status
    }

    /// Parses `arguments` and runs what they ask for.
    private static func dispatch(
        arguments: [String], environment: [String: String], stdout: TextOutput, stderr: TextOutput,
        clock: LedgerClock
    ) -> Int32 {
        // Hidden entry points for the completion scripts and `Tools/install`,
        // outside the parser: their arguments are another command line.
        if arguments.first == "__complete" {
            Completer.run(Array(arguments.dropFirst()), environment: environment, stdout: stdout)
            return ExitStatus.success
        }
        if arguments.first == "__manpage" {
            stdout.write(ManualPage.text(environment: environment))
            return ExitStatus.success
        }
        let failure = FailureReport(stderr: stderr, environment: environment)
        let outcome: ParseOutcome
        do {
            outcome = try program.parse(arguments.isEmpty ? ["help"] : arguments)
        } catch {
            failure.say(redacted(error), kind: ErrorKind(of: error), usage: error.usage)
            return ExitStatus.usage
        }
        switch outcome {
        case .help(let path):
            do {
                let help = try program.help(for: path)
                stdout.write(help.hasSuffix("\n") ? help : help + "\n")
            } catch {
                failure.say(error.message, kind: ErrorKind(of: error))
                return ExitStatus.usage
            }
            return ExitStatus.success
        case .version:
            stdout.line("jqc \(version)")
            return ExitStatus.success
        case .command(let parsed):
            return run(parsed, environment: environment, stdout: stdout, failure: failure, clock: clock)
        }
    }

    /// Runs the command `parsed` names and returns the exit status.
    static func run(
        _ parsed: ParsedCommand, environment: [String: String], stdout: TextOutput, failure: FailureReport,
        clock: LedgerClock
    ) -> Int32 {
        guard let type = commands.first(where: { $0.path == parsed.path }) else {
            failure.say(
                "'\(parsed.path.joined(separator: " "))' needs a subcommand. See 'jqc help'.", kind: .needsSubcommand)
            return ExitStatus.usage
        }
        let command: any RunnableCommand
        let globals: Globals
        do {
            command = try type.init(parsed)
            globals = try Globals(parsed)
        } catch {
            failure.say(error.message, kind: ErrorKind(of: error), usage: error.usage)
            return ExitStatus.usage
        }
        let invocation = Invocation(
            home: LedgerDirectory.resolve(option: globals.ledger, environment: environment),
            environment: environment, stdout: stdout, stderr: failure.stderr, clock: clock, json: globals.json,
            actingAs: globals.actingAs)
        invocation.verbose = globals.verbose
        do {
            try command.run(invocation)
        } catch {
            // A failure after SIGINT/SIGTERM is the stop's doing: say that, not its details.
            if let stopped = StopSignals.release(commandFailed: true) {
                failure.say(stopped, kind: .stopped)
                return ExitStatus.refused
            }
            failure.say(
                TerminalText.safe(message(for: error)), kind: ErrorKind(of: error), detail: ErrorKind.detail(of: error))
            return (error as? CommandExit)?.status ?? ExitStatus.refused
        }
        if let stopped = StopSignals.release(commandFailed: false) {
            failure.say(stopped, kind: .stopped)
            return ExitStatus.refused
        }
        return ExitStatus.success
    }

    /// A usage error's message, except that a stray word typed after `login`
    /// is not echoed: it is most likely a password.
    static func redacted(_ error: UsageError) -> String {
        if case .unexpectedArgument(_, let context) = error, context.path.first == "login" {
            return "unexpected argument for 'jqc login' (not shown: it may be a password). "
                + "Give the password at the prompt or with --password-stdin. See 'jqc login --help'."
        }
        return error.message
    }

    /// The text of any error a command can throw.
    static func message(for error: any Error) -> String {
        let text =
            switch error {
            case let error as UsageError: error.message
            case let error as CustomStringConvertible: error.description
            default: "\(error)"
            }
        // No message echoes a huge value back whole.
        return StoreMessage.cuttingLongRuns(text)
    }
}
