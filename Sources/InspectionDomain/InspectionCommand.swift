import FoundationEssentials

/// What a person asks to do to an inspection. `InspectionState.decide`
/// turns a command into the events to append, or refuses it.
public enum InspectionCommand: Equatable, Sendable {
    /// Start the inspection (a new one, or a re-inspection of a parent).
    case start(StartInspection)
    /// Answer a field, named by id or label.
    case setField(field: String, to: FieldInput)
    /// Make a field unanswered again.
    case clearField(field: String)
    /// Record a captured photo or signature for a field, an issue or the inspection.
    case capturePhoto(PhotoReference, for: PhotoTarget)
    /// Flag an issue; a photo given here is recorded with it.
    case flagIssue(FlagIssue)
    /// Make the inspection final and record its score.
    case submit(followUpRequired: Bool)
    /// Abandon a draft (it stays in the log, hidden from views).
    case discard(reason: String?)
    /// Record that a handover file of the draft is written (`share`: a copy;
    /// `handover`: this device records nothing more on it). `toDevice` binds
    /// it to the recipient's device (`--to DEVICE`).
    case handOver(mode: HandoverMode, to: String?, toDevice: UUID? = nil)
    /// Take in a verified handover file's records (`jqc receive`), each held
    /// to the pinned template's rules first (`InspectionState+Receive`).
    case receive(ReceiveCopy)
    /// Record what the server answered for one of the inspection's outbox
    /// items (the sync worker).
    case settleSync(SyncOutcome)
    /// Queue a failed, stalled or retrying item again (`jqc sync retry`).
    case retrySync(SyncItem)
    /// Acknowledge that an item failed for good (`jqc sync dismiss --reason`).
    case dismissSync(SyncItem, reason: String)
    /// Make this device the sender of the submission that stands, recorded
    /// on another device that cannot send it (`jqc sync adopt ID`).
    case adoptSending
}

/// A field's new value in the form it arrived.
public enum FieldInput: Equatable, Sendable {
    /// Typed on the command line; parsed with `FieldValue.parse(_:for:)`.
    case text(String)
    /// Given as JSON (`--json`, imports); read with `FieldValue(json:for:)`.
    case json(JSONValue)
    /// Already typed by the caller; still validated against the field.
    case value(FieldValue)
}

/// What a captured photo belongs to.
public enum PhotoTarget: Hashable, Sendable {
    /// An image or signature field, named by id or label.
    case field(String)
    /// An issue already flagged in this inspection.
    case issue(UUID)
    /// The inspection as a whole.
    case inspection
}

/// The details of an issue to flag. Severity is the text a person gave, so
/// that an unknown one is refused by `decide` with the choices listed.
public struct FlagIssue: Hashable, Sendable {
    /// Made by the caller (time-ordered), so a retried command is idempotent.
    public var issueID: UUID
    public var severity: String
    public var description: String
    public var photo: PhotoReference?

    public init(issueID: UUID, severity: String, description: String, photo: PhotoReference? = nil) {
        self.issueID = issueID
        self.severity = severity
        self.description = description
        self.photo = photo
    }
}

/// How an inspection starts.
public struct StartInspection: Equatable, Sendable {
    public var template: Template
    /// False when no `template.pinned` event for this template's hash is in
    /// the log yet; the start then writes one first. The caller knows (the
    /// views index pinned hashes); this type cannot, being pure.
    public var templateAlreadyPinned: Bool
    public var facilityID: String
    public var facilityName: String
    public var areaID: String?
    public var areaName: String?
    /// The parent's state, for a re-inspection.
    public var parent: InspectionState?
    /// The parent on the server only, for a re-inspection of a record this
    /// ledger does not hold (`ServerParent`).
    public var serverParent: ServerParent?

    /// A server record being re-inspected: its id, and the answers its form
    /// gave (already read against the template; empty when the server sent
    /// no form).
    public struct ServerParent: Equatable, Sendable {
        public var serverID: String
        public var followUpRequired: Bool
        public var answers: [FieldAnswer]

        public init(serverID: String, followUpRequired: Bool, answers: [FieldAnswer]) {
            self.serverID = serverID
            self.followUpRequired = followUpRequired
            self.answers = answers
        }
    }

    /// A new inspection from `template` at a facility (and optionally an area).
    public init(
        template: Template, templateAlreadyPinned: Bool, facilityID: String, facilityName: String,
        areaID: String? = nil, areaName: String? = nil
    ) {
        self.template = template
        self.templateAlreadyPinned = templateAlreadyPinned
        self.facilityID = facilityID
        self.facilityName = facilityName
        self.areaID = areaID
        self.areaName = areaName
        parent = nil
    }

    /// A re-inspection of `parent`: the same pinned template, facility and
    /// area, linked to the parent, with its non-scoring answers copied.
    /// The parent must be completed and still need its follow-up; `decide`
    /// checks both. A parent without a pinned template cannot be followed up.
    public static func reinspection(of parent: InspectionState) throws(DomainError) -> StartInspection {
        guard let template = parent.template else {
            throw .templateNotPinned(inspection: parent.id, templateHash: parent.templateHash)
        }
        var start = StartInspection(
            template: template, templateAlreadyPinned: true, facilityID: parent.facilityID,
            facilityName: parent.facilityName, areaID: parent.areaID, areaName: parent.areaName)
        start.parent = parent
        return start
    }
}
