import FoundationEssentials
import InspectionDomain
import LedgerCore
import SyncWorker

/// One page of `jqc history`: read whole from the server's listing, or,
/// with a filter, from its records kept by `HistoryFilter` (the newest
/// `APIClient.filteredHistoryLimit` read at most); then worded: the rows of
/// its table, the line when it is empty and the line under it.
public struct HistoryPage {
    public var inspections: [JSONValue]
    /// The records in all (with a filter, those it keeps).
    public var total: Int
    /// Whether every record was read (false when a filter stopped at the limit).
    public var complete: Bool
    public let limit: Int
    public let offset: Int
    public let filter: HistoryFilter

    public init(
        inspections: [JSONValue], total: Int, complete: Bool = true, limit: Int, offset: Int, filter: HistoryFilter
    ) {
        self.inspections = inspections
        self.total = total
        self.complete = complete
        self.limit = limit
        self.offset = offset
        self.filter = filter
    }

    /// The page, asked of `all` (the server's listing) without a filter and
    /// of `filtered` (the records it admits) with one.
    public static func read(
        limit: Int, offset: Int, filter: HistoryFilter,
        all: (_ limit: Int, _ offset: Int) throws(APIError) -> (inspections: [JSONValue], total: Int),
        filtered: (_ limit: Int, _ offset: Int, _ admits: (ServerInspectionRecord) -> Bool) throws(APIError) -> (
            inspections: [JSONValue], matched: Int, complete: Bool
        )
    ) throws(APIError) -> HistoryPage {
        guard !filter.isEmpty else {
            let page = try all(limit, offset)
            return HistoryPage(
                inspections: page.inspections, total: page.total, limit: limit, offset: offset, filter: filter)
        }
        let found = try filtered(limit, offset, filter.admits)
        return HistoryPage(
            inspections: found.inspections, total: found.matched, complete: found.complete, limit: limit,
            offset: offset, filter: filter)
    }

    /// The table's header.
    public static let header = [
        "ID", "COMPLETED (UTC)", "TEMPLATE", "FACILITY", "INSPECTOR", "SCORE", "FOLLOW-UP", "CLIENT ID",
    ]

    /// A row per record: "-" for what the server left out, the completion to
    /// the minute in UTC, the area after the facility, the score to two decimals.
    public var rows: [[String]] {
        func text(_ value: JSONValue?) -> String {
            switch value {
            case .string(let s)?: s
            case .number(let n)?: n
            case .bool(let b)?: b ? "yes" : "no"
            default: "-"
            }
        }
        return inspections.map { i in
            [
                text(i["id"]), Self.completedText(i["completed_at"]), text(i["template_name"]),
                text(i["facility_name"]) + (i["area_name"]?.stringValue.map { " / \($0)" } ?? ""),
                text(i["inspector_name"]), Self.score(i["overall_score"]), text(i["follow_up_required"]),
                String(text(i["client_id"]).prefix(8)),
            ]
        }
    }

    private var searched: String {
        complete ? "" : " (only the newest \(APIClient.filteredHistoryLimit) records were read)"
    }

    /// What an empty page says; nil when it has records.
    public var emptyLine: String? {
        guard inspections.isEmpty else { return nil }
        if !filter.isEmpty, total == 0 { return "None of the server's records matches the filter\(searched)." }
        return total == 0 ? "The server has no completed inspections yet." : "No more: \(total) in all."
    }

    /// The line under the table: which records of how many.
    public var footer: String {
        "\(offset + 1)-\(offset + inspections.count) of \(total)\(filter.isEmpty ? "" : " matching the filter")\(searched)"
    }

    /// A completion time as the listing prints it: to the minute, in UTC,
    /// so every row is in the one zone the header names. A time the server
    /// sent with an offset is moved to UTC; one without a zone (the
    /// reference backend's) is read as UTC, as `history --since` and
    /// `history show` read it; one that is no time, as the server wrote it.
    public static func completedText(_ value: JSONValue?) -> String {
        guard case .string(let text)? = value else { return "-" }
        guard let time = Timestamp(iso8601: text) ?? Timestamp(iso8601: text + "Z") else {
            return String(text.prefix(16))
        }
        return String(time.iso8601.prefix(16))
    }

    /// A score as every listing prints it (two decimals, as `jqc inspections`),
    /// whatever form the server sent it in (`52`, `48.0`); "-" for none.
    public static func score(_ value: JSONValue?) -> String {
        guard let number = value?.doubleValue, number.isFinite else { return "-" }
        return FixedPoint.text(number, places: 2)
    }
}
