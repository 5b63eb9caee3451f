import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore

/// An inspection's form as `jqc show` presents it: in text for a person and
/// as JSON for scripts (shape documented in `Schemas/cli-json.md`).
public struct FormReport: Sendable {
    public let state: InspectionState
    /// This ledger's device id: its own records' actors are shown as
    /// recorded; another device's are that device's claim
    /// (`EventWording.actor`).
    public let ownDevice: UUID?

    /// `ownDevice` nil: the device of the stream's own records
    /// (`InspectionState.device`).
    public init(state: InspectionState, ownDevice: UUID? = nil) {
        self.state = state
        self.ownDevice = ownDevice ?? state.device
    }

    /// `started_by_claim` of `jqc show --json`: null when this device
    /// recorded the start (its actor is what this ledger checked), else
    /// whose word it is (`recorded_by_device`, `actor_verified: false`).
    public static func claim(_ actor: Actor?, recordedBy device: UUID?, here own: UUID?) -> JSONValue {
        guard actor != nil, let device, let own, device != own else { return .null }
        return .object(["recorded_by_device": .string(device.lowercased), "actor_verified": .bool(false)])
    }

    /// The score of the answers given so far (a draft's, or a submitted one's again).
    public var scoreSoFar: Double? { state.template.flatMap { Score.compute(template: $0, values: state.values) } }

    /// `jqc show --json` (also printed by `start` and `submit`): the `show`
    /// definition of `Schemas/cli/jqc-json.schema.json`.
    public var jsonValue: JSONValue {
        let inputs = (state.template?.fields ?? []).filter { !$0.type.isDisplayOnly }
        // An answer that counts as unanswered (rating 0, pass_fail "", blank
        // text) is null, as for a field never set.
        func value(_ field: TemplateField) -> JSONValue {
            guard let value = state.values[field.id], !value.isEmpty else { return .null }
            return value.jsonValue
        }
        let fields: [JSONValue] = inputs.map { field in
            .object([
                "id": .string(field.id.rawValue), "label": .string(field.label), "type": .string(field.type.rawValue),
                "required": .bool(field.required), "value": value(field),
            ])
        }
        let issues: [JSONValue] = state.issues.map { issue in
            .object([
                "id": .string(issue.id.lowercased), "severity": .string(issue.severity.rawValue),
                "description": .string(issue.description), "photo_id": .optional(issue.photoID?.lowercased),
                "flagged_at": .string(issue.flaggedAt.iso8601),
                "server_id": .optional(state.sync.acceptedIssues[issue.id]),
                "possibly_sent_twice": .bool(state.sync.issuesPossiblySentTwice.contains(issue.id)),
            ])
        }
        let photos: [JSONValue] = state.photos.map { photo in
            .object([
                "id": .string(photo.photo.photoID.lowercased), "sha256": .string(photo.photo.sha256.hex),
                "size": .integer(photo.photo.size), "media_type": .string(photo.photo.mediaType),
                "kind": .string(photo.kind.rawValue), "field_id": .optional(photo.fieldID?.rawValue),
                "issue_id": .optional(photo.issueID?.lowercased),
                "server_path": .optional(state.sync.uploadedPhotos[photo.photo.photoID]),
            ])
        }
        let area: JSONValue =
            state.areaID.map { .object(["id": .string($0), "name": .string(state.areaName ?? "")]) } ?? .null
        return .object([
            "id": .string(state.id.lowercased), "status": .string(state.status.rawValue),
            "template": .object([
                "id": .string(state.templateID), "name": .string(state.template?.name ?? ""),
                "hash": .string(state.templateHash),
            ]),
            "facility": .object(["id": .string(state.facilityID), "name": .string(state.facilityName)]),
            "area": area, "parent_id": .optional(state.parentInspectionID?.lowercased),
            "parent_server_id": .optional(state.parentServerID),
            "started_at": .optional(state.startedAt?.iso8601), "started_by": .optional(state.startedBy?.name),
            "started_by_claim": Self.claim(state.startedBy, recordedBy: state.startedOn, here: ownDevice),
            "completed_at": .optional(state.completedAt?.iso8601), "score": state.score.map(JSONValue.double) ?? .null,
            "score_so_far": scoreSoFar.map(JSONValue.double) ?? .null,
            "follow_up_required": .bool(state.followUpRequired),
            "follow_up_outstanding": .bool(state.followUpOutstanding),
            "follow_up_resolved_by": .optional(state.followUpResolvedBy?.lowercased),
            "fields": .array(fields),
            "missing_required": .array(state.missingRequiredFields().map { .string($0.id.rawValue) }),
            "issues": .array(issues), "photos": .array(photos), "merge": MergeReport(state).jsonValue,
            "sync": .object([
                "state": .string(SyncState.of(state).rawValue), "server_id": .optional(state.sync.serverID),
                "notes": .array(state.syncNotes.map(JSONValue.string)),
            ]),
        ])
    }

