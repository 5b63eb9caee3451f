import ArgumentParsing
import FoundationEssentials
import Glibc
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc service uninstall`.
struct ServiceUninstallCommand: CommandWithoutArguments {
    static let path = ["service", "uninstall"]
    static let spec = CommandSpec(
        "uninstall", abstract: "Stop and disable the user unit and remove its file (the ledger is not touched).")

    func run(_ invocation: Invocation) throws {
        let service = SyncServiceUnit(environment: invocation.environment)
        let out = invocation.stdout
        let exists = FileManager.default.fileExists(atPath: service.userUnitPath)
        if service.hasUserManager {
            _ = service.userManager(["disable", "--now", SyncServiceUnit.unitName])
        }
        if exists {
            guard unlink(service.userUnitPath) == 0 else {
                throw JQCError.io("removing \(service.userUnitPath)", errno)
            }
            if service.hasUserManager { _ = service.userManager(["daemon-reload"]) }
        }
        if invocation.json {
            invocation.printJSON(.object(["unit": .string(service.userUnitPath), "removed": .bool(exists)]))
            return
        }
        if exists {
            out.line("Removed \(service.userUnitPath); nothing syncs in the background any more ('jqc sync' by hand).")
        } else {
            out.line("\(service.userUnitPath) is not there; nothing was removed.")
        }
        if let shared = service.installedUnitPath {
            out.line(
                "\(shared) (from the package) remains for every user; 'systemctl --user disable --now "
                    + "\(SyncServiceUnit.unitName)' keeps it from starting for you.")
        }
    }
}
