import FoundationEssentials
import InspectionDomain
import LedgerCore

/// The report as JSON, checked by `Schemas/audit-report.schema.json`.
///
/// Members are snake_case and stable; times are RFC 3339 text with six
/// fractional digits (and `_us` integers where an exact order matters);
/// ids are lower-case UUID text; absent values are `null`, never left out,
/// so a tool can rely on every key. The `form` member has every key of
/// `jqc show --json` with the same values (and adds the grid layout).
extension AuditReport {
    /// The whole report as JSON (print it with `prettyPrinted()`).
    public var jsonValue: JSONValue {
        // The sections typed one by one: as one literal, this getter alone
        // took 1.4 s of every build to type-check.
        let result: JSONValue = .object([
            .init("clean", .bool(isClean)), .init("headline", .string(headline)),
            .init("verdict", .string(verdict)),
            .init("problems", .array(problems.map(JSONValue.string))),
            .init("unproven", .array(unproven.map(unprovenJSON))),
        ])
        var asOfJSON = JSONValue.null
        if let asOf {
            asOfJSON = .object([
                .init("requested", .string(asOf.requested)), .init("position", .integer(asOf.position)),
                .init("recorded_at", .string(asOf.recordedAt.iso8601)),
                .init("recorded_at_us", .integer(asOf.recordedAt.microsecondsSinceEpoch)),
            ])
        }
        let sync: JSONValue = .object([
            .init("state", .string(syncState)), .init("server_id", .optional(form.sync.serverID)),
            .init("notes", .array(form.syncNotes.map(JSONValue.string))),
            .init("outcomes", .array(syncOutcomes.map(outcomeJSON))),
        ])
        return .object([
            .init("format", .string(Self.format)),
            .init("generated_at", .string(generatedAt.iso8601)),
            .init("ledger", .string(ledgerPath)),
            .init("inspection_id", .string(inspectionID.lowercased)),
            .init("result", result),
            .init("verification", verificationJSON),
            .init("as_of", asOfJSON),
            .init("inspection", inspectionJSON),
            .init("template", templateJSON),
            .init("parent", parent.map(Self.linkJSON) ?? .null),
            .init("children", .array(children.map(Self.linkJSON))),
            .init("timeline", .array(timeline.entries.map(entryJSON))),
            .init("form", formJSON),
            .init("issues", .array(issuesJSON)),
            .init("photos", .array(photos.map(photoJSON))),
            .init("sync", sync),
            .init("notes", .array(notes.map(JSONValue.string))),
        ])
    }

    // MARK: - Sections

    var verificationJSON: JSONValue {
        let finding: JSONValue
        if case .notIntact(let found) = chain.result {
            finding = .object([
                .init("kind", .string(found.kind.rawValue)), .init("position", .integer(found.position)),
                .init("message", .string(found.message)),
            ])
        } else {
            finding = .null
        }
        let intact: JSONValue =
            switch chain.result {
            case .intact: .bool(true)
            case .notIntact: .bool(false)
            case .skipped: .null
            }
        return .object([
            .init("status", .string(chain.status)), .init("intact", intact),
            .init("checked", .integer(chain.checked)), .init("head", .string(chain.head.description)),
            .init("digest", .optional(chain.digest?.description)), .init("finding", finding),
            .init("verified_through", .integer(chain.verifiedThrough)),
            .init("seconds", chain.seconds.map(JSONValue.double) ?? .null),
            .init("method", .string(chain.method.rawValue)),
            .init("proof", chain.proof.map(Self.proofJSON) ?? .null),
            .init("witness", chain.witness.map(Self.witnessJSON) ?? .null),
        ])
    }

