import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore

/// `jqc config [list]`: every setting, its value in force and where it comes from.
struct ConfigCommand: RunnableCommand {
    static let path = ["config"]
    static let spec = CommandSpec(
        "config", abstract: "Show the ledger's settings (server, witness, actor); 'config set KEY VALUE' changes one.",
        discussion: """
            server: the sync server's API base URL. witness: a witness that keeps this device's checkpoints \
            (none by default; with none, sync sends nothing outside the server's contract). actor: the name \
            recorded when nobody is logged in and no --as NAME is given (JQC_ACTOR wins over it, a login over \
            both). The settings live in the ledger's config.json.
            """,
        group: "Setup")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws { try ConfigListCommand.list(invocation) }
}

/// `jqc config list`.
struct ConfigListCommand: RunnableCommand {
    static let path = ["config", "list"]
    static let spec = CommandSpec("list", abstract: "Show every setting, its value and where it comes from.")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws { try Self.list(invocation) }

    static func list(_ invocation: Invocation) throws {
        let settings = invocation.settings
        let rows = try LedgerSetting.allCases.map { setting in
            let (value, source) = try settings.inForce(setting)
            return (setting, value, source)
        }
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "settings": .array(
                            rows.map { setting, value, source in
                                .object([
                                    "key": .string(setting.rawValue), "value": .optional(value),
                                    "source": .string(source.rawValue),
                                ])
                            })
                    ])))
            return
        }
        for (setting, value, source) in rows {
            let shown = value.map(TerminalText.singleLine) ?? "(none)"
            let from = source == .environment ? " (from JQC_ACTOR)" : ""
            invocation.stdout.line(
                setting.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0) + shown + from)
        }
    }
}

/// `jqc config get KEY`: the value alone, for scripts; exit status 1 when unset.
struct ConfigGetCommand: RunnableCommand {
    static let path = ["config", "get"]
    static let keyArgument = PositionalSpec("KEY", help: "server, witness or actor.")
    static let spec = CommandSpec(
        "get", abstract: "Print one setting's value in force (exit status 1 when it has none).",
        positionals: [keyArgument])

    var key: String

    init(_ parsed: ParsedCommand) throws(UsageError) { key = try parsed.require(Self.keyArgument) }

    func run(_ invocation: Invocation) throws {
        let setting = try LedgerSettings.setting(named: key)
        let (value, source) = try invocation.settings.inForce(setting)
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "key": .string(setting.rawValue), "value": .optional(value),
                        "source": .string(source.rawValue),
                    ])))
            return
        }
        guard let value else {
            throw JQCError.refused(
                "\(setting.rawValue) is not set (\(setting.meaning)). Set it with 'jqc config set "
                    + "\(setting.rawValue) \(setting == .actor ? "NAME" : "URL")'.")
        }
        invocation.stdout.line(TerminalText.singleLine(value))
    }
}

/// `jqc config set KEY VALUE`.
struct ConfigSetCommand: RunnableCommand {
    static let path = ["config", "set"]
    static let valueArgument = PositionalSpec("VALUE", help: "A URL for server and witness, a name for actor.")
    static let spec = CommandSpec(
        "set", abstract: "Change one setting (checked first; nothing is changed when it is refused).",
        positionals: [ConfigGetCommand.keyArgument, valueArgument])

    var key: String
    var value: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        key = try parsed.require(ConfigGetCommand.keyArgument)
        value = try parsed.require(Self.valueArgument)
    }

    func run(_ invocation: Invocation) throws {
        let setting = try LedgerSettings.setting(named: key)
        let settings = invocation.settings
        let previous = try settings.set(setting, to: value)
        let now = try settings.stored(setting) ?? value
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "key": .string(setting.rawValue), "value": .optional(now), "previous": .optional(previous),
                    ])))
            return
        }
        let was = previous.map { " (was \(TerminalText.singleLine($0)))" } ?? ""
        invocation.stdout.line("\(setting.rawValue) set to \(TerminalText.singleLine(now))\(was).")
        switch setting {
        case .server:
            if let saved = try invocation.session(), !Invocation.sameServer(saved.serverURL, now) {
                invocation.stdout.line(
                    "The saved session is for \(saved.serverURL); log in to this server with 'jqc login'.")
            }
        case .witness:
            invocation.stdout.line("Each sync now sends this device's checkpoint to the witness.")
        case .actor:
            if try settings.inForce(.actor).source == .environment {
                invocation.stdout.line("JQC_ACTOR is set and wins over it while it is.")
            }
            if let saved = try invocation.session() {
                invocation.stdout.line(
                    "\(TerminalText.singleLine(saved.user.displayName)) is logged in and is recorded instead "
                        + "until 'jqc logout'.")
            }
        }
    }
}

/// `jqc config unset KEY`.
struct ConfigUnsetCommand: RunnableCommand {
    static let path = ["config", "unset"]
    static let spec = CommandSpec(
        "unset", abstract: "Remove one setting (unset witness: syncs ask no witness).",
        positionals: [ConfigGetCommand.keyArgument])

    var key: String

    init(_ parsed: ParsedCommand) throws(UsageError) { key = try parsed.require(ConfigGetCommand.keyArgument) }

    func run(_ invocation: Invocation) throws {
        let setting = try LedgerSettings.setting(named: key)
        let previous = try invocation.settings.unset(setting)
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "key": .string(setting.rawValue), "value": .null, "previous": .optional(previous),
                    ])))
            return
        }
        guard let previous else {
            invocation.stdout.line("\(setting.rawValue) was not set; nothing was changed.")
            return
        }
        invocation.stdout.line("\(setting.rawValue) unset (was \(TerminalText.singleLine(previous))).")
        if setting == .witness {
            invocation.stdout.line("Syncs no longer send checkpoints to a witness; the history is not witnessed.")
        }
    }
}

extension Invocation {
    /// The ledger's settings (`config.json`, and `JQC_ACTOR` for the actor).
    var settings: LedgerSettings { LedgerSettings(directory: home, environment: environment) }
}
