import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

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
        return try record(.capturePhoto(prepareReference(prepared), for: target), on: inspection) {
            try photos.keep(prepared)
        }
    }

    func prepareReference(_ prepared: PhotoStore.PreparedPhoto) -> PhotoReference {
        PhotoReference(
            photoID: UUID(), sha256: Digest256(hex: prepared.description.sha256)!,
            size: prepared.description.size, mediaType: prepared.description.mediaType)
    }
}

// MARK: - start

/// `jqc start`: a new inspection from a template at a facility, or a re-inspection.
struct StartCommand: RunnableCommand {
    static let path = ["start"]
    static let spec = CommandSpec(
        "start", abstract: "Start an inspection from a template at a facility (or re-inspect one).",
        discussion: """
            Templates and facilities are named by id or by name (see 'jqc templates', 'jqc facilities'). \
            With --reinspect, the template, facility and area come from the completed inspection that needs \
            follow-up, and its non-scoring answers are copied.
            """,
        group: "Inspecting",
        options: [
            OptionSpec("template", short: "t", valueName: "TEMPLATE", help: "The template's id or name."),
            OptionSpec("facility", short: "f", valueName: "FACILITY", help: "The facility's id or name."),
            OptionSpec("area", short: "a", valueName: "AREA", help: "An area of the facility, by id or name."),
            OptionSpec("reinspect", valueName: "ID", help: "Re-inspect this completed inspection."),
        ])

    var template: String?
    var facility: String?
    var area: String?
    var reinspect: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        template = parsed.option("template")
        facility = parsed.option("facility")
        area = parsed.option("area")
        reinspect = parsed.option("reinspect")
        if reinspect == nil {
            if template == nil { throw .missingOption("template", valueName: "TEMPLATE", context: parsed.context) }
            if facility == nil { throw .missingOption("facility", valueName: "FACILITY", context: parsed.context) }
        } else if let given = [("template", template), ("facility", facility), ("area", area)].first(where: {
            $0.1 != nil
        }) {
            // A re-inspection takes all three from the inspection it follows up.
            throw .unexpectedArgument("--\(given.0)", context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let start: StartInspection
        if let reinspect {
            let parentID = try invocation.inspectionID(reinspect)
            guard let parent = try ledger.state(of: parentID) else { throw LookupError.noInspection(reinspect) }
            start = try StartInspection.reinspection(of: parent)
        } else {
            let template = try Self.template(named: template!, in: ledger)
            let facility = try Self.facility(named: facility!, in: ledger)
            var chosenArea: Facility.Area?
            if let area {
                chosenArea = try Self.area(named: area, in: facility)
            }
            let pinned = try ledger.pinnedTemplate(hash: template.contentHash) != nil
            start = StartInspection(
                template: template, templateAlreadyPinned: pinned, facilityID: facility.id,
                facilityName: facility.name, areaID: chosenArea?.id, areaName: chosenArea?.name)
        }
        // Random, not time-ordered: people type these ids by their first
        // digits, which must differ between inspections of the same week.
        let id = UUID()
        let (_, state) = try invocation.record(.start(start), on: id)
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(FormReport(state: state).json))
        } else {
            let area = state.areaName.map { ", \($0)" } ?? ""
            invocation.stdout.line("Started inspection \(id.lowercased)")
            invocation.stdout.line("  \(start.template.name) at \(state.facilityName)\(area)")
            if let parent = state.parentInspectionID {
                let copied = state.values.count
                invocation.stdout.line(
                    "  re-inspection of \(parent.lowercased); \(copied) \(copied == 1 ? "answer" : "answers") copied")
            }
            invocation.stdout.line("Next: jqc show \(id.lowercased.prefix(8))")
        }
    }

    static func template(named reference: String, in ledger: InspectionLedger) throws -> Template {
        let all = try ledger.reference.allTemplates()
        guard !all.isEmpty else {
            throw JQCError.refused(
                "no templates on this device yet. Pull them with 'jqc pull' (online) or 'jqc pull --from FILE'.")
        }
        if let normalized = try? RecordID.normalize(text: reference, what: "template id"),
            let byID = all.first(where: { $0.id == normalized })
        {
            return byID
        }
        let byName = all.filter { $0.name.lowercased() == reference.lowercased() }
        if byName.count == 1 { return byName[0] }
        if byName.count > 1 {
            throw JQCError.ambiguous(kind: "template", reference: reference, candidates: byName.map(\.description))
        }
        throw JQCError.notFound(
            kind: "template", reference: reference,
            hint: "Known: \(all.map(\.description).joined(separator: ", ")).")
    }

    static func facility(named reference: String, in ledger: InspectionLedger) throws -> Facility {
        let all = try ledger.reference.allFacilities()
        guard !all.isEmpty else {
            throw JQCError.refused(
                "no facilities on this device yet. Pull them with 'jqc pull' (online) or 'jqc pull --from FILE'.")
        }
        if let byID = all.first(where: { $0.id == reference.trimmingCharacters(in: .whitespaces) }) { return byID }
        let byName = all.filter { $0.name.lowercased() == reference.lowercased() }
        if byName.count == 1 { return byName[0] }
        throw JQCError.notFound(
            kind: "facility", reference: reference,
            hint: "Known: \(all.map { "\($0.id) \"\($0.name)\"" }.joined(separator: ", ")).")
    }

    static func area(named reference: String, in facility: Facility) throws -> Facility.Area {
        if let byID = facility.areas.first(where: { $0.id == reference }) { return byID }
        let byName = facility.areas.filter { $0.name.lowercased() == reference.lowercased() }
        if byName.count == 1 { return byName[0] }
        throw JQCError.notFound(
            kind: "area of \(facility.name)", reference: reference,
            hint: "Its areas: \(facility.areas.map { "\($0.id) \"\($0.name)\"" }.joined(separator: ", ")).")
    }
}