    /// The form as text: every person-written part through `terminalSafe`.
    public var text: String {
        let missing = Set(state.missingRequiredFields().map(\.id))
        let lines = headerLines + [""] + fieldLines(missing: missing) + [""] + footerLines(missing: missing)
        // Each person-written part is one line already; this also catches
        // whatever a part not listed above (an id from a hostile log) holds.
        return TerminalText.safe(lines.joined(separator: "\n"))
    }

    /// The lines above the fields: what the inspection is and what became of it.
    private var headerLines: [String] {
        var lines: [String] = []
        let template = state.template
        lines.append("Inspection \(state.id.lowercased)  [\(state.status.rawValue)]")
        lines.append(
            "  \((template?.name ?? state.templateID).terminalSafe) at \(state.facilityName.terminalSafe)"
                + (state.areaName.map { ", \($0.terminalSafe)" } ?? ""))
        if let started = state.startedAt {
            let by = state.startedBy.map {
                EventWording.actor($0, recordedBy: state.startedOn, here: ownDevice, markingUnverified: false)
            }
            lines.append("  started \(started.iso8601) by \(by ?? "?")")
        }
        if let completed = state.completedAt { lines.append("  submitted \(completed.iso8601)") }
        if let parent = state.parentInspectionID { lines.append("  re-inspection of \(parent.lowercased)") }
        if let server = state.parentServerID { lines.append("  re-inspection of the server's record \(server)") }
        if let handedOver = state.handedOver {
            lines.append(
                "  \(handedOver.mode == .handover ? "handed over" : "shared") to "
                    + "\(handedOver.destination.terminalSafe) at \(handedOver.at.iso8601)"
                    + (handedOver.mode == .handover ? ": nothing more is recorded on it here" : ""))
        }
        for reception in state.receivedFrom {
            lines.append(
                "  received from device \(reception.fromDevice.lowercased.prefix(8)) at \(reception.at.iso8601) "
                    + "(\(reception.records) of its records)")
        }
        if let owner = state.readOnlyCopyOf {
            lines.append(
                "  read-only copy: the handover file was addressed to device \(owner.lowercased), which alone records "
                    + "and submits it")
        }
        return lines
    }

    /// One line per field of the template, `!` marking a required one still
    /// empty (`missing`), `*` one filled.
    private func fieldLines(missing: Set<FieldID>) -> [String] {
        var lines: [String] = []
        for field in state.template?.fields ?? [] {
            if field.type == .section {
                lines.append("== \(field.label.terminalSafe)")
                continue
            }
            if field.type == .label {
                lines.append("   \(field.label.terminalSafe)")
                continue
            }
            let marker = missing.contains(field.id) ? "!" : (field.required ? "*" : " ")
            let value = state.values[field.id].map(\.shownText.terminalSafe) ?? "—"
            lines.append(
                " \(marker) [\(field.id.rawValue.terminalSafe)] \(field.label.terminalSafe) (\(field.type.rawValue)): \(value)"
            )
        }
        return lines
    }

    /// The lines below the fields: merges, what is still required, the
    /// score, the follow-up, issues, photos and sync.
    private func footerLines(missing: Set<FieldID>) -> [String] {
        var lines: [String] = []
        let merged = MergeReport(state)
        if !merged.isEmpty { lines += merged.lines(sanitise: \.terminalSafe) + [""] }
        if !missing.isEmpty {
            lines.append(
                "Still required: " + state.missingRequiredFields().map(\.label.terminalSafe).joined(separator: ", "))
        }
        let score = state.score ?? scoreSoFar
        lines.append(
            (state.status == .completed ? "Score: " : "Score so far: ")
                + (score.map { FixedPoint.text($0, places: 2) } ?? "none"))
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
        return lines
    }
}

extension String {
    /// One line of the form's text made safe (`TerminalText.singleLine`).
    fileprivate var terminalSafe: String { TerminalText.singleLine(self) }
}
