import FoundationEssentials
import InspectionDomain

/// One row of the server's history (`GET /inspections?status=completed`),
/// read as the contract's summary: what `jqc history show` prints and a
/// re-inspection of a record this device does not hold starts from. Only
/// `id`, `template_id` and `facility_id` are required; the rest is shown
/// when the server sends it (the reference backend's summary carries the
/// follow-up flag, the parent link and the score, and may leave the form out).
public struct ServerInspectionRecord: Sendable, Equatable {
    public var id: String
    public var templateID: String
    public var templateName: String?
    public var facilityID: String
    public var facilityName: String?
    public var areaID: String?
    public var areaName: String?
    public var inspectorName: String?
    public var completedAt: String?
    public var score: JSONValue?
    public var followUpRequired: Bool
    public var parentID: String?
    /// The answers by field id, when the server sent its form.
    public var formData: [String: JSONValue]?

    /// Reads one history row; a row without an integer id, template or
    /// facility is not a record of the contract.
    public init(row: JSONValue) throws(APIError) {
        id = try APIClient.serverID(row["id"], of: "a record of the history")
        templateID = try APIClient.serverID(row["template_id"], of: "the template of history record \(id)")
        facilityID = try APIClient.serverID(row["facility_id"], of: "the facility of history record \(id)")
        templateName = row["template_name"]?.stringValue
        facilityName = row["facility_name"]?.stringValue
        areaID = row["area_id"]?.integerValue.map(String.init)
        areaName = row["area_name"]?.stringValue
        inspectorName = row["inspector_name"]?.stringValue
        completedAt = row["completed_at"]?.stringValue
        score = row["overall_score"].flatMap { $0 == .null ? nil : $0 }
        followUpRequired = row["follow_up_required"]?.boolValue ?? false
        parentID = row["parent_inspection_id"]?.integerValue.map(String.init)
        if case .object(let members)? = row["form_data"] {
            var form: [String: JSONValue] = [:]
            for member in members { form[member.key] = member.value }
            formData = form
        }
    }
}

extension APIClient {
    /// The history's record with the server id `id`, read page by page
    /// (the contract has no endpoint for one record), or nil when no page
    /// holds it.
    public func historyRecord(id: String, accessToken: String) throws(APIError) -> ServerInspectionRecord? {
        var offset = 0
        let pageSize = 100
        while true {
            let page = try history(accessToken: accessToken, limit: pageSize, offset: offset)
            for row in page.inspections where Self.recordID(row["id"]) == id {
                return try ServerInspectionRecord(row: row)
            }
            offset += page.inspections.count
            if page.inspections.isEmpty || offset >= page.total { return nil }
        }
    }
}

extension APIClient {
    /// The most history records a filtered listing reads (100 pages).
    public static let filteredHistoryLimit = 10_000

    /// The history's records that `admits` keeps, newest first: `limit` of
    /// them after skipping `offset`, with how many it kept in all among the
    /// records it read (every one, unless the history holds more than
    /// `filteredHistoryLimit`: then `complete` is false). A row that is not
    /// a record of the contract is kept by no filter.
    public func filteredHistory(
        accessToken: String, limit: Int, offset: Int, admits: (ServerInspectionRecord) -> Bool
    ) throws(APIError) -> (inspections: [JSONValue], matched: Int, complete: Bool) {
        var kept: [JSONValue] = []
        var matched = 0
        var read = 0
        while read < Self.filteredHistoryLimit {
            let page = try history(accessToken: accessToken, limit: 100, offset: read)
            for row in page.inspections {
                // A row that is not a record of the contract matches no filter, as the doc above says.
                guard let record = try? ServerInspectionRecord(row: row), admits(record) else { continue }
                if matched >= offset && kept.count < limit { kept.append(row) }
                matched += 1
            }
            read += page.inspections.count
            if page.inspections.isEmpty || read >= page.total { return (kept, matched, true) }
        }
        return (kept, matched, false)
    }
}
