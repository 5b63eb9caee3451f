import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc config [list]`: every setting, its value in force and where it comes from.
struct ConfigCommand: CommandWithoutArguments {
    static let path = ["config"]
    static let spec = CommandSpec(
        "config", abstract: "Show the ledger's settings (server, witness, actor); 'config set KEY VALUE' changes one.",
        discussion: """
            server: the sync server's API base URL. witness: the legacy witness URL of earlier versions (read \
            and unset only: a witness is added with its key by 'jqc witness add URL --key VKEY'). actor: the \
            name recorded when nobody is logged in and no --as NAME is given (JQC_ACTOR wins over it, a login \
            over both). witness-quorum N: how many C2SP witnesses must cosign (default all; kept in \
            witnesses.json). The settings live in the ledger's config.json.
            """,
        group: "Setup")

    func run(_ invocation: Invocation) throws { try ConfigListCommand.list(invocation) }
}

/// `jqc config list`.
struct ConfigListCommand: CommandWithoutArguments {
    static let path = ["config", "list"]
    static let spec = CommandSpec("list", abstract: "Show every setting, its value and where it comes from.")

    func run(_ invocation: Invocation) throws { try Self.list(invocation) }

    static func list(_ invocation: Invocation) throws {
        let rows = try SettingsReport.rows(invocation.settings)
        if invocation.json {
            invocation.printJSON(SettingsReport.listJSON(rows))
            return
        }
        for row in rows { invocation.stdout.line(row.line) }
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
        let row = SettingsReport.Row(setting: setting, value: value, source: source)
        invocation.stdout.line(invocation.json ? JSONOutput.render(row.jsonValue) : try row.requireValue())
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
        if key == WitnessQuorumSetting.name { return try WitnessQuorumSetting.set(value, invocation) }
        let setting = try LedgerSettings.setting(named: key)
        // The legacy witness_url is kept for ledgers that have it ('config unset witness' removes it), never set anew.
        if setting == .witness { throw LedgerSettingError.witnessNeedsKey(value.trimming(.spaces)) }
        let settings = invocation.settings
        let previous = try settings.set(setting, to: value)
        let now = try settings.stored(setting) ?? value
        if invocation.json {
            invocation.printJSON(SettingsReport.changeJSON(setting, now: now, previous: previous))
            return
        }
        try SettingsReport.sayChange(
            of: setting, now: now, previous: previous, session: { try invocation.session() },
            actorSource: { try settings.inForce(.actor).source }, say: { invocation.stdout.line($0) })
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
        if key == WitnessQuorumSetting.name { return try WitnessQuorumSetting.set(nil, invocation) }
        let setting = try LedgerSettings.setting(named: key)
        let previous = try invocation.settings.unset(setting)
        if invocation.json {
            invocation.printJSON(SettingsReport.changeJSON(setting, now: nil, previous: previous))
            return
        }
        for line in SettingsReport.unsetLines(setting, previous: previous) { invocation.stdout.line(line) }
    }
}

extension Invocation {
    /// The ledger's settings (`config.json`, and `JQC_ACTOR` for the actor).
    var settings: LedgerSettings { LedgerSettings(directory: home, environment: environment) }
}

/// `jqc config set witness-quorum N` (`unset`: all witnesses): kept in
/// `witnesses.json` beside the witnesses it counts (`WitnessList.quorum`).
enum WitnessQuorumSetting {
    static let name = "witness-quorum"

    static func set(_ value: String?, _ invocation: Invocation) throws {
        _ = try invocation.config()
        var list = try WitnessList.load(invocation.home)
        if let value {
            guard let number = Int(value.trimming(.spaces)), number >= 1,
                number <= max(1, list.witnesses.count)
            else { throw WitnessListError.badQuorum(value: value, witnesses: list.witnesses.count) }
            list.quorum = number
        } else {
            list.quorum = nil
        }
        try list.save(invocation.home)
        let said =
            "witness-quorum: \(list.effectiveQuorum) of \(list.witnesses.count) configured witnesses"
            + (list.quorum == nil ? " (all, the default)" : "")
        if invocation.json {
            invocation.printJSON(
                .object([
                    "setting": .string(name), "quorum": .integer(Int64(list.effectiveQuorum)),
                    "witnesses": .integer(Int64(list.witnesses.count)),
                ]))
        } else {
            invocation.stdout.line(said)
        }
    }
}
