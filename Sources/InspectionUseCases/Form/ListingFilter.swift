import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore

/// Which inspections a listing shows (`jqc inspections --facility … --status …`):
/// every condition given must hold; none given shows them all.
///
/// - `facility`: the facility's id, or its name ignoring case;
/// - `area`: the area's name ignoring case (the listing's rows carry the name);
/// - `status`: `draft` or `completed` (the listings hide discarded drafts);
/// - `since`/`until`: when it was started, a bare date being the whole day
///   (`LogMoment`'s rule); an inspection not started yet matches neither;
/// - `inspector`: who started it, any part of the name recorded, ignoring
///   case (as `jqc log --actor` matches a name).
public struct InspectionFilter: Equatable, Sendable {
    public var facility: String?
    public var area: String?
    public var status: InspectionStatus?
    public var since: LogMoment?
    public var until: LogMoment?
    public var inspector: String?

    public init(
        facility: String? = nil, area: String? = nil, status: InspectionStatus? = nil, since: LogMoment? = nil,
        until: LogMoment? = nil, inspector: String? = nil
    ) {
        self.facility = facility
        self.area = area
        self.status = status
        self.since = since
        self.until = until
        self.inspector = inspector
    }

    /// Whether no condition is set.
    public var isEmpty: Bool { self == InspectionFilter() }

    public func admits(_ summary: InspectionSummary) -> Bool {
        admits(
            facilityID: summary.facilityID, facilityName: summary.facilityName, areaName: summary.areaName,
            status: summary.status, startedAt: summary.startedAt, startedBy: summary.startedBy)
    }

    /// The rule on the values a listing's row carries.
    public func admits(
        facilityID: String, facilityName: String, areaName: String?, status: InspectionStatus, startedAt: Timestamp?,
        startedBy: String
    ) -> Bool {
        if let facility, !ListingFilterText.names(facility, id: facilityID, name: facilityName) { return false }
        if let area, !ListingFilterText.same(area, areaName) { return false }
        if let wanted = self.status, status != wanted { return false }
        if let inspector, !ListingFilterText.part(inspector, of: startedBy) { return false }
        if since != nil || until != nil {
            guard let startedAt else { return false }
            if let since, !since.admitsAsLowerBound(position: 0, recordedAt: startedAt) { return false }
            if let until, !until.admitsAsUpperBound(position: 0, recordedAt: startedAt) { return false }
        }
        return true
    }

    public func apply(_ summaries: [InspectionSummary]) -> [InspectionSummary] { summaries.filter(admits) }
}

/// Which issues `jqc issues --severity … --facility …` shows.
public struct IssueFilter: Equatable, Sendable {
    public var severity: IssueSeverity?
    public var facility: String?

    public init(severity: IssueSeverity? = nil, facility: String? = nil) {
        self.severity = severity
        self.facility = facility
    }

    public var isEmpty: Bool { self == IssueFilter() }

    public func admits(_ row: IssueRow) -> Bool {
        admits(severity: row.severity, facilityID: row.facilityID, facilityName: row.facilityName)
    }

    /// The rule on the values an issue's row carries.
    public func admits(severity: IssueSeverity, facilityID: String, facilityName: String) -> Bool {
        if let wanted = self.severity, severity != wanted { return false }
        if let facility, !ListingFilterText.names(facility, id: facilityID, name: facilityName) { return false }
        return true
    }

    public func apply(_ rows: [IssueRow]) -> [IssueRow] { rows.filter(admits) }
}

/// How a filter's text names a recorded value.
enum ListingFilterText {
    /// The same text, ignoring case and surrounding blanks.
    static func same(_ wanted: String, _ value: String?) -> Bool {
        guard let value else { return false }
        return wanted.trimming(.spaces).lowercased()
            == value.trimming(.spaces).lowercased()
    }

    /// Any part of the name, ignoring case and surrounding blanks, as
    /// `jqc log --actor` matches a name ("dana" finds "Dana Ortiz"); an empty
    /// text finds every name.
    static func part(_ wanted: String, of value: String?) -> Bool {
        guard let value else { return false }
        let folded = wanted.trimming(.spaces).lowercased()
        return folded.isEmpty || value.lowercased().contains(folded)
    }

    /// The id exactly, or the name ignoring case.
    static func names(_ wanted: String, id: String, name: String) -> Bool {
        wanted.trimming(.spaces) == id || same(wanted, name)
    }
}
