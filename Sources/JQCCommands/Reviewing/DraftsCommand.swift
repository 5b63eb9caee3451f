import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

struct DraftsCommand: InspectionListingCommand {
    static let path = ["drafts"]
    static let listing = InspectionLedger.Listing.drafts
    static let spec = CommandSpec("drafts", abstract: "List draft inspections.", group: "Reviewing")
}