    static func proofJSON(_ proof: ProofEvidence) -> JSONValue {
        .object([
            .init("tree_size", .integer(proof.treeSize)), .init("root", .string(proof.root)),
            .init("records", .integer(UInt64(proof.records))),
            .init("records_proven", .integer(UInt64(proof.proven.count))),
            .init("proven_positions", .array(proof.proven.sorted().map { .integer($0) })),
            .init(
                "checkpoint",
                .object([
                    .init("anchor", .string(proof.anchor.rawValue)), .init("source", .optional(proof.source)),
                    .init("size", .integer(proof.checkpointSize)), .init("root", .string(proof.checkpointRoot)),
                    .init("signer", .optional(proof.signer)), .init("key_id", .optional(proof.keyID)),
                    .init("key_pinned", .bool(proof.keyPinned)),
                    .init("published_keys", .integer(UInt64(proof.publishedKeys))),
                    .init("consistency_hashes", .integer(UInt64(proof.consistencyHashes))),
                ])),
            .init("scope", .string(ProofEvidence.scope)),
        ])
    }

    static func witnessJSON(_ witness: WitnessEvidence) -> JSONValue {
        .object([
            .init("witnessed", .bool(witness.acknowledgedSize != nil)),
            .init("acknowledged_size", witness.acknowledgedSize.map { .integer($0) } ?? .null),
            .init("acknowledged_at", .optional(witness.acknowledgedAt?.iso8601)),
            .init("server", .optional(witness.server)), .init("last_outcome", .optional(witness.lastOutcome)),
            .init("cosigned", .optional(witness.cosigning)),
            .init("quorum_met", witness.quorumMet.map { .bool($0) } ?? .null),
            .init("fork", .optional(witness.fork)),
            .init(
                "asked_now",
                .array(
                    witness.askedNow.map { asked in
                        .object([
                            .init("name", .string(asked.name)), .init("answer", .string(asked.answer)),
                            .init("size", asked.size.map { .integer($0) } ?? .null), .init("line", .string(asked.line)),
                        ])
                    })),
        ])
    }

    var inspectionJSON: JSONValue {
        let positions = timeline.entries.map(\.position).filter { $0 > 0 }
        return .object([
            .init("id", .string(inspectionID.lowercased)), .init("status", .string(form.status.rawValue)),
            .init("template_id", .string(form.templateID)), .init("template_hash", .string(form.templateHash)),
            .init(
                "facility", .object([.init("id", .string(form.facilityID)), .init("name", .string(form.facilityName))])),
            .init("area", Self.area(form)),
            .init("parent_id", .optional(form.parentInspectionID?.lowercased)),
            .init("parent_server_id", .optional(form.parentServerID)),
            .init("started_at", Self.time(form.startedAt)),
            .init("started_by", actor(form.startedBy, device: form.startedOn)),
            .init("completed_at", Self.time(form.completedAt)),
            .init("completed_by", actor(form.completedBy, device: form.completedOn)),
            .init("discarded_at", Self.time(form.discardedAt)), .init("discard_reason", .optional(form.discardReason)),
            .init("score", form.score.map(JSONValue.double) ?? .null),
            .init("follow_up_required", .bool(form.followUpRequired)),
            .init("follow_up_resolved_by", .optional(form.followUpResolvedBy?.lowercased)),
            .init("event_count", .integer(timeline.entries.count)),
            .init("first_position", positions.min().map { .integer($0) } ?? .null),
            .init("last_position", positions.max().map { .integer($0) } ?? .null),
        ])
    }

    var templateJSON: JSONValue {
        let found = template.template
        return .object([
            .init("id", .optional(found?.id ?? (form.templateID.isEmpty ? nil : form.templateID))),
            .init("name", .optional(found?.name)), .init("version", found.map { .integer($0.version) } ?? .null),
            .init("hash", .string(template.hash)), .init("hash_matches", .bool(template.hashMatches)),
            .init("pinned_at_position", template.pinnedAt.map { .integer($0) } ?? .null),
            .init("source", .string(template.source)),
            .init("fields", .array((found?.fields ?? []).map(Self.templateFieldJSON))),
        ])
    }

