import ArgumentParsing
import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc witness`: the C2SP witnesses this device's checkpoint is submitted
/// to (`WitnessList`, `witnesses.json`); without a subcommand, their list.
struct WitnessCommand: CommandWithoutArguments {
    static let path = ["witness"]
    static let spec = CommandSpec(
        "witness", abstract: "List, add or remove the C2SP witnesses that cosign this device's checkpoints.",
        discussion: """
            A witness (c2sp.org/tlog-witness) keeps the latest checkpoint of this device's log it cosigned and \
            cosigns a new one only when it extends that one (a consistency proof), so a history rewritten \
            after a sync, or a second copy of the device recording its own, is refused by it. Each sync \
            submits the checkpoint to every witness with 'POST <URL>/add-checkpoint' and records every \
            cosignature that verifies against the witness's key; 'jqc audit' says whether the quorum \
            ('jqc config set witness-quorum N'; default all) cosigned. The witness's operator must enrol this \
            log (its origin and key, printed by 'jqc witness add').
            """,
        group: "Syncing")

    func run(_ invocation: Invocation) throws { try WitnessListCommand.show(invocation) }
}

/// `jqc witness list`.
struct WitnessListCommand: CommandWithoutArguments {
    static let path = ["witness", "list"]
    static let spec = CommandSpec("list", abstract: "List the configured witnesses (URL, name, key id) and the quorum.")

    func run(_ invocation: Invocation) throws { try Self.show(invocation) }

    static func show(_ invocation: Invocation) throws {
        _ = try invocation.config()
        let list = try WitnessList.load(invocation.home)
        let keys = try list.witnesses.map { try $0.cosignerKey() }
        if invocation.json {
            invocation.printJSON(
                .object([
                    "quorum": .integer(Int64(list.effectiveQuorum)), "quorum_set": .bool(list.quorum != nil),
                    "witnesses": .array(
                        zip(list.witnesses, keys).map { entry, key in
                            .object([
                                "url": .string(entry.url), "name": .string(key.name),
                                "key_id": .string(Hex.encode(key.keyID)), "key": .string(entry.key),
                            ])
                        }),
                ]))
            return
        }
        guard !list.witnesses.isEmpty else {
            invocation.stdout.line(
                "No witness is configured: add one with 'jqc witness add URL --key VKEY' (its submission prefix and "
                    + "its cosigner verifier key, from its operator).")
            return
        }
        for (entry, key) in zip(list.witnesses, keys) {
            invocation.stdout.line("\(entry.url)  \(key.name)  key \(Hex.encode(key.keyID))")
        }
        invocation.stdout.line(
            "quorum: \(list.effectiveQuorum) of \(list.witnesses.count)"
                + (list.quorum == nil ? " (all, the default)" : ""))
    }
}

/// `jqc witness add URL --key VKEY`.
struct WitnessAddCommand: RunnableCommand {
    static let path = ["witness", "add"]
    static let urlArgument = PositionalSpec(
        "URL", help: "The witness's submission prefix (jqc posts to URL/add-checkpoint).")
    static let key = OptionSpec(
        "key", valueName: "VKEY",
        help: "The witness's cosigner verifier key, name+keyid+base64(0x04 and its Ed25519 key), from its operator.")
    static let spec = CommandSpec(
        "add",
        abstract: "Add a witness by its URL and its cosigner key (a key whose key id does not match is refused).",
        discussion: """
            Prints this log's origin and verifier key: the witness's operator must enrol them, else the \
            witness answers that it does not know this log. The next 'jqc sync' (or 'jqc witness sync') \
            submits the checkpoint to it.
            """,
        positionals: [urlArgument], options: [key])

    var url: String
    var vkey: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        url = try parsed.require(Self.urlArgument)
        vkey = try parsed.require(Self.key)
    }

    func run(_ invocation: Invocation) throws {
        _ = try invocation.config()
        var list = try WitnessList.load(invocation.home)
        let added = try list.add(url: url, key: vkey)
        try list.save(invocation.home)
        let logKey = try DeviceKeyFile.ensure(invocation)
        let entry = WitnessList.normalized(url)
        if invocation.json {
            invocation.printJSON(
                .object([
                    "url": .string(entry), "name": .string(added.name), "key_id": .string(Hex.encode(added.keyID)),
                    "origin": .string(logKey.name), "log_key": .string(logKey.verifierKey),
                    "quorum": .integer(Int64(list.effectiveQuorum)),
                ]))
            return
        }
        invocation.stdout.line("Witness \(added.name) (key \(Hex.encode(added.keyID))) added at \(entry).")
        invocation.stdout.line(
            "Its operator must enrol this log: origin \(logKey.name), key \(logKey.verifierKey)")
        invocation.stdout.line(
            "Each sync now submits this device's checkpoint to it; quorum: \(list.effectiveQuorum) of "
                + "\(list.witnesses.count).")
    }
}

/// `jqc witness remove URL`.
struct WitnessRemoveCommand: RunnableCommand {
    static let path = ["witness", "remove"]
    static let urlArgument = PositionalSpec("URL", help: "The URL of a configured witness ('jqc witness list').")
    static let spec = CommandSpec(
        "remove", abstract: "Stop submitting checkpoints to a witness (what it cosigned stays recorded).",
        positionals: [urlArgument])

    var url: String

    init(_ parsed: ParsedCommand) throws(UsageError) { url = try parsed.require(Self.urlArgument) }

    func run(_ invocation: Invocation) throws {
        _ = try invocation.config()
        var list = try WitnessList.load(invocation.home)
        let removed = try list.remove(url: url)
        // A quorum larger than what is left would never be met: it falls back to all.
        if let quorum = list.quorum, quorum > list.witnesses.count { list.quorum = nil }
        try list.save(invocation.home)
        if invocation.json {
            invocation.printJSON(.object(["removed": .string(removed.url)]))
            return
        }
        invocation.stdout.line(
            "Witness at \(removed.url) removed; \(list.witnesses.count) remain"
                + (list.witnesses.isEmpty ? " (the history is no longer witnessed)." : "."))
    }
}

/// `jqc witness sync`: the witness step of a sync, now, without the server.
struct WitnessSyncCommand: CommandWithoutArguments {
    static let path = ["witness", "sync"]
    static let spec = CommandSpec(
        "sync", abstract: "Submit this device's checkpoint to every configured witness now.",
        discussion: """
            The same step 'jqc sync' runs after sending: each witness gets 'POST <URL>/add-checkpoint' with the \
            consistency proof from the checkpoint it last cosigned, and each cosignature that verifies against \
            its key is recorded (checkpoint.cosigned) and kept in cosigned-checkpoint. Exit status 1 when a \
            witness refused the checkpoint as another history (a fork), answered with a cosignature that does \
            not verify, or when the quorum was not met.
            """)

    func run(_ invocation: Invocation) throws {
        let config = try invocation.config()
        let list = try WitnessList.load(invocation.home)
        guard !list.witnesses.isEmpty else { throw JQCError.noWitness }
        let ledger = try invocation.ledger()
        let cosigning = WitnessCosigning(
            list: list, directory: invocation.home, device: config.deviceID,
            key: { try DeviceKeyFile.ensure(invocation) })
        let round = try cosigning.run(
            ledger: ledger, transport: try invocation.httpClient(connections: 1), clock: invocation.clock)
        if invocation.json {
            invocation.printJSON(round.jsonValue)
        } else {
            for line in round.lines { invocation.stdout.line(TerminalText.singleLine(line)) }
        }
        if round.isAlarm {
            throw JQCError.verificationFailed(
                TerminalText.singleLine(round.results.filter(\.isAlarm).map(\.line).joined(separator: "; ")))
        }
        guard round.quorumMet else {
            throw JQCError.quorumNotMet(cosigned: round.cosignedCount, quorum: round.quorum)
        }
    }
}
