import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import SyncWorker

// The `--json` forms of the rows and results that commands print, each the
// shape its definition in `Schemas/cli/jqc-json.schema.json` names. Absent
// values are `null`, never left out.

/// `jqc show --json`, also printed by `start` and `submit`.
extension FormReport: JSONRepresentable {}

extension InspectionSummary: JSONRepresentable {
    /// One entry of `jqc inspections|drafts|followups --json` (`inspections`).
    var jsonValue: JSONValue {
        .object([
            "id": .string(id.lowercased), "status": .string(status.rawValue), "template_id": .string(templateID),
            "template_name": .string(templateName), "facility_id": .string(facilityID),
            "facility_name": .string(facilityName), "area_name": .optional(areaName), "parent_id": .id(parentID),
            "started_at": .time(startedAt), "started_by": .string(startedBy), "completed_at": .time(completedAt),
            "score": .double(score), "follow_up_required": .bool(followUpRequired),
            "follow_up_resolved_by": .id(followUpResolvedBy), "server_id": .optional(serverID),
            "sync": .string(syncState.rawValue), "sync_notes": .strings(syncNotes), "answered": .integer(answered),
            "issues": .integer(issueCount), "photos": .integer(photoCount),
        ])
    }
}

extension IssueRow: JSONRepresentable {
    /// One entry of `jqc issues --json` (`issues`).
    var jsonValue: JSONValue {
        .object([
            "id": .string(id.lowercased), "inspection_id": .string(inspectionID.lowercased),
            "facility_id": .string(facilityID), "facility_name": .string(facilityName),
            "severity": .string(severity.rawValue), "description": .string(description), "photo_id": .id(photoID),
            "flagged_at": .string(flaggedAt.iso8601), "flagged_by": .string(flaggedBy),
            "server_id": .optional(serverID), "sync": .string(syncState.rawValue),
            "possibly_sent_twice": .bool(possiblySentTwice),
        ])
    }
}

extension OutboxItem: JSONRepresentable {
    /// One entry of `jqc outbox --json` (`outbox`).
    var jsonValue: JSONValue {
        .object([
            "kind": .string(item.kind.rawValue), "id": .string(item.id.lowercased),
            "inspection_id": .string(inspectionID.lowercased), "state": .string(state.rawValue),
            "detail": .optional(detail), "left_out": .bool(leftOut), "attempts": .integer(attempts),
            "next_attempt_at": .time(nextAttemptAt), "last_error": .optional(lastError),
            "http_status": .integer(lastHTTPStatus),
            "submitted_on_device": .optional(adoptedFrom?.lowercased), "expected_sender": .null,
        ])
    }
}

extension UnreportedSubmission: JSONRepresentable {
    /// An entry of `jqc outbox --json` (`outbox`) for another device's
    /// submission not reported sent: `state` `expected_elsewhere`, sent by
    /// `expected_sender`, never by this device (unless it adopts it).
    var jsonValue: JSONValue {
        .object([
            "kind": .string(SyncItemKind.inspection.rawValue), "id": .string(inspectionID.lowercased),
            "inspection_id": .string(inspectionID.lowercased), "state": .string(Self.jsonState),
            "detail": .string(note), "left_out": .bool(false), "attempts": .integer(0), "next_attempt_at": .null,
            "last_error": .null, "http_status": .null,
            "submitted_on_device": .string(submittedOnDevice.lowercased),
            "expected_sender": .string(expectedSender.lowercased),
        ])
    }

    /// The `state` of such an entry, beside an own item's `pending` … `failed`.
    static let jsonState = "expected_elsewhere"
}

extension Template {
    /// One entry of `jqc templates --json` (`templates`); `templates show
    /// --json` prints the whole template, `jsonValue`.
    var listingJSON: JSONValue {
        .object([
            "id": .string(id), "name": .string(name), "version": .integer(version), "fields": .integer(fields.count),
            "hash": .string(contentHash),
        ])
    }
}

extension ServerUser {
    /// `jqc login --json` (`login`), and the start of `jqc whoami --json`.
    func jsonValue(server: String) -> JSONValue {
        .object([
            "id": .string(id), "username": .string(username), "role": .string(role),
            "display_name": .string(displayName), "server": .string(server),
        ])
    }
}

extension SyncReport.Failure: JSONRepresentable {
    /// An entry of `failed`, `retrying`, `failed_earlier` or `left_out` in `jqc sync --json`.
    var jsonValue: JSONValue {
        .object([
            "kind": .string(item.kind.rawValue), "id": .string(item.id.lowercased),
            "inspection_id": .string(inspectionID.lowercased), "error": .string(error),
            "http_status": .integer(httpStatus), "next_attempt_at": .time(nextAttemptAt),
            "attempts": .integer(attempts), "stalled": .bool(isStalled),
        ])
    }
}

extension SyncItem: JSONRepresentable {
    /// `{kind, id}`: an entry of `adopted` in `jqc sync --json`, and of `jqc sync retry --json`.
    var jsonValue: JSONValue {
        .object(["kind": .string(kind.rawValue), "id": .string(id.lowercased)])
    }
}

extension SyncReport {
    /// `jqc sync --json` (`sync`): one object per run (per pass of `--watch`).
    func jsonValue(elapsedSeconds: Double) -> JSONValue {
        let reference: JSONValue =
            switch self.reference {
            case .refreshed(let facilities, let templates):
                .object([
                    "refreshed": .bool(true), "facilities": .integer(facilities), "templates": .integer(templates),
                    "skipped_templates": .strings(referenceWarnings),
                ])
            case .failed(let why): .object(["refreshed": .bool(false), "error": .string(why)])
            case .notAttempted: .null
            }
        let stopped: JSONValue =
            switch stop {
            case .loginRequired(let why): .object(["reason": .string("login_required"), "message": .string(why)])
            case .serverUnreachable(let why):
                .object(["reason": .string("server_unreachable"), "message": .string(why)])
            case .transportRefused(let why):
                .object(["reason": .string("transport_refused"), "message": .string(why)])
            case .interrupted: .object(["reason": .string("interrupted")])
            case nil: .null
            }
        return .object([
            "sent": .object(SyncItemKind.allCases.map { .init($0.rawValue, .integer(sentCount($0))) }),
            "sent_total": .integer(sent.count), "adopted": .array(adopted.map(\.jsonValue)),
            "possibly_sent_twice": .array(possiblySentTwice.map(\.jsonValue)),
            "failed": .array(gaveUp.map(\.jsonValue)), "retrying": .array(retrying.map(\.jsonValue)),
            "failed_earlier": .array(failedEarlier.map(\.jsonValue)), "left_out": .array(leftOut.map(\.jsonValue)),
            "skipped": .integer(skipped.count), "reference": reference, "stopped": stopped,
            "skipped_items": .array(
                skippedItems.map {
                    .object([
                        "kind": .string($0.item.kind.rawValue), "id": .string($0.item.id.lowercased),
                        "inspection_id": .string($0.inspectionID.lowercased), "reason": .string($0.reason),
                        "next_attempt_at": .time($0.nextAttemptAt),
                    ])
                }),
            "next_attempt_at": .time(nextAttemptAt), "passes": .integer(passes),
            "elapsed_seconds": .double(elapsedSeconds),
        ])
    }
}

extension LedgerDigest: JSONRepresentable {
    /// `jqc digest --json` (`digest`): the digest as handed out, and its parts.
    var jsonValue: JSONValue {
        .object(["digest": .string(description), "position": .integer(position), "head": .string(head.hex)])
    }
}
