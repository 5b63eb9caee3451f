import FoundationEssentials
import LedgerCore

/// One inspection as its events leave it: the fold of its stream.
///
/// Built only by `apply`, and read by `decide` to choose the next events.
/// Inspector state (`status`) and sync state (`sync`) are kept apart, as the
/// domain asks: a completed inspection may be unsynced, retrying, or failed.
public struct InspectionState: Hashable, Sendable {
    /// The inspection's id, which is also its stream id.
    public let id: UUID
    public var status: InspectionStatus = .notStarted

    public var templateID = ""
    public var templateHash = ""
    /// The pinned template, once its `template.pinned` event (in this stream,
    /// or given to `apply` from another) matches `templateHash`.
    public var template: Template?

    public var facilityID = ""
    public var facilityName = ""
    public var areaID: String?
    public var areaName: String?
    /// Set for a re-inspection: the completed inspection it follows up.
    public var parentInspectionID: UUID?
    /// The server record this one re-inspects, when it is not in this ledger.
    public var parentServerID: String?

    /// The current answers; a cleared field has no entry.
    public var values: [FieldID: FieldValue] = [:]
    /// Every capture, in the order taken.
    public var photos: [CapturedPhoto] = []
    /// Every flagged issue, in the order flagged.
    public var issues: [FlaggedIssue] = []

    /// The score recorded at submit (nil before, or when nothing scoreable was answered).
    public var score: Double?
    public var followUpRequired = false
    /// The re-inspection whose submit resolved this inspection's follow-up.
    public var followUpResolvedBy: UUID?

    public var startedAt: Timestamp?
    public var startedBy: Actor?
    /// The device whose record started it (nil before a device is known):
    /// whether `startedBy` is this device's actor or another device's claim.
    public var startedOn: UUID?
    /// When the last event changed the inspector's record.
    public var updatedAt: Timestamp?
    public var completedAt: Timestamp?
    public var completedBy: Actor?
    /// The device whose submit stands, as `startedOn` for `completedBy`.
    public var completedOn: UUID?
    public var discardedAt: Timestamp?
    public var discardReason: String?

    /// Set by this device's `inspection.handed_over`: where the inspection
    /// went (with mode `handover`, nothing more is recorded here).
    public var handedOver: HandOff?
    /// Every `inspection.received` of the stream, in order.
    public var receivedFrom: [ReceptionOrigin] = []
    /// The ids of the other devices' events folded from receptions.
    public var carriedEventIDs: Set<UUID> = []

    /// This device: the device of the stream's own records, once one was
    /// folded with its device (`apply(_:recordedAt:actor:device:)`).
    public var device: UUID?
    /// Every submit of the inspection (one, unless two devices submitted a
    /// shared copy), and every discard.
    public var submits: [Closing] = []
    public var discards: [Closing] = []
    /// Every `inspection.send_adopted`, this device's and carried: a device
    /// that became the sender of another device's submission
    /// (`standingAdoption`).
    public var adoptions: [SendAdoption] = []
    /// This device shared the inspection after it was completed here or
    /// elsewhere: another device holds the submitted copy and may send it,
    /// so the sync looks it up before sending (`mayBeSentElsewhere`).
    public var sharedWhileCompleted = false
    /// Per device, the highest stream version of an answer, clear, photo or
    /// issue folded: what a discard must have seen to close the copy
    /// (`sawEverything`).
    var workFrontier: [UUID: UInt64] = [:]
    /// How a field's value is chosen among concurrent writes (`FieldMerge`).
    public var fieldMerge: FieldMerge = .latest
    /// The stamp of this device's last event of the stream.
    var lastStamp: EventStamp? {
        get { streamClock.last }
        set { streamClock.last = newValue }
    }
    var streamClock = StreamClock()
    /// While the stream has no reception: each field's last write.
    var lastWrites: [FieldID: FieldWrite] = [:]
    /// Once the stream has a reception: everything the merge needs.
    var merge: MergeHistory?
    /// What a reception's fold changed, for the derive after it.
    var changedSinceDerive = DeriveScope()

    /// What the server has acknowledged, and what failed.
    public var sync = SyncFacts()
    /// How many events of the stream have been applied (its version).
    public var eventCount = 0

    /// The state of a stream with no events yet.
    public init(id: UUID) { self.id = id }