    static func templateFieldJSON(_ field: TemplateField) -> JSONValue {
        .object([
            .init("id", .string(field.id.rawValue)), .init("type", .string(field.type.rawValue)),
            .init("label", .string(field.label)), .init("required", .bool(field.required)),
            .init("options", field.options.map { .array($0.map(JSONValue.string)) } ?? .null),
            .init("columns", field.columns.map { .array($0.map(JSONValue.string)) } ?? .null),
            .init("col", .integer(field.col)), .init("row", .integer(field.row)),
            .init("col_span", .integer(field.colSpan)), .init("row_span", .integer(field.rowSpan)),
        ])
    }

    static func linkJSON(_ link: LinkedInspection) -> JSONValue {
        .object([
            .init("id", .string(link.id.lowercased)), .init("status", .string(link.status.rawValue)),
            .init("template_id", .string(link.templateID)), .init("facility_name", .string(link.facilityName)),
            .init("started_at", time(link.startedAt)),
            .init("started_position", link.startedPosition.map { .integer($0) } ?? .null),
            .init("completed_at", time(link.completedAt)),
            .init("submitted_position", link.submittedPosition.map { .integer($0) } ?? .null),
            .init("score", link.score.map(JSONValue.double) ?? .null),
            .init("follow_up_required", .bool(link.followUpRequired)), .init("problem", .optional(link.problem)),
        ])
    }

    func entryJSON(_ entry: TimelineEntry) -> JSONValue {
        let record = entry.record
        return .object([
            .init("position", .integer(entry.position)), .init("stream_version", .integer(entry.streamVersion)),
            .init("recorded_at", Self.time(record?.recordedAt)),
            .init("recorded_at_us", record.map { .integer($0.recordedAt.microsecondsSinceEpoch) } ?? .null),
            .init("type", .optional(entry.event?.typeName ?? record?.type)),
            .init("actor", actor(record?.actor, device: record?.device)),
            .init("device", .optional(record?.device.lowercased)),
            .init("summary", .string(entry.summary)),
            .init("changes", .array(entry.changes.map(Self.changeJSON))),
            .init("no_effect", .bool(entry.hadNoEffect)), .init("problem", .optional(entry.problem)),
            .init("recorded_before_previous", .bool(entry.recordedBeforePrevious)),
            .init("chain", .string(standing(of: entry).rawValue)),
            .init("chain_hash", .optional(entry.carriedIn == nil ? chainHash(at: entry.position) : nil)),
            .init(
                "event",
                record.flatMap { record in entry.event.map { EventExport.envelope(for: record, event: $0) } } ?? .null),
        ])
    }

    static func changeJSON(_ change: FieldChange) -> JSONValue {
        .object([
            .init("field_id", .string(change.fieldID.rawValue)), .init("label", .optional(change.label)),
            .init("field_type", .optional(change.fieldType?.rawValue)),
            .init("old", change.old?.jsonValue ?? .null), .init("new", change.new?.jsonValue ?? .null),
            .init("old_text", .string(EventWording.valueText(change.old))),
            .init("new_text", .string(EventWording.valueText(change.new))),
        ])
    }

