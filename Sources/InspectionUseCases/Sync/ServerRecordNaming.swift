import FoundationEssentials
import InspectionStore
import LedgerCore
import SyncWorker

/// The names this device's reference data knows for what a server record
/// names only by id: `jqc history show` says "area Lobby restrooms (1001)"
/// and each answer's field label where the reference backend sends ids
/// alone, and `jqc history --area NAME` finds the records of that area by
/// its id. Nothing pulled, nothing named: the server's own names always win.
public enum ServerRecordNaming {
    /// The names the reference cache of `ledger` holds for `record`'s ids.
    public static func names(for record: ServerInspectionRecord, in ledger: InspectionLedger) throws
        -> ServerRecordNames
    {
        let facility = try ledger.reference.facility(id: record.facilityID)
        let template = try ledger.reference.template(id: record.templateID)
        return ServerRecordNames(
            templateName: template?.name, facilityName: facility?.name,
            areaName: record.areaID.flatMap { id in facility?.areas.first { $0.id == id }?.name },
            fieldLabels: Dictionary(
                (template?.fields ?? []).map { ($0.id.rawValue, $0.label) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The ids of the areas pulled here whose name is `name`, ignoring case
    /// (an area's name is unique only within its facility, so there may be
    /// several).
    public static func areaIDs(named name: String, in ledger: InspectionLedger) throws -> Set<String> {
        let wanted = name.trimming(.spaces).lowercased()
        return Set(
            try ledger.reference.allFacilities().flatMap(\.areas).filter { $0.name.lowercased() == wanted }.map(\.id))
    }
}
