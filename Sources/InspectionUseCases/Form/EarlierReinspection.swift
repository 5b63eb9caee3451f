import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore

/// `jqc start --reinspect ID` given an inspection this device already
/// re-inspects: nothing forbids a second re-inspection (a first one may
/// have gone wrong), but starting one without a word is how a follow-up
/// ends up on the server twice. This finds the earlier ones, not discarded,
/// so the command can say so.
public enum EarlierReinspection {
    /// The inspections on this ledger, not discarded, that already
    /// re-inspect what `start` re-inspects (a local inspection, through the
    /// reinspections view; a server record, among the drafts and submitted
    /// ones by their `parent_server_id`); empty when `start` is no
    /// re-inspection.
    public static func of(_ start: StartInspection, in ledger: InspectionLedger) throws -> [InspectionSummary] {
        let rows = try ledger.summaries(.all).filter { $0.status != .discarded }
        if let parent = start.parent?.id {
            return rows.filter { $0.parentID == parent }
        }
        guard let server = start.serverParent?.serverID else { return [] }
        return try rows.filter { row in try ledger.state(of: row.id)?.parentServerID == server }
    }

    /// The note `jqc start` prints on stderr after starting one more.
    public static func note(_ earlier: [InspectionSummary], started: UUID) -> String {
        let listed = earlier.map {
            "\($0.id.lowercased.prefix(8)) (\($0.status == .completed ? "submitted" : "draft"))"
        }.joined(separator: ", ")
        let them = earlier.count == 1 ? "it" : "one of them"
        return "note: this device already re-inspects the same inspection in \(listed); "
            + "\(started.lowercased.prefix(8)) is one more. If that was a mistake, discard \(them) or this one: "
            + "'jqc discard ID --reason TEXT'."
    }
}
