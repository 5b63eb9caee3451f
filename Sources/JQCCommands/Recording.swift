import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// Why a recording command recorded nothing, beyond the domain's own
/// refusals: a batch with answers that do not fit, or an inspection that
/// another command changed so that this one no longer applies.
enum RecordingError: Error, CustomStringConvertible {
    /// Some commands of a batch were refused; nothing of the batch was recorded.
    case batchRefused(inspection: UUID, refusals: [DomainError], accepted: Int)
    /// Another command recorded to the inspection first, and this one, decided
    /// again on what it recorded, is refused.
    case noLongerApplies(inspection: UUID, any Error)
    /// A refusal of the domain, with the command that does what the person
    /// may have meant, which only the CLI can name.
    case advised(DomainError, next: String)
    /// Other commands kept recording to the inspection, every attempt lost the race.
    case keptChanging(inspection: UUID, attempts: Int)

    var description: String {
        switch self {
        case .batchRefused(let id, let refusals, let accepted):
            "nothing was recorded on inspection \(id.lowercased): \(refusals.count) of "
                + "\(refusals.count + accepted) answers do not fit:\n"
                + refusals.map { "  - \($0)" }.joined(separator: "\n")
                + "\nCorrect them and run the command again: the whole batch is recorded or none of it."
        case .noLongerApplies(let id, let refusal):
            "another command recorded to inspection \(id.lowercased) at the same moment, and after it this "
                + "command no longer applies, so nothing was recorded: \(refusal)"
        case .keptChanging(let id, let attempts):
            "inspection \(id.lowercased) was changed by other commands on each of \(attempts) attempts; nothing "
                + "was recorded. Run the command again once the other jqc (a script, 'jqc fill' in another "
                + "window) has finished."
        case .advised(let refusal, let next):
            "\(refusal) \(next)"
        }
    }
}

extension Invocation {
    /// How many times a command is decided again after another writer
    /// recorded to the same inspection first.
    static let recordingAttempts = 8

    /// Decides `command` against the inspection's current state and records
    /// the resulting events in one durable transaction. A refusal records
    /// nothing.
    @discardableResult
    func record(_ command: InspectionCommand, on id: UUID, before keep: (() throws -> Void)? = nil) throws -> (
        events: [InspectionEvent], state: InspectionState
    ) {
        try record([command], on: id, before: keep)
    }

    /// Decides `commands` in order, each on the state the previous ones leave,
    /// and records all their events in one durable transaction (one commit),
    /// or nothing: when any command is refused, every refusal is reported.
    ///
    /// Another writer may record to the same inspection between the read and
    /// the append; the append then fails on the stream version, and the
    /// commands are decided again on the new state (up to
    /// `recordingAttempts` times, with a short random pause so two loops do
    /// not collide in step). Only a command that no longer applies is refused.
    @discardableResult
    func record(_ commands: [InspectionCommand], on id: UUID, before keep: (() throws -> Void)? = nil) throws -> (
        events: [InspectionEvent], state: InspectionState
    ) {
        let ledger = try ledger()
        let actor = try actor()
        let device = try config().deviceID
        var conflicts = 0
        while true {
            let state = try ledger.state(of: id) ?? InspectionState(id: id)
            // One reading of the clock: the state returned (and echoed by
            // `--json`) carries exactly the timestamp the log records.
            let now = clock.now()
            let decided: (events: [InspectionEvent], state: InspectionState)
            do {
                decided = try Self.decide(commands, on: state, at: now, by: actor)
            } catch let refusal as DomainError {
                let advised = Self.advised(refusal, state)
                if conflicts > 0 { throw RecordingError.noLongerApplies(inspection: id, advised) }
                throw advised
            } catch let refusals as RecordingError where conflicts > 0 {
                throw RecordingError.noLongerApplies(inspection: id, refusals)
            }
            if decided.events.isEmpty { return decided }
            try keep?()
            do {
                try ledger.record(
                    decided.events, stream: id, expectedVersion: UInt64(state.eventCount), actor: actor,
                    device: device, at: now)
                return decided
            } catch LedgerError.versionConflict {
                conflicts += 1
                guard conflicts < Self.recordingAttempts else {
                    throw RecordingError.keptChanging(inspection: id, attempts: conflicts)
                }
                // Random, growing pauses of a few milliseconds: the other
                // writer's transaction is that short.
                usleep(UInt32.random(in: 500...4_000) * UInt32(conflicts))
            }
        }
    }

    /// `refusal` with advice that leads to a command that works for this
    /// inspection: a re-inspection only when its follow-up is still open,
    /// else a new inspection of the same template and place.
    static func advised(_ refusal: DomainError, _ state: InspectionState) -> any Error {
        switch refusal {
        case .inspectionNotEditable:
            let prefix = state.id.lowercased.prefix(8)
            if state.status == .completed && state.followUpOutstanding {
                return RecordingError.advised(
                    refusal, next: "To record new findings, re-inspect it: 'jqc start --reinspect \(prefix)'.")
            }
            let area = state.areaID.map { " --area \($0)" } ?? ""
            let how = state.status == .discarded ? "To record it after all" : "To inspect again"
            return RecordingError.advised(
                refusal,
                next: "\(how), start a new inspection: "
                    + "'jqc start --template \(state.templateID) --facility \(state.facilityID)\(area)'.")
        case .requiredFieldsEmpty:
            let prefix = state.id.lowercased.prefix(8)
            return RecordingError.advised(
                refusal,
                next: "Answer them with 'jqc set \(prefix) FIELD=VALUE …', or field by field with 'jqc fill \(prefix)'."
            )
        default:
            return refusal
        }
    }