    /// Every key of `jqc show --json`, with the same values, plus the layout.
    var formJSON: JSONValue {
        let state = form
        let missing = state.missingRequiredFields()
        let fields: [JSONValue] = (state.template?.fields ?? []).filter { !$0.type.isDisplayOnly }.map { field in
            let value = state.values[field.id]
            return .object([
                .init("id", .string(field.id.rawValue)), .init("label", .string(field.label)),
                .init("type", .string(field.type.rawValue)), .init("required", .bool(field.required)),
                // As in `jqc show --json`: an answer that counts as unanswered is null.
                .init("value", value.flatMap { $0.isEmpty ? nil : $0.jsonValue } ?? .null),
                .init("display", .optional(value.map { EventWording.valueText($0) })),
                .init("col", .integer(field.col)), .init("row", .integer(field.row)),
                .init("col_span", .integer(field.colSpan)), .init("row_span", .integer(field.rowSpan)),
            ])
        }
        let issues: [JSONValue] = state.issues.map { issue in
            .object([
                .init("id", .string(issue.id.lowercased)), .init("severity", .string(issue.severity.rawValue)),
                .init("description", .string(issue.description)),
                .init("photo_id", .optional(issue.photoID?.lowercased)),
                .init("flagged_at", .string(issue.flaggedAt.iso8601)),
                .init("server_id", .optional(state.sync.acceptedIssues[issue.id])),
                .init("possibly_sent_twice", .bool(state.sync.issuesPossiblySentTwice.contains(issue.id))),
            ])
        }
        let photos: [JSONValue] = state.photos.map { photo in
            .object([
                .init("id", .string(photo.photo.photoID.lowercased)), .init("sha256", .string(photo.photo.sha256.hex)),
                .init("size", .integer(photo.photo.size)), .init("media_type", .string(photo.photo.mediaType)),
                .init("kind", .string(photo.kind.rawValue)), .init("field_id", .optional(photo.fieldID?.rawValue)),
                .init("issue_id", .optional(photo.issueID?.lowercased)),
                .init("server_path", .optional(state.sync.uploadedPhotos[photo.photo.photoID])),
            ])
        }
        return .object([
            .init("id", .string(state.id.lowercased)), .init("status", .string(state.status.rawValue)),
            .init("merge", MergeReport(state).jsonValue),
            .init(
                "template",
                .object([
                    .init("id", .string(state.templateID)), .init("name", .string(state.template?.name ?? "")),
                    .init("hash", .string(state.templateHash)),
                ])),
            .init(
                "facility",
                .object([.init("id", .string(state.facilityID)), .init("name", .string(state.facilityName))])),
            .init("area", Self.area(state)), .init("parent_id", .optional(state.parentInspectionID?.lowercased)),
            .init("parent_server_id", .optional(state.parentServerID)),
            .init("started_at", Self.time(state.startedAt)), .init("started_by", .optional(state.startedBy?.name)),
            .init("started_by_claim", claimJSON(state.startedBy, state.startedOn)),
            .init("completed_at", Self.time(state.completedAt)),
            .init("score", state.score.map(JSONValue.double) ?? .null),
            .init("score_so_far", scoreSoFar.map(JSONValue.double) ?? .null),
            .init("follow_up_required", .bool(state.followUpRequired)),
            .init("follow_up_outstanding", .bool(state.followUpOutstanding)),
            .init("follow_up_resolved_by", .optional(state.followUpResolvedBy?.lowercased)),
            .init("fields", .array(fields)), .init("missing_required", .array(missing.map { .string($0.id.rawValue) })),
            .init("issues", .array(issues)), .init("photos", .array(photos)),
            .init(
                "sync",
                .object([
                    .init("state", .string(syncState)), .init("server_id", .optional(state.sync.serverID)),
                    .init("notes", .array(state.syncNotes.map(JSONValue.string))),
                ])
            ),
        ])
    }

    var issuesJSON: [JSONValue] {
        form.issues.map { issue in
            let flaggedAt = timeline.entries.first {
                if case .issueFlagged(let flagged) = $0.event, flagged.issueID == issue.id, !$0.hadNoEffect {
                    return true
                }
                return false
            }?.position
            return .object([
                .init("id", .string(issue.id.lowercased)), .init("severity", .string(issue.severity.rawValue)),
                .init("description", .string(issue.description)),
                .init("photo_id", .optional(issue.photoID?.lowercased)),
                .init("position", flaggedAt.map { .integer($0) } ?? .null),
                .init("flagged_at", .string(issue.flaggedAt.iso8601)),
                .init("flagged_by", actor(issue.flaggedBy, device: issue.stamp.device)),
                .init("server_id", .optional(form.sync.acceptedIssues[issue.id])),
                .init("sync", .string(Self.syncName(form.sync.status(of: SyncItem(kind: .issue, id: issue.id))))),
            ])
        }
    }