// MARK: - clear

/// `jqc clear ID FIELD`.
struct ClearCommand: RunnableCommand {
    static let path = ["clear"]
    static let spec = CommandSpec(
        "clear", abstract: "Clear a field's answer (it becomes unanswered).", group: "Inspecting",
        positionals: [
            PositionalSpec("ID", help: "The inspection (any unique prefix of its id)."),
            PositionalSpec("FIELD", help: "The field's id or label."),
        ])

    var id: String
    var field: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require("ID")
        field = try parsed.require("FIELD")
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        let (events, state) = try invocation.record(.clearField(field: field), on: inspection)
        report(events, state, invocation, verb: "cleared")
    }
}

/// Prints what a field command recorded.
func report(_ events: [InspectionEvent], _ state: InspectionState, _ invocation: Invocation, verb: String) {
    if invocation.json {
        invocation.stdout.line(
            JSONOutput.render([
                "inspection": state.id.lowercased, "recorded": events.map(\.typeName),
                "score_so_far": state.template.flatMap { Score.compute(template: $0, values: state.values) } as Any?
                    ?? NSNull(),
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
            invocation.stdout.line("\(label) = \(answer.value.displayText)")
        case .fieldCleared(let cleared):
            let label = state.template?.field(id: cleared.fieldID)?.label ?? cleared.fieldID.rawValue
            invocation.stdout.line("\(label) cleared")
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

// MARK: - photo and sign

/// `jqc photo ID FIELD FILE` or `jqc photo --issue ISSUE FILE`.
struct PhotoCommand: RunnableCommand {
    static let path = ["photo"]
    static let spec = CommandSpec(
        "photo", abstract: "Capture a photo into an image field, or onto an issue.",
        discussion: """
            The file is copied into the ledger's photo store and named by its SHA-256; the log records \
            the hash, never the path. JPEG, PNG, GIF, WebP and HEIC images are accepted.
            """,
        group: "Inspecting",
        positionals: [
            PositionalSpec("ID", help: "The inspection (omit with --issue).", optional: true),
            PositionalSpec("FIELD", help: "The image field's id or label (omit with --issue).", optional: true),
            PositionalSpec("FILE", help: "The image file."),
        ],
        options: [OptionSpec("issue", valueName: "ISSUE", help: "Attach the photo to this issue instead.")])

    var id: String?
    var field: String?
    var file: String
    var issue: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        file = try parsed.require("FILE")
        id = parsed.positional("ID")
        field = parsed.positional("FIELD")
        issue = parsed.option("issue")
        if issue == nil {
            _ = try parsed.require("ID")
            _ = try parsed.require("FIELD")
        } else if id != nil {
            throw .unexpectedArgument(id!, context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let inspection: UUID
        let target: PhotoTarget
        if let issue {
            let row = try invocation.ledger().resolveIssue(issue)
            inspection = row.inspectionID
            target = .issue(row.id)
        } else {
            inspection = try invocation.inspectionID(id!)
            try invocation.requireField(field!, of: inspection, holding: .image)
            target = .field(field!)
        }
        let (events, state) = try invocation.capture(file, for: target, on: inspection)
        report(events, state, invocation, verb: "captured")
    }
}

/// `jqc sign ID FIELD FILE`: a signature captured as an image.
struct SignCommand: RunnableCommand {
    static let path = ["sign"]
    static let spec = CommandSpec(
        "sign", abstract: "Capture a signature (an image file) into a signature field.", group: "Inspecting",
        positionals: [
            PositionalSpec("ID", help: "The inspection."),
            PositionalSpec("FIELD", help: "The signature field's id or label."),
            PositionalSpec("FILE", help: "The signature image."),
        ])

    var id: String
    var field: String
    var file: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require("ID")
        field = try parsed.require("FIELD")
        file = try parsed.require("FILE")
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        try invocation.requireField(field, of: inspection, holding: .signature)
        let (events, state) = try invocation.capture(file, for: .field(field), on: inspection)
        report(events, state, invocation, verb: "signed")
    }
}

// MARK: - flag

/// `jqc flag ID --severity S --description TEXT [--photo FILE]`.
struct FlagCommand: RunnableCommand {
    static let path = ["flag"]
    static let spec = CommandSpec(
        "flag", abstract: "Flag an issue found during an inspection.", group: "Inspecting",
        positionals: [PositionalSpec("ID", help: "The inspection.")],
        options: [
            OptionSpec(
                "severity", short: "s", valueName: "SEVERITY", help: "low, medium, high or critical.", required: true),
            OptionSpec("description", short: "d", valueName: "TEXT", help: "What is wrong.", required: true),
            OptionSpec("photo", valueName: "FILE", help: "A photo of it."),
        ])

    var id: String
    var severity: String
    var description: String
    var photo: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require("ID")
        severity = try parsed.require("severity")
        description = try parsed.require("description")
        photo = parsed.option("photo")
    }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let inspection = try invocation.inspectionID(id)
        let prepared = try photo.map { try ledger.photos.prepare(fileAt: $0) }
        let flag = FlagIssue(
            issueID: UUID(), severity: severity, description: description,
            photo: prepared.map(invocation.prepareReference))
        let (events, state) = try invocation.record(.flagIssue(flag), on: inspection) {
            if let prepared { try ledger.photos.keep(prepared) }
        }
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(["inspection": inspection.lowercased, "issue": flag.issueID.lowercased]))
        } else {
            report(events, state, invocation, verb: "flagged")
        }
    }
}

// MARK: - submit and discard

/// `jqc submit ID [--follow-up]`.
struct SubmitCommand: RunnableCommand {
    static let path = ["submit"]
    static let spec = CommandSpec(
        "submit", abstract: "Submit a draft: its score is computed and recorded, and it joins the outbox.",
        group: "Inspecting",
        positionals: [PositionalSpec("ID", help: "The inspection.")],
        flags: [FlagSpec("follow-up", help: "Mark that this facility needs a re-inspection.")])

    var id: String
    var followUp: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require("ID")
        followUp = parsed.flag("follow-up")
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        let (_, state) = try invocation.record(.submit(followUpRequired: followUp), on: inspection)
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(FormReport(state: state).json))
            return
        }
        let score = state.score.map { String(format: "%.2f", $0) } ?? "none (nothing scoreable answered)"
        invocation.stdout.line("Submitted \(inspection.lowercased): score \(score)")
        if followUp { invocation.stdout.line("Follow-up required: re-inspect with 'jqc start --reinspect \(id)'") }
        if let parent = state.parentInspectionID {
            // Only the first re-inspection submitted clears the follow-up.
            let resolvedBy = try invocation.ledger().state(of: parent)?.followUpResolvedBy
            if resolvedBy == inspection {
                invocation.stdout.line("Follow-up of \(parent.lowercased) cleared")
            } else if let resolvedBy {
                invocation.stdout.line(
                    "Follow-up of \(parent.lowercased) was already cleared by re-inspection \(resolvedBy.lowercased)")
            }
        }
        invocation.stdout.line("Queued for sync ('jqc outbox', 'jqc sync').")
    }
}

/// `jqc discard ID`.
struct DiscardCommand: RunnableCommand {
    static let path = ["discard"]
    static let spec = CommandSpec(
        "discard", abstract: "Discard a draft. It disappears from every view; the log keeps it for auditors.",
        group: "Inspecting",
        positionals: [PositionalSpec("ID", help: "The draft inspection.")],
        options: [OptionSpec("reason", valueName: "TEXT", help: "Why, for the audit trail.")])

    var id: String
    var reason: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require("ID")
        reason = parsed.option("reason")
    }

    func run(_ invocation: Invocation) throws {
        let inspection = try invocation.inspectionID(id)
        try invocation.record(.discard(reason: reason), on: inspection)
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(["inspection": inspection.lowercased, "status": "discarded"]))
        } else {
            invocation.stdout.line("Discarded draft \(inspection.lowercased)")
        }
    }
}
