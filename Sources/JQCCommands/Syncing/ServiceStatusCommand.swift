import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc service status`.
struct ServiceStatusCommand: CommandWithoutArguments {
    static let path = ["service", "status"]
    static let spec = CommandSpec("status", abstract: "Say whether the background sync is installed and running.")

    func run(_ invocation: Invocation) throws { try Self.show(invocation) }

    static func show(_ invocation: Invocation) throws {
        let service = SyncServiceUnit(environment: invocation.environment)
        let state = service.state()
        if invocation.json {
            invocation.printJSON(
                .object([
                    "state": .string(state.word), "unit": .optional(state.unitPath),
                    "user_unit_path": .string(service.userUnitPath),
                ]))
            return
        }
        invocation.stdout.line("\(SyncServiceUnit.unitName): " + state.line)
    }
}