    func photoJSON(_ photo: PhotoEvidence) -> JSONValue {
        let reference = photo.captured.photo
        let actual: JSONValue
        if case .altered(let hash) = photo.file.status { actual = .string(hash) } else { actual = .null }
        return .object([
            .init("id", .string(reference.photoID.lowercased)), .init("sha256", .string(reference.sha256.hex)),
            .init("size", .integer(reference.size)), .init("media_type", .string(reference.mediaType)),
            .init("kind", .string(photo.captured.kind.rawValue)),
            .init("field_id", .optional(photo.captured.fieldID?.rawValue)),
            .init("issue_id", .optional(photo.captured.issueID?.lowercased)),
            .init("position", .integer(photo.position)), .init("captured_at", Self.time(photo.recordedAt)),
            .init("captured_by", actor(photo.actor, device: photo.device)), .init("ignored", .bool(photo.ignored)),
            .init("server_path", .optional(photo.serverPath)),
            .init("file", .object([.init("status", .string(photo.file.status.name)), .init("actual_sha256", actual)])),
        ])
    }

    func outcomeJSON(_ entry: TimelineEntry) -> JSONValue {
        .object([
            .init("position", .integer(entry.position)), .init("recorded_at", Self.time(entry.record?.recordedAt)),
            .init("type", .optional(entry.record?.type)), .init("summary", .string(entry.summary)),
        ])
    }

    /// One group of unproven carried entries (`UnprovenPart`).
    func unprovenJSON(_ part: UnprovenPart) -> JSONValue {
        .object([
            .init("device", .string(part.device.lowercased)),
            .init("carried_by_device", .string(part.carrier.lowercased)),
            .init("reception_position", .integer(part.receptionPosition)),
            .init("entries", .array(part.records.map { .string($0.lowercased) })),
            .init("reason", .string(part.reason)),
        ])
    }

    // MARK: - Values

    static func time(_ time: Timestamp?) -> JSONValue { .optional(time?.iso8601) }

    /// `started_by_claim` as `jqc show --json` has it (`FormReport.claim`).
    func claimJSON(_ actor: Actor?, _ device: UUID?) -> JSONValue {
        guard actor != nil, let device, let ownDevice, device != ownDevice else { return .null }
        return .object([
            .init("recorded_by_device", .string(device.lowercased)), .init("actor_verified", .bool(false)),
        ])
    }

    /// An actor, with `actor_verified: false` and `recorded_by_device` when
    /// another device recorded it: that device's claim, not checked here.
    func actor(_ actor: Actor?, device: UUID?) -> JSONValue {
        guard let actor, let device, let ownDevice, device != ownDevice else { return Self.actor(actor) }
        return .object([
            .init("id", .string(actor.id)), .init("name", .string(actor.name)),
            .init("verified", .bool(actor.verified)), .init("actor_verified", .bool(false)),
            .init("recorded_by_device", .string(device.lowercased)),
        ])
    }

    static func actor(_ actor: Actor?) -> JSONValue {
        guard let actor else { return .null }
        return .object([
            .init("id", .string(actor.id)), .init("name", .string(actor.name)),
            .init("verified", .bool(actor.verified)),
        ])
    }

    static func area(_ state: InspectionState) -> JSONValue {
        state.areaID.map { .object([.init("id", .string($0)), .init("name", .string(state.areaName ?? ""))]) } ?? .null
    }

    /// `pending`, `retrying`, `failed` or `synced`.
    static func syncName(_ status: ItemSyncStatus) -> String {
        switch status {
        case .pending: "pending"
        case .retrying: "retrying"
        case .failed: "failed"
        case .synced: "synced"
        }
    }
}
