import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc service unit [--exec PATH]`: the unit as shipped, for `Tools/install` and the package.
struct ServiceUnitCommand: RunnableCommand {
    static let path = ["service", "unit"]
    static let exec = OptionSpec(
        "exec", valueName: "PATH", help: "The jqc the unit runs.", defaultDescription: "/usr/bin/jqc")
    static let spec = CommandSpec(
        "unit", abstract: "Print the user unit as packages ship it (the default ledger of each user).",
        options: [exec])

    var executable: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        executable = try parsed.value(of: Self.exec) ?? "/usr/bin/jqc"
        guard executable.hasPrefix("/") else {
            throw parsed.invalid(Self.exec, value: executable, reason: "expected an absolute path")
        }
    }

    func run(_ invocation: Invocation) throws {
        invocation.stdout.write(try SyncServiceUnit.unit(executable: executable, ledger: nil))
    }
}
