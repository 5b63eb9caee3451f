import FoundationEssentials
import LedgerCore

// MARK: - The inspector's events

/// `inspection.started`: an inspection of a facility begins from a pinned template.
public struct InspectionStarted: Hashable, Sendable {
    public var templateID: String
    /// `Template.contentHash` of the template the inspector saw.
    public var templateHash: String
    public var facilityID: String
    public var facilityName: String
    public var areaID: String?
    public var areaName: String?
    /// The inspection this one re-inspects, when it is a re-inspection.
    public var parentInspectionID: UUID?
    /// The server's id of the record this one re-inspects, when that record
    /// is not in this ledger (a colleague's, from `jqc history`); written
    /// only when set, as `parent_server_id`.
    public var parentServerID: String?
    /// Answers copied from the parent (a re-inspection), in field id order.
    public var prefilled: [FieldAnswer]

    public init(
        templateID: String, templateHash: String, facilityID: String, facilityName: String, areaID: String? = nil,
        areaName: String? = nil, parentInspectionID: UUID? = nil, parentServerID: String? = nil,
        prefilled: [FieldAnswer] = []
    ) {
        self.parentServerID = parentServerID
        self.templateID = templateID
        self.templateHash = templateHash
        self.facilityID = facilityID
        self.facilityName = facilityName
        self.areaID = areaID
        self.areaName = areaName
        self.parentInspectionID = parentInspectionID
        // One order for equal sets of answers, whatever order they came in.
        self.prefilled = prefilled.sorted { $0.fieldID < $1.fieldID }
    }
}

/// `template.pinned`: the exact template an inspection used, written once,
/// before the first `inspection.started` that refers to its hash.
public struct TemplatePinned: Hashable, Sendable {
    public var templateHash: String
    public var template: Template

    /// Pins `template` under its content hash.
    public init(template: Template) {
        self.init(templateHash: template.contentHash, template: template)
    }

    /// Pins as recorded (decoding), without recomputing the hash.
    public init(templateHash: String, template: Template) {
        self.templateHash = templateHash
        self.template = template
    }
}

/// A field's answer with the field's type, so a stored value reads back
/// without the template: `inspection.field_set` and the `prefilled` of
/// `inspection.started`.
///
/// The type is recorded because a CBOR text alone could be a text, a number,
/// a date, an option or a pass_fail answer. Carrying it lets replay decode a
/// value without looking the template up, lets an auditor read a value with
/// any CBOR tool, and lets the JSON schema check each value's shape.
public struct FieldAnswer: Hashable, Sendable {
    public var fieldID: FieldID
    public var fieldType: FieldType
    public var value: FieldValue

    public init(fieldID: FieldID, fieldType: FieldType, value: FieldValue) {
        self.fieldID = fieldID
        self.fieldType = fieldType
        self.value = value
    }

    /// The answer for `field`.
    public init(field: TemplateField, value: FieldValue) {
        self.init(fieldID: field.id, fieldType: field.type, value: value)
    }
}

/// `inspection.field_cleared`: a field becomes unanswered.
public struct FieldCleared: Hashable, Sendable {
    public var fieldID: FieldID
    public init(fieldID: FieldID) { self.fieldID = fieldID }
}

/// `photo.captured`: a file was taken for an image or signature field, an
/// issue, or the inspection as a whole (neither field nor issue).
public struct PhotoCaptured: Hashable, Sendable {
    public var photo: PhotoReference
    public var kind: PhotoKind
    public var fieldID: FieldID?
    public var issueID: UUID?

    public init(photo: PhotoReference, kind: PhotoKind, fieldID: FieldID? = nil, issueID: UUID? = nil) {
        self.photo = photo
        self.kind = kind
        self.fieldID = fieldID
        self.issueID = issueID
    }
}

/// `issue.flagged`: a problem found during the inspection.
public struct IssueFlagged: Hashable, Sendable {
    public var issueID: UUID
    public var severity: IssueSeverity
    public var description: String
    public var photoID: UUID?

    public init(issueID: UUID, severity: IssueSeverity, description: String, photoID: UUID? = nil) {
        self.issueID = issueID
        self.severity = severity
        self.description = description
        self.photoID = photoID
    }
}

