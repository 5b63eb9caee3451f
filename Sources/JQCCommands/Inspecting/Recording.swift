import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

extension Invocation {
    /// Decides `command` against the inspection's current state and records
    /// the resulting events in one durable transaction. A refusal records
    /// nothing.
    @discardableResult
    func record(_ command: InspectionCommand, on id: UUID, before keep: (() throws -> Void)? = nil) throws
        -> InspectionLedger.Recorded
    {
        try record([command], on: id, before: keep)
    }

    /// `InspectionLedger.record` as this person on this device: all of
    /// `commands` in one commit or nothing, decided again when another
    /// writer records first, refusals advised with the command that works.
    @discardableResult
    func record(_ commands: [InspectionCommand], on id: UUID, before keep: (() throws -> Void)? = nil) throws
        -> InspectionLedger.Recorded
    {
        try ledger().record(
            commands, on: id, by: actor(), device: config().deviceID, clock: clock, advise: AdvisedRefusal.advising,
            before: keep)
    }
}

// MARK: - Shared by every command that changes an inspection

extension Invocation {
    /// The inspection a person named by an id prefix.
    func inspectionID(_ reference: String) throws -> UUID {
        try ledger().resolveInspection(reference)
    }

    /// The draft a person named by an id prefix, with its state and
    /// template, for a command that walks its form (`edit`, `fill`); one that
    /// cannot be edited any more is refused with the advice that works.
    func editableDraft(_ reference: String) throws -> (id: UUID, state: InspectionState, template: Template) {
        let inspection = try inspectionID(reference)
        guard let state = try ledger().state(of: inspection) else { throw LookupError.noInspection(reference) }
        guard state.isEditable, let template = state.template else {
            throw AdvisedRefusal.advising(.inspectionNotEditable(inspection, status: state.status), state)
        }
        return (inspection, state, template)
    }

    /// Refuses, before any file is read, a capture aimed at a field of the
    /// other photo type: `jqc sign` is for signature fields, `jqc photo` for
    /// image fields. Other refusals (a completed inspection, an unknown field)
    /// are left to the decision.
    func requireField(_ reference: String, of inspection: UUID, holding type: FieldType) throws {
        guard let state = try ledger().state(of: inspection),
            let refusal = PhotoCapture.otherKind(of: reference, in: state, capturing: type)
        else { return }
        throw refusal
    }

    /// Captures the image at `file` (`PhotoCapture`), recorded as this person on this device.
    func capture(_ file: String, for target: PhotoTarget, on inspection: UUID) throws -> InspectionLedger.Recorded {
        let photos = try ledger().photos
        let prepared = try photos.prepare(fileAt: file, exactPath: RawArgument.bytes(of: file))
        return try PhotoCapture(photos: photos).record(prepared, for: target) { command, keep in
            // The decision's hook is optional (so escaping); it runs only within the call.
            try withoutActuallyEscaping(keep) { try record(command, on: inspection, before: $0) }
        }
    }

    func prepareReference(_ prepared: PhotoStore.PreparedPhoto) -> PhotoReference {
        PhotoCapture.reference(prepared)
    }
}

/// Prints what a field command recorded.
func report(_ events: [InspectionEvent], _ state: InspectionState, _ invocation: Invocation, verb: String) {
    if invocation.json {
        invocation.printJSON(
            .object([
                "inspection": .string(state.id.lowercased), "recorded": .strings(events.map(\.typeName)),
                "score_so_far": .double(
                    state.template.flatMap { Score.compute(template: $0, values: state.values) }),
            ]))
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
            invocation.stdout.line("\(TerminalText.singleLine(label)) = \(TerminalText.safe(answer.value.shownText))")
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