    /// Whether the inspector may still change the record.
    public var isEditable: Bool { status == .draft }

    /// A follow-up that no re-inspection has resolved yet.
    public var followUpOutstanding: Bool { followUpRequired && followUpResolvedBy == nil }

    public func photo(id: UUID) -> CapturedPhoto? { photos.first { $0.photo.photoID == id } }
    public func issue(id: UUID) -> FlaggedIssue? { issues.first { $0.id == id } }

    /// The required fields that are still empty, in form order.
    public func missingRequiredFields() -> [TemplateField] {
        guard let template else { return [] }
        return template.fields.filter { $0.demandsValue && (values[$0.id]?.isEmpty ?? true) }
    }
}

/// A photo or signature taken during the inspection.
public struct CapturedPhoto: Hashable, Sendable {
    public var photo: PhotoReference
    public var kind: PhotoKind
    public var fieldID: FieldID?
    public var issueID: UUID?
    public var capturedAt: Timestamp
    public var capturedBy: Actor
    public var stamp: EventStamp
}

/// An issue flagged during the inspection.
public struct FlaggedIssue: Hashable, Sendable {
    public var id: UUID
    public var severity: IssueSeverity
    public var description: String
    public var photoID: UUID?
    public var flaggedAt: Timestamp
    public var flaggedBy: Actor
    public var stamp: EventStamp
}

/// The sync facts recorded as events: never a change to what the inspector
/// recorded, only what the server said about it.
public struct SyncFacts: Hashable, Sendable {
    /// The server's id of the inspection, once accepted: this device's own
    /// record when it sent one, else the record of the device whose submit
    /// stands, else the first a device reported (`serverRecords`).
    public var serverID: String?
    /// Every `sync.inspection_accepted` folded, this device's and carried:
    /// more than one id when two devices submitted and synced before they
    /// exchanged (`InspectionState.duplicateServerRecords`).
    public var serverRecords: [ServerRecord] = []
    /// Server paths of uploaded photos, by photo id.
    public var uploadedPhotos: [UUID: String] = [:]
    /// Server ids of accepted issues, by issue id.
    public var acceptedIssues: [UUID: String] = [:]
    /// Issues sent again after a lost answer that the server may hold twice
    /// (`IssueAccepted.sentAgainAfterLostAnswer`).
    public var issuesPossiblySentTwice: Set<UUID> = []
    /// Failures of items not (yet) accepted, reset by a retry request.
    public var failures: [SyncItem: SyncFailure] = [:]

    public init() {}

    /// Where `item` stands with the server.
    public func status(of item: SyncItem) -> ItemSyncStatus {
        let accepted =
            switch item.kind {
            case .photo: uploadedPhotos[item.id] != nil
            case .inspection: serverID != nil
            case .issue: acceptedIssues[item.id] != nil
            }
        if accepted { return .synced }
        guard let failure = failures[item] else { return .pending }
        return failure.gaveUp ? .failed(failure) : .retrying(failure)
    }
}

/// A record of the inspection on the server, as the device that sent it
/// recorded the server's answer.
public struct ServerRecord: Hashable, Sendable {
    public var serverID: String
    /// The device whose log holds the acceptance (the one that sent it).
    public var device: UUID
    public var at: Timestamp

    public init(serverID: String, device: UUID, at: Timestamp) {
        self.serverID = serverID
        self.device = device
        self.at = at
    }
}

/// The failures of one item since it was last (re)queued.
public struct SyncFailure: Hashable, Sendable {
    /// Failed attempts since the last retry request.
    public var attempts = 0
    public var lastError = ""
    public var lastHTTPStatus: Int?
    public var lastFailedAt: Timestamp?
    public var nextAttemptAt: Timestamp?
    /// True after `sync.gave_up`: the worker will not try again by itself.
    public var gaveUp = false
    /// After `sync.dismissed`: why a person acknowledged that it failed for
    /// good; it is no longer in the outbox.
    public var dismissed: String?
}

/// Where one item stands with the server.
public enum ItemSyncStatus: Hashable, Sendable {
    /// Not sent yet, or re-queued by a retry request.
    case pending
    /// Failed, and the worker will try again.
    case retrying(SyncFailure)
    /// Failed for good until someone asks for a retry.
    case failed(SyncFailure)
    /// Accepted by the server.
    case synced
}