/// `inspection.submitted`: the draft is final; the score is recorded as it
/// was computed then, so a later change of the scoring rules never changes
/// a submitted score.
public struct InspectionSubmitted: Hashable, Sendable {
    /// 0–100 with two decimals, or nil when nothing scoreable was answered.
    public var score: Double?
    public var followUpRequired: Bool

    public init(score: Double?, followUpRequired: Bool) {
        self.score = score
        self.followUpRequired = followUpRequired
    }
}

/// `inspection.discarded`: a draft is abandoned (it stays in the log).
public struct InspectionDiscarded: Hashable, Sendable {
    public var reason: String?
    public init(reason: String? = nil) { self.reason = reason }
}

// MARK: - Sync outcomes

/// `sync.photo_uploaded`: the server stored a photo at `serverPath`.
public struct PhotoUploaded: Hashable, Sendable {
    public var photoID: UUID
    public var serverPath: String

    public init(photoID: UUID, serverPath: String) {
        self.photoID = photoID
        self.serverPath = serverPath
    }
}

/// `sync.inspection_accepted`: the server recorded the inspection under `serverID`.
public struct InspectionAccepted: Hashable, Sendable {
    public var serverID: String
    public init(serverID: String) { self.serverID = serverID }
}

/// `sync.issue_accepted`: the server recorded an issue under `serverID`.
public struct IssueAccepted: Hashable, Sendable {
    public var issueID: UUID
    public var serverID: String
    /// The issue was sent again after the answer to an earlier send was lost
    /// (or a run ended while it was on the network), and the server's answer
    /// did not say it was a replay of that send. A server that lists no
    /// issues (the reference backend) offers no way to check, so it may hold
    /// the issue twice: every view says so (`docs/domain.md`, "Sync").
    /// Stored as `sent_again_after_lost_answer: true`, only when true.
    public var sentAgainAfterLostAnswer: Bool

    public init(issueID: UUID, serverID: String, sentAgainAfterLostAnswer: Bool = false) {
        self.issueID = issueID
        self.serverID = serverID
        self.sentAgainAfterLostAnswer = sentAgainAfterLostAnswer
    }
}

/// `sync.attempt_failed`: one attempt to send an item failed.
public struct SyncAttemptFailed: Hashable, Sendable {
    public var item: SyncItem
    /// 1 for the first attempt.
    public var attempt: Int
    public var error: String
    /// The HTTP status, when the server answered at all.
    public var httpStatus: Int?
    public var willRetry: Bool
    /// When the worker means to try again (absent when it will not).
    public var nextAttemptAt: Timestamp?

    public init(
        item: SyncItem, attempt: Int, error: String, httpStatus: Int? = nil, willRetry: Bool,
        nextAttemptAt: Timestamp? = nil
    ) {
        self.item = item
        self.attempt = attempt
        self.error = error
        self.httpStatus = httpStatus
        self.willRetry = willRetry
        self.nextAttemptAt = nextAttemptAt
    }
}

/// `sync.gave_up`: an item failed for good; it stays visible with its last
/// error until someone asks for a retry.
public struct SyncGaveUp: Hashable, Sendable {
    public var item: SyncItem
    public var error: String

    public init(item: SyncItem, error: String) {
        self.item = item
        self.error = error
    }
}

/// `sync.retry_requested`: a person asked to send a failed item again.
public struct SyncRetryRequested: Hashable, Sendable {
    public var item: SyncItem
    public init(item: SyncItem) { self.item = item }
}

/// `sync.dismissed`: a person acknowledged that an item failed for good and
/// will not reach the server, with why; it leaves the outbox (the failure and
/// this acknowledgement stay in the log; `sync.retry_requested` queues it again).
public struct SyncDismissed: Hashable, Sendable {
    public var item: SyncItem
    public var reason: String

    public init(item: SyncItem, reason: String) {
        self.item = item
        self.reason = reason
    }
}

/// An event's type, schema version and payload bytes as stored, for types
/// this program does not know and for upcasting old versions.
public struct StoredPayload: Hashable, Sendable {
    public var type: String
    public var schemaVersion: Int
    public var payload: [UInt8]

    public init(type: String, schemaVersion: Int, payload: [UInt8]) {
        self.type = type
        self.schemaVersion = schemaVersion
        self.payload = payload
    }
}
