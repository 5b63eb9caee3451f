import FoundationEssentials
import InspectionDomain
import LedgerCore
import SyncWorker

/// What this device knows of a server record's ids that the server's
/// summary leaves out (the reference backend sends an area's id, not its
/// name): names from the reference data pulled here, each only where the
/// server gave none.
public struct ServerRecordNames: Sendable, Equatable {
    public var templateName: String?
    public var facilityName: String?
    public var areaName: String?
    /// Field id → its label, from the template pulled here.
    public var fieldLabels: [String: String]

    public init(
        templateName: String? = nil, facilityName: String? = nil, areaName: String? = nil,
        fieldLabels: [String: String] = [:]
    ) {
        self.templateName = templateName
        self.facilityName = facilityName
        self.areaName = areaName
        self.fieldLabels = fieldLabels
    }
}

/// One record of the server's history in detail, as `jqc history show`
/// gives it: the lines of text (names made single-line, "—" for what the
/// server left out, the form's answers by field id, numbers first) and the
/// JSON object of the CLI's schema (`history_show`). Wording, so a use case
/// of its own: `SyncWorker` reads the record (`ServerInspectionRecord`),
/// this says it.
extension ServerInspectionRecord {
    /// The record as lines of text; `names` fills in what the server left
    /// out (an area's name, each answer's field label).
    public func detailLines(names: ServerRecordNames = ServerRecordNames()) -> [String] {
        let shown = { (text: String?) in text.map(TerminalText.singleLine) ?? "—" }
        var lines = [
            "Server record \(id)",
            "  template:   \(shown(templateName ?? names.templateName)) (\(templateID))",
            "  facility:   \(shown(facilityName ?? names.facilityName)) (\(facilityID))"
                + (areaID.map { ", area \(shown(areaName ?? names.areaName)) (\($0))" } ?? ""),
            "  inspector:  \(shown(inspectorName))",
            "  completed:  \(Self.timeText(completedAt))",
            "  score:      \(score.map(Self.scoreText) ?? "—")",
            "  follow-up:  "
                + (followUpRequired ? "required: 'jqc start --reinspect \(id)' re-inspects it here" : "not required"),
            "  parent:     \(parentID.map { "re-inspection of server record \($0)" } ?? "—")",
        ]
        if let form = formData {
            lines.append("  form (\(form.count) \(form.count == 1 ? "answer" : "answers")):")
            for key in form.keys.sorted(by: { (Int($0) ?? .max, $0) < (Int($1) ?? .max, $1) }) {
                let label = names.fieldLabels[key].map { " \"\(TerminalText.singleLine($0))\"" } ?? ""
                lines.append(
                    "    \(TerminalText.singleLine(key))\(label): \(TerminalText.singleLine(form[key]!.serialized()))")
            }
        } else {
            lines.append("  form:       not sent by the server")
        }
        return lines
    }

    /// A time as the server sent it, with its zone: one without a zone
    /// (the reference backend's) is read as UTC, as `history --since`
    /// reads it, and says so.
    public static func timeText(_ text: String?) -> String {
        guard let text else { return "—" }
        let shown = TerminalText.singleLine(text)
        if Timestamp(iso8601: text) == nil, Timestamp(iso8601: text + "Z") != nil {
            return shown + " UTC (the server gave no zone; read as UTC)"
        }
        return shown
    }

    /// A score as the server sent it, two decimals at most ("52", "48.5");
    /// what is not a number, as the server wrote it.
    public static func scoreText(_ value: JSONValue) -> String {
        guard case .number(let text) = value, let number = Double(text) else {
            return TerminalText.singleLine(value.serialized())
        }
        let rounded = (number * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// The record as the JSON object of `jqc history show --json`.
    public var detailJSON: JSONValue {
        .object([
            .init("id", .string(id)), .init("template_id", .string(templateID)),
            .init("template_name", .optional(templateName)), .init("facility_id", .string(facilityID)),
            .init("facility_name", .optional(facilityName)), .init("area_id", .optional(areaID)),
            .init("area_name", .optional(areaName)), .init("inspector_name", .optional(inspectorName)),
            .init("completed_at", .optional(completedAt)), .init("overall_score", score ?? .null),
            .init("follow_up_required", .bool(followUpRequired)),
            .init("parent_id", .optional(parentID)),
            .init(
                "form_data",
                formData.map { form in
                    .object(form.sorted { $0.key < $1.key }.map { JSONValue.Member($0.key, $0.value) })
                } ?? .null),
        ])
    }
}
