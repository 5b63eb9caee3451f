import FoundationEssentials
import InspectionAudit
import InspectionDomain
import LedgerCore

/// What a received file changed on this device, from the inspection's
/// folded state before the reception and after it: the answers that now
/// read otherwise, the photos and issues added, the conflicts that appeared,
/// and a submit or discard that arrived (whether it closed the copy, or was
/// overtaken by work it had not seen). `jqc receive` says it instead of a
/// bare "merged"; empty when the file changed nothing a person sees.
public struct ReceptionChanges: Sendable, Equatable {
    /// A field, with its label as the template names it.
    public struct Field: Sendable, Equatable {
        public var id: FieldID
        public var label: String
    }

    /// A submit or discard the file brought.
    public struct Closing: Sendable, Equatable {
        public var actor: String
        public var device: UUID
        public var reason: String?
        /// For a submit: it stands. For a discard: it closed the copy here
        /// (false: overtaken by later work, the copy stays open).
        public var closes: Bool
    }

    /// Fields whose value here changed (set, changed or cleared), in form order.
    public var answers: [Field] = []
    public var photos = 0
    public var issues = 0
    /// Fields in conflict now that were not before, in form order.
    public var conflicts: [Field] = []
    public var submits: [Closing] = []
    public var discards: [Closing] = []
    public var statusBefore: InspectionStatus?
    public var statusAfter: InspectionStatus?
    /// adopt (#30 item 3): adoptions of the submission's sending that
    /// arrived (`inspection.send_adopted`); `closes`: it stands, so its
    /// device is the sender. Said in the text only.
    public var adoptions: [Closing] = []

    public init() {}

    /// The changes from `before` (nil: the inspection was not held here) to `after`.
    public init(before: InspectionState?, after: InspectionState) {
        func field(_ id: FieldID) -> Field {
            Field(id: id, label: after.template?.field(id: id)?.label ?? before?.template?.field(id: id)?.label ?? "")
        }
        func order(_ ids: some Sequence<FieldID>) -> [Field] {
            let index = Dictionary(
                (after.template?.fields ?? []).enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: min)
            return ids.sorted { (index[$0] ?? .max, $0.rawValue) < (index[$1] ?? .max, $1.rawValue) }.map(field)
        }
        let old = before?.values ?? [:]
        let changed = Set(old.keys).union(after.values.keys).filter { old[$0] != after.values[$0] }
        answers = order(changed)
        let oldPhotos = Set(before?.photos.map(\.photo.photoID) ?? [])
        photos = after.photos.filter { !oldPhotos.contains($0.photo.photoID) }.count
        let oldIssues = Set(before?.issues.map(\.id) ?? [])
        issues = after.issues.filter { !oldIssues.contains($0.id) }.count
        let oldConflicts = Set(before?.conflicts.map(\.fieldID) ?? [])
        conflicts = order(after.conflicts.map(\.fieldID).filter { !oldConflicts.contains($0) })
        let standing = after.standingSubmit
        let oldSubmits = before?.submits ?? []
        submits = after.submits.filter { !oldSubmits.contains($0) }.map {
            Closing(actor: $0.by.name, device: $0.stamp.device, reason: nil, closes: $0 == standing)
        }
        let oldDiscards = before?.discards ?? []
        discards = after.discards.filter { !oldDiscards.contains($0) }.map {
            Closing(
                actor: $0.by.name, device: $0.stamp.device, reason: $0.reason,
                closes: standing == nil && after.sawEverything($0))
        }
        statusBefore = before?.status
        statusAfter = after.status
        let oldAdoptions = before?.adoptions ?? []
        adoptions = after.adoptions.filter { !oldAdoptions.contains($0) }.map {
            Closing(actor: $0.by.name, device: $0.device, reason: nil, closes: $0 == after.standingAdoption)
        }
    }

    /// Whether the file changed nothing a person sees.
    public var isEmpty: Bool {
        answers.isEmpty && photos == 0 && issues == 0 && conflicts.isEmpty && submits.isEmpty && discards.isEmpty
            && statusBefore == statusAfter && adoptions.isEmpty
    }

    /// What changed, one line each (person-written parts through `sanitise`).
    public func lines(sanitise: (String) -> String = { $0 }) -> [String] {
        guard !isEmpty else {
            return ["Nothing new on the form: the file's new records change no answer, photo, issue or status here."]
        }
        func named(_ fields: [Field]) -> String {
            fields.map { $0.label.isEmpty ? "field \($0.id.rawValue)" : "\(sanitise($0.label)) (\($0.id.rawValue))" }
                .joined(separator: ", ")
        }
        var lines: [String] = []
        if !answers.isEmpty {
            lines.append("New answers: \(answers.count) (\(named(answers)))")
        }
        var added: [String] = []
        if photos > 0 { added.append(Self.count(photos, "new photo")) }
        if issues > 0 { added.append(Self.count(issues, "new issue")) }
        if !added.isEmpty { lines.append(added.joined(separator: ", ")) }
        if !conflicts.isEmpty {
            lines.append("New conflicts: \(named(conflicts)); 'jqc show' lists their values")
        }
        for submit in submits {
            lines.append(
                "A submit arrived: by \(sanitise(submit.actor)) on device \(EventWording.short(submit.device))"
                    + (submit.closes ? "; it stands, and the inspection is completed here" : "; another submit stands"))
        }
        for discard in discards {
            let reason = discard.reason.map { " (reason: \(sanitise($0)))" } ?? ""
            let effect =
                discard.closes
                ? "; it saw everything recorded here, so the inspection is discarded"
                : statusAfter == .completed
                    ? "; a submit stands over it"
                    : "; it is overtaken: that device had not seen later work, so the inspection stays open here"
            lines.append(
                "A discard arrived: by \(sanitise(discard.actor)) on device \(EventWording.short(discard.device))"
                    + reason + effect)
        }
        for adoption in adoptions {
            lines.append(
                "An adoption arrived: device \(adoption.device.lowercased) (\(sanitise(adoption.actor))) adopted the "
                    + "sending of the submission"
                    + (adoption.closes
                        ? "; it stands: that device sends it, this one nothing of it"
                        : "; an earlier adoption stands"))
        }
        if let before = statusBefore, let after = statusAfter, before != after, submits.isEmpty, discards.isEmpty {
            lines.append("Status: \(before.rawValue) → \(after.rawValue)")
        }
        return lines
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    /// The `changes` member of `jqc receive --json`.
    public var jsonValue: JSONValue {
        func fields(_ list: [Field]) -> JSONValue { .array(list.map { .string($0.id.rawValue) }) }
        func closings(_ list: [Closing]) -> JSONValue {
            .array(
                list.map {
                    .object([
                        .init("actor", .string($0.actor)), .init("device", .string($0.device.lowercased)),
                        .init("reason", .optional($0.reason)), .init("closes", .bool($0.closes)),
                    ])
                })
        }
        return .object([
            .init("nothing_new", .bool(isEmpty)), .init("answers", fields(answers)),
            .init("photos", .integer(photos)), .init("issues", .integer(issues)),
            .init("conflicts", fields(conflicts)), .init("submits", closings(submits)),
            .init("discards", closings(discards)), .init("adoptions", closings(adoptions)),
            .init("status_before", .optional(statusBefore?.rawValue)),
            .init("status_after", .optional(statusAfter?.rawValue)),
        ])
    }
}
