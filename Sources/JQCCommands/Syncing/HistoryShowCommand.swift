import ArgumentParsing
import Foundation
import InspectionDomain
import LedgerCore
import SyncWorker

/// `jqc history show SERVER_ID`: one record of the server's history in
/// detail (the reference app's history detail), online.
struct HistoryShowCommand: RunnableCommand {
    static let path = ["history", "show"]
    static let idArgument = PositionalSpec("SERVER_ID", help: "The record's id on the server (see 'jqc history').")
    static let spec = CommandSpec(
        "show", abstract: "Show one of the server's completed inspections: follow-up, parent link, score, form.",
        discussion: """
            Online only. 'jqc start --reinspect SERVER_ID' starts a re-inspection of it on this device.
            """,
        group: "Syncing",
        positionals: [idArgument])

    var id: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(Self.idArgument)
        guard APIClient.isServerID(id) else {
            throw parsed.invalid(Self.idArgument, value: id, reason: "expected a server id: a whole number ≥ 1")
        }
    }

    /// The record with server id `id`, fetched online; refused when the server has none.
    static func record(_ id: String, _ invocation: Invocation) throws -> ServerInspectionRecord {
        let session = try invocation.serverSession()
        let record = try invocation.online(
            "read the server's history",
            offlineHint: "The server's records are online only; 'jqc inspections' lists what this device recorded."
        ) { () throws(APIError) in
            try session.authorized { token throws(APIError) in
                try session.api.historyRecord(id: id, accessToken: token)
            }
        }
        guard let record else {
            throw JQCError.notFound(
                kind: "inspection", reference: id,
                hint: "Neither this device nor the server's history has it; 'jqc history' lists the server's records.")
        }
        return record
    }

    func run(_ invocation: Invocation) throws {
        let record = try Self.record(id, invocation)
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(Self.json(record)))
            return
        }
        let shown = { (text: String?) in text.map(TerminalText.singleLine) ?? "—" }
        var lines = [
            "Server record \(record.id)",
            "  template:   \(shown(record.templateName)) (\(record.templateID))",
            "  facility:   \(shown(record.facilityName)) (\(record.facilityID))"
                + (record.areaID.map { ", area \(shown(record.areaName)) (\($0))" } ?? ""),
            "  inspector:  \(shown(record.inspectorName))",
            "  completed:  \(shown(record.completedAt))",
            "  score:      \(record.score.map(Self.score) ?? "—")",
            "  follow-up:  "
                + (record.followUpRequired
                    ? "required: 'jqc start --reinspect \(record.id)' re-inspects it here" : "not required"),
            "  parent:     \(record.parentID.map { "re-inspection of server record \($0)" } ?? "—")",
        ]
        if let form = record.formData {
            lines.append("  form (\(form.count) \(form.count == 1 ? "answer" : "answers")):")
            for key in form.keys.sorted(by: { (Int($0) ?? .max, $0) < (Int($1) ?? .max, $1) }) {
                lines.append("    \(TerminalText.singleLine(key)): \(TerminalText.singleLine(form[key]!.serialized()))")
            }
        } else {
            lines.append("  form:       not sent by the server")
        }
        for line in lines { invocation.stdout.line(line) }
    }

    /// A score as the server sent it, two decimals at most ("52", "48.5").
    static func score(_ value: JSONValue) -> String {
        guard case .number(let text) = value, let number = Double(text) else {
            return TerminalText.singleLine(value.serialized())
        }
        let rounded = (number * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func json(_ record: ServerInspectionRecord) -> JSONValue {
        .object([
            .init("id", .string(record.id)), .init("template_id", .string(record.templateID)),
            .init("template_name", .optional(record.templateName)), .init("facility_id", .string(record.facilityID)),
            .init("facility_name", .optional(record.facilityName)), .init("area_id", .optional(record.areaID)),
            .init("area_name", .optional(record.areaName)), .init("inspector_name", .optional(record.inspectorName)),
            .init("completed_at", .optional(record.completedAt)), .init("overall_score", record.score ?? .null),
            .init("follow_up_required", .bool(record.followUpRequired)),
            .init("parent_id", .optional(record.parentID)),
            .init(
                "form_data",
                record.formData.map { form in
                    .object(form.keys.sorted().map { JSONValue.Member($0, form[$0]!) })
                } ?? .null),
        ])
    }
}
