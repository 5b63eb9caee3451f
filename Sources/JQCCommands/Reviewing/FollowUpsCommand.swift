import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

struct FollowUpsCommand: InspectionListingCommand {
    static let path = ["followups"]
    static let listing = InspectionLedger.Listing.followUps
    static let spec = CommandSpec(
        "followups", abstract: "List completed inspections whose follow-up is still open.", group: "Reviewing")
}
