import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc facilities`.
struct FacilitiesCommand: CommandWithoutArguments {
    static let path = ["facilities"]
    static let spec = CommandSpec(
        "facilities", abstract: "List the facilities and their areas (from the last pull).", group: "Setup")

    func run(_ invocation: Invocation) throws {
        let facilities = try invocation.reading { try $0.reference.allFacilities() }
        if invocation.json {
            invocation.printJSON(.array(facilities.map(\.jsonValue)))
            return
        }
        guard !facilities.isEmpty else {
            invocation.stdout.line("No facilities yet: run 'jqc pull' (or 'jqc pull --from FILE').")
            return
        }
        for facility in facilities {
            invocation.stdout.line(
                "\(facility.id.terminalSafe)  \(facility.name.terminalSafe)  (\(facility.address.terminalSafe))")
            for area in facility.areas {
                invocation.stdout.line(
                    "    \(area.id.terminalSafe)  \(area.name.terminalSafe)  [\(area.areaType.terminalSafe)]")
            }
        }
    }
}
