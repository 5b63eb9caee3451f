import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore

/// An inspection's form as `jqc show` presents it: in text for a person and
/// as JSON for scripts (shape documented in `Schemas/cli-json.md`).
struct FormReport {
    let state: InspectionState

    var scoreSoFar: Double? { state.template.flatMap { Score.compute(template: $0, values: state.values) } }

    var json: [String: Any] {
        func time(_ t: Timestamp?) -> Any { t?.iso8601 ?? NSNull() }
        let inputs = (state.template?.fields ?? []).filter { !$0.type.isDisplayOnly }
        // An answer that counts as unanswered (rating 0, pass_fail "", blank
        // text) is null, as for a field never set.
        func value(_ field: TemplateField) -> Any {
            guard let value = state.values[field.id], !value.isEmpty else { return NSNull() }
            return value.jsonValue.foundationObject
        }
        let fields: [[String: Any]] = inputs.map { field in
            [
                "id": field.id.rawValue, "label": field.label, "type": field.type.rawValue, "required": field.required,
                "value": value(field),
            ]
        }
        let issues: [[String: Any]] = state.issues.map { issue in
            [
                "id": issue.id.lowercased, "severity": issue.severity.rawValue, "description": issue.description,
                "photo_id": issue.photoID?.lowercased ?? NSNull(), "flagged_at": issue.flaggedAt.iso8601,
                "server_id": state.sync.acceptedIssues[issue.id] ?? NSNull(),
                "possibly_sent_twice": state.sync.issuesPossiblySentTwice.contains(issue.id),
            ]
        }
        let photos: [[String: Any]] = state.photos.map { photo in
            [
                "id": photo.photo.photoID.lowercased, "sha256": photo.photo.sha256.hex, "size": photo.photo.size,
                "media_type": photo.photo.mediaType, "kind": photo.kind.rawValue,
                "field_id": photo.fieldID?.rawValue ?? NSNull(), "issue_id": photo.issueID?.lowercased ?? NSNull(),
                "server_path": state.sync.uploadedPhotos[photo.photo.photoID] ?? NSNull(),
            ]
        }
        return [
            "id": state.id.lowercased, "status": state.status.rawValue,
            "template": [
                "id": state.templateID, "name": state.template?.name ?? "", "hash": state.templateHash,
            ],
            "facility": ["id": state.facilityID, "name": state.facilityName],
            "area": state.areaID.map { ["id": $0, "name": state.areaName ?? ""] } ?? NSNull(),
            "parent_id": state.parentInspectionID?.lowercased ?? NSNull(),
            "started_at": time(state.startedAt), "started_by": state.startedBy?.name ?? NSNull(),
            "completed_at": time(state.completedAt), "score": state.score ?? NSNull(),
            "score_so_far": scoreSoFar ?? NSNull(), "follow_up_required": state.followUpRequired,
            "follow_up_outstanding": state.followUpOutstanding,
            "follow_up_resolved_by": state.followUpResolvedBy?.lowercased ?? NSNull(),
            "fields": fields, "missing_required": state.missingRequiredFields().map(\.id.rawValue),
            "issues": issues, "photos": photos,
            "sync": [
                "state": SyncState.of(state).rawValue, "server_id": state.sync.serverID as Any? ?? NSNull(),
                "notes": state.syncNotes,
            ],
        ]
    }

    /// The form as text: every person-written part through `terminalSafe`.
    var text: String {
        var lines: [String] = []
        let template = state.template
        lines.append("Inspection \(state.id.lowercased)  [\(state.status.rawValue)]")
        lines.append(
            "  \((template?.name ?? state.templateID).terminalSafe) at \(state.facilityName.terminalSafe)"
                + (state.areaName.map { ", \($0.terminalSafe)" } ?? ""))
        if let started = state.startedAt {
            lines.append("  started \(started.iso8601) by \(state.startedBy?.name.terminalSafe ?? "?")")
        }
        if let completed = state.completedAt { lines.append("  submitted \(completed.iso8601)") }
        if let parent = state.parentInspectionID { lines.append("  re-inspection of \(parent.lowercased)") }
        lines.append("")
        let missing = Set(state.missingRequiredFields().map(\.id))
        for field in template?.fields ?? [] {
            if field.type == .section {
                lines.append("== \(field.label.terminalSafe)")
                continue
            }
            if field.type == .label {
                lines.append("   \(field.label.terminalSafe)")
                continue
            }
            let marker = missing.contains(field.id) ? "!" : (field.required ? "*" : " ")
            let value = state.values[field.id].map(\.displayText.terminalSafe) ?? "—"
            lines.append(
                " \(marker) [\(field.id.rawValue.terminalSafe)] \(field.label.terminalSafe) (\(field.type.rawValue)): \(value)"
            )
        }
        lines.append("")
        if !missing.isEmpty {
            lines.append(
                "Still required: " + state.missingRequiredFields().map(\.label.terminalSafe).joined(separator: ", "))
        }
        let score = state.score ?? scoreSoFar
        lines.append(
            (state.status == .completed ? "Score: " : "Score so far: ")
                + (score.map { String(format: "%.2f", $0) } ?? "none"))
        if state.followUpRequired {
            lines.append(
                "Follow-up: "
                    + (state.followUpResolvedBy.map { "cleared by re-inspection \($0.lowercased)" }
                        ?? "required (re-inspect with 'jqc start --reinspect \(state.id.lowercased.prefix(8))')"))
        }
        if !state.issues.isEmpty {
            lines.append("Issues:")
            for issue in state.issues {
                lines.append(
                    "  \(issue.id.lowercased.prefix(8)) [\(issue.severity.rawValue)] \(issue.description.terminalSafe)"
                        + (issue.photoID != nil ? " (photo)" : ""))
            }
        }
        if !state.photos.isEmpty { lines.append("Photos: \(state.photos.count)") }
        lines.append(
            "Sync: \(SyncState.of(state).rawValue)"
                + (state.sync.serverID.map { " (server id \($0.terminalSafe))" } ?? ""))
        for note in state.syncNotes { lines.append("  \(TerminalText.singleLine(note))") }
        // Each person-written part is one line already; this also catches
        // whatever a part not listed above (an id from a hostile log) holds.
        return TerminalText.safe(lines.joined(separator: "\n"))
    }
}

extension JSONValue {
    /// The value as Foundation objects, for `JSONSerialization` output.
    var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let b): b
        case .number(let text): Decimal(string: text).map { NSDecimalNumber(decimal: $0) } ?? text
        case .string(let s): s
        case .array(let items): items.map(\.foundationObject)
        case .object(let members):
            Dictionary(members.map { ($0.key, $0.value.foundationObject) }, uniquingKeysWith: { $1 })
        }
    }
}