    /// The events of `commands` decided one after another, and the state they
    /// leave. Pure. A single refused command is thrown as it is; several
    /// refusals in a batch are thrown together (the same refusal for every
    /// command, such as "the inspection is completed", once).
    static func decide(
        _ commands: [InspectionCommand], on state: InspectionState, at time: Timestamp, by actor: Actor
    ) throws -> (events: [InspectionEvent], state: InspectionState) {
        var after = state
        var events: [InspectionEvent] = []
        var refusals: [DomainError] = []
        for command in commands {
            do {
                let decided = try after.decide(command)
                for event in decided { after.apply(event, recordedAt: time, actor: actor) }
                events += decided
            } catch {
                refusals.append(error)
            }
        }
        if let first = refusals.first, refusals.count == 1 || refusals.allSatisfy({ $0 == first }) { throw first }
        if !refusals.isEmpty {
            throw RecordingError.batchRefused(
                inspection: state.id, refusals: refusals, accepted: commands.count - refusals.count)
        }
        return (events, after)
    }
}

// MARK: - Shared by every command that changes an inspection

extension Invocation {
    /// The inspection a person named by an id prefix.
    func inspectionID(_ reference: String) throws -> UUID {
        try ledger().resolveInspection(reference)
    }

    /// Refuses, before any file is read, a capture aimed at a field of the
    /// other photo type: `jqc sign` is for signature fields, `jqc photo` for
    /// image fields. Other refusals (a completed inspection, an unknown field)
    /// are left to the decision.
    func requireField(_ reference: String, of inspection: UUID, holding type: FieldType) throws {
        guard let state = try ledger().state(of: inspection), state.isEditable, let template = state.template,
            let field = try? template.field(matching: reference), field.type != type, field.type.holdsPhoto
        else { return }
        let command = field.type == .signature ? "sign" : "photo"
        throw JQCError.refused(
            "\(field.fieldDescription) is \(field.type == .signature ? "a signature" : "an image") field: "
                + "capture it with 'jqc \(command) \(inspection.lowercased.prefix(8)) \(field.id) FILE'.")
    }

    /// Captures the image at `file`: read and hashed first, kept in the
    /// photo store only once the decision accepts it, then recorded by hash.
    func capture(_ file: String, for target: PhotoTarget, on inspection: UUID) throws -> (
        events: [InspectionEvent], state: InspectionState
    ) {
        let photos = try ledger().photos
        let prepared = try photos.prepare(fileAt: file)
        var added = false
        do {
            return try record(.capturePhoto(prepareReference(prepared), for: target), on: inspection) {
                // A retried decision keeps it again: the file was added if any attempt added it.
                added = try photos.keep(prepared) || added
            }
        } catch {
            // The event did not commit: the file it would have named goes too.
            if added { photos.discard(prepared) }
            throw error
        }
    }

    func prepareReference(_ prepared: PhotoStore.PreparedPhoto) -> PhotoReference {
        PhotoReference(
            photoID: UUID(), sha256: Digest256(hex: prepared.description.sha256)!,
            size: prepared.description.size, mediaType: prepared.description.mediaType)
    }
}

/// Prints what a field command recorded.
func report(_ events: [InspectionEvent], _ state: InspectionState, _ invocation: Invocation, verb: String) {
    if invocation.json {
        invocation.stdout.line(
            JSONOutput.render(
                .object([
                    "inspection": .string(state.id.lowercased), "recorded": .strings(events.map(\.typeName)),
                    "score_so_far": .double(
                        state.template.flatMap { Score.compute(template: $0, values: state.values) }),
                ])))
        return
    }
    guard !events.isEmpty else {
        invocation.stdout.line("Nothing to record: the field already holds that.")
        return
    }
    for event in events {
        switch event {
        case .fieldSet(let answer):
            let label = state.template?.field(id: answer.fieldID)?.label ?? answer.fieldID.rawValue
            invocation.stdout.line("\(TerminalText.singleLine(label)) = \(TerminalText.safe(answer.value.displayText))")
        case .fieldCleared(let cleared):
            let label = state.template?.field(id: cleared.fieldID)?.label ?? cleared.fieldID.rawValue
            invocation.stdout.line("\(TerminalText.singleLine(label)) cleared")
        case .photoCaptured(let photo):
            invocation.stdout.line(
                "Photo \(photo.photo.photoID.lowercased.prefix(8)) kept (sha256 \(photo.photo.sha256.hex.prefix(12))…, "
                    + "\(photo.photo.size) bytes)")
        case .issueFlagged(let issue):
            invocation.stdout.line("Issue \(issue.issueID.lowercased) flagged (\(issue.severity.rawValue))")
        default:
            break
        }
    }
}
