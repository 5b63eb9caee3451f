import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

// MARK: - init

/// `jqc init`: creates the ledger directory, its store and its device id.
struct InitCommand: RunnableCommand {
    static let path = ["init"]
    static let server = OptionSpec(
        "server", valueName: "URL", help: "The server's API base URL, e.g. https://jqc.example/api/v1.")
    static let caBundle = OptionSpec("ca-bundle", valueName: "FILE", help: "A CA bundle to trust for the server (PEM).")
    static let witness = OptionSpec(
        "witness", valueName: "URL",
        help: "A witness that keeps this device's checkpoints (the witness protocol); none by default.")
    static let spec = CommandSpec(
        "init", abstract: "Create a ledger (the directory, the event log and this device's id).",
        discussion: "The server URL can be given now or later; nothing here needs the network.",
        group: "Setup",
        options: [server, caBundle, witness])

    var server: String?
    var caBundle: String?
    var witness: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        server = try parsed.value(of: Self.server)
        caBundle = try parsed.value(of: Self.caBundle)
        if let server, let why = LedgerSettings.urlProblem(server) {
            throw parsed.invalid(Self.server, value: server, reason: "expected an http:// or https:// URL: \(why)")
        }
        witness = try parsed.value(of: Self.witness)
        if let witness, let why = LedgerSettings.urlProblem(witness) {
            throw parsed.invalid(Self.witness, value: witness, reason: "expected an http:// or https:// URL: \(why)")
        }
    }

    func run(_ invocation: Invocation) throws {
        let home = invocation.home
        let config = try home.create(
            serverURL: server, caBundle: caBundle, witnessURL: witness, at: invocation.clock.now())
        if invocation.json {
            invocation.printJSON(
                .object([
                    "ledger": .string(home.path), "device_id": .string(config.deviceID.lowercased),
                    "server_url": .optional(config.serverURL), "witness_url": .optional(config.witnessURL),
                ]))
        } else {
            invocation.stdout.line("Created a ledger at \(home.path)")
            invocation.stdout.line("Device id \(config.deviceID.lowercased)")
            if let server { invocation.stdout.line("Server \(server)") }
            if let witness { invocation.stdout.line("Witness \(witness)") }
        }
    }
}
