import FoundationEssentials
import InspectionAudit
import LedgerCore
import SyncWorker

/// Which of the server's records `jqc history --facility … --since …` shows:
/// every condition given must hold, by the rules of `InspectionFilter`, on
/// what the server's summary carries (the completion time, not the start,
/// which the reference backend does not keep).
public struct HistoryFilter: Equatable, Sendable {
    public var facility: String?
    public var area: String?
    public var since: LogMoment?
    public var until: LogMoment?
    public var inspector: String?
    /// Only records whose follow-up is (true) or is not (false) required.
    public var followUp: Bool?
    /// The ids of the areas this device's reference data names `area`
    /// (`ServerRecordNaming.areaIDs`): the reference backend's summary has
    /// an area's id, not its name.
    public var areaIDs: Set<String> = []

    public init(
        facility: String? = nil, area: String? = nil, since: LogMoment? = nil, until: LogMoment? = nil,
        inspector: String? = nil, followUp: Bool? = nil
    ) {
        self.facility = facility
        self.area = area
        self.since = since
        self.until = until
        self.inspector = inspector
        self.followUp = followUp
    }

    public var isEmpty: Bool { self == HistoryFilter() }

    public func admits(_ record: ServerInspectionRecord) -> Bool {
        if let facility, !ListingFilterText.names(facility, id: record.facilityID, name: record.facilityName ?? "") {
            return false
        }
        if let area {
            let byID = record.areaID.map { $0 == area || areaIDs.contains($0) } ?? false
            if !(ListingFilterText.same(area, record.areaName) || byID) { return false }
        }
        if let inspector, !ListingFilterText.part(inspector, of: record.inspectorName) { return false }
        if let followUp, record.followUpRequired != followUp { return false }
        if since != nil || until != nil {
            guard let text = record.completedAt,
                let completed = Timestamp(iso8601: text) ?? Timestamp(iso8601: text + "Z")
            else { return false }
            if let since, !since.admitsAsLowerBound(position: 0, recordedAt: completed) { return false }
            if let until, !until.admitsAsUpperBound(position: 0, recordedAt: completed) { return false }
        }
        return true
    }
}
