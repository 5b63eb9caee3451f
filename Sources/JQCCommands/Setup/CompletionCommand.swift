import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc completion bash|zsh|fish`: the script that makes Tab complete `jqc`.
///
/// The scripts are thin: on each Tab they ask `jqc __complete WORDS…`, which
/// works out from the command specs (`ProgramSpec.completion(for:)`) what may
/// come next and fills in what only the ledger knows (inspection ids, field
/// labels, template and facility names).
struct CompletionCommand: RunnableCommand {
    static let path = ["completion"]
    static let shellArgument = PositionalSpec("SHELL", help: "bash, zsh or fish.")
    static let spec = CommandSpec(
        "completion", abstract: "Print the shell completion script for bash, zsh or fish.",
        discussion: """
            Completes commands, options, inspection and issue ids (drafts first), field labels and ids of \
            the inspection named, template, facility and area names, severities and file paths. Load it \
            from your shell's start-up file:

              bash:  source <(jqc completion bash)        (in ~/.bashrc)
              zsh:   source <(jqc completion zsh)         (in ~/.zshrc, after compinit)
              fish:  jqc completion fish | source         (in ~/.config/fish/config.fish)

            'Tools/install' installs the scripts where each shell finds them by itself.
            """,
        group: "Setup",
        positionals: [shellArgument])

    var shell: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        shell = try parsed.require(Self.shellArgument)
        guard CompletionScript.shells.contains(shell) else {
            throw parsed.invalid(Self.shellArgument, value: shell, reason: "the shells are bash, zsh and fish")
        }
    }

    func run(_ invocation: Invocation) throws {
        invocation.stdout.write(CompletionScript.script(for: shell, program: "jqc"))
    }
}

/// `jqc __complete WORD…` (hidden; called by the completion scripts): one
/// candidate a line for the last word. Never fails: a ledger that cannot be
/// opened just offers nothing that needs it.
enum Completer {
    static let severities = ["low", "medium", "high", "critical"]

    static func run(_ words: [String], environment: [String: String], stdout: TextOutput) {
        let current = words.last ?? ""
        let home = LedgerDirectory.resolve(option: ledgerOption(in: words), environment: environment)
        let lines = JQC.program.completionLines(for: words) { name, command, positionals in
            values(name, command: command, positionals: positionals, current: current, home)
        }
        for line in lines { stdout.line(line) }
    }

    /// `--ledger PATH` among the words, so completion reads the same ledger.
    static func ledgerOption(in words: [String]) -> String? {
        for (i, word) in words.enumerated() {
            if word == "--ledger", i + 1 < words.count - 1 { return words[i + 1] }
            if word.hasPrefix("--ledger=") { return String(word.dropFirst("--ledger=".count)) }
        }
        return nil
    }

    /// The candidates for a value named `name` (a positional or an option's value name).
    static func values(
        _ name: String, command: [String], positionals: [String], current: String, _ home: LedgerDirectory
    ) -> [String] {
        switch name {
        case "FILE", "PATH", "DEST", "DIRECTORY": return [":files"]
        case "SEVERITY": return severities
        case "SHELL": return CompletionScript.shells
        default: break
        }
        // Everything else needs the ledger; without one there is nothing to offer.
        do {
            return try LedgerCompletion(home: home).values(
                name, command: command, positionals: positionals, current: current)
        } catch {
            return []
        }
    }
}
