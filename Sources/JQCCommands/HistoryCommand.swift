import ArgumentParsing
import CurlTransport
import Dispatch
import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

/// `jqc history [--limit N] [--offset K]`: the server's completed inspections.
struct HistoryCommand: RunnableCommand {
    static let path = ["history"]
    static let limit = OptionSpec("limit", valueName: "N", help: "How many (1-100).", defaultDescription: "30")
    static let offset = OptionSpec("offset", valueName: "K", help: "How many to skip first.", defaultDescription: "0")
    static let spec = CommandSpec(
        "history", abstract: "List the server's completed inspections, newest first (online only).",
        discussion: "Offline, 'jqc inspections' lists what this device recorded.",
        group: "Syncing",
        options: [limit, offset])

    var limit: Int
    var offset: Int

    init(_ parsed: ParsedCommand) throws(UsageError) {
        limit = try parsed.integer(of: Self.limit, default: 30)
        offset = try parsed.integer(of: Self.offset, default: 0)
        guard (1...100).contains(limit) else {
            throw parsed.invalid(Self.limit, value: "\(limit)", reason: "expected 1 to 100")
        }
        guard (0...Int(Int32.max)).contains(offset) else {
            throw parsed.invalid(Self.offset, value: "\(offset)", reason: "expected 0 to \(Int32.max)")
        }
    }

    func run(_ invocation: Invocation) throws {
        let session = try invocation.serverSession()
        let page = try invocation.online(
            "list the server's history",
            offlineHint: "The history is online only; 'jqc inspections' lists what this device recorded."
        ) { () throws(APIError) in
            try session.authorized { token throws(APIError) in
                try session.api.history(accessToken: token, limit: limit, offset: offset)
            }
        }
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "inspections": .array(page.inspections), "total": .integer(page.total),
                        "limit": .integer(limit), "offset": .integer(offset),
                    ])))
            return
        }
        guard !page.inspections.isEmpty else {
            invocation.stdout.line(
                page.total == 0 ? "The server has no completed inspections yet." : "No more: \(page.total) in all.")
            return
        }
        func text(_ value: JSONValue?) -> String {
            switch value {
            case .string(let s)?: s
            case .number(let n)?: n
            case .bool(let b)?: b ? "yes" : "no"
            default: "-"
            }
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["ID", "COMPLETED", "TEMPLATE", "FACILITY", "INSPECTOR", "SCORE", "FOLLOW-UP", "CLIENT ID"],
                rows: page.inspections.map { i in
                    [
                        text(i["id"]), String(text(i["completed_at"]).prefix(16)), text(i["template_name"]),
                        text(i["facility_name"]) + (i["area_name"]?.stringValue.map { " / \($0)" } ?? ""),
                        text(i["inspector_name"]), Self.score(i["overall_score"]), text(i["follow_up_required"]),
                        String(text(i["client_id"]).prefix(8)),
                    ]
                }))
        let last = offset + page.inspections.count
        invocation.stdout.line("\(offset + 1)-\(last) of \(page.total)")
    }

    /// A score as every listing prints it (two decimals, as `jqc inspections`),
    /// whatever form the server sent it in (`52`, `48.0`); "-" for none.
    static func score(_ value: JSONValue?) -> String {
        guard let number = value?.doubleValue, number.isFinite else { return "-" }
        return String(format: "%.2f", number)
    }
}
