import FoundationEssentials
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore

/// The LMDB tables of the inspection views (all rebuilt from the log).
struct InspectionTables: Sendable {
    let inspections: Table
    let reinspections: Table
    let templates: Table
    let drafts: Table
    let followUps: Table
    let issues: Table
    let outbox: Table
    /// Nil only in a read-only open of a store written before the outbox's
    /// second table existed (that view is then stale, and a listing reopens
    /// the ledger for writing, which builds it).
    let unreported: Table?

    static let names = (
        inspections: TableName.View.inspections, reinspections: TableName.View.reinspections,
        templates: TableName.View.templates, drafts: TableName.View.drafts, followUps: TableName.View.followUps,
        issues: TableName.View.issues, outbox: TableName.View.outbox,
        unreported: TableName.View.unreportedSubmissions
    )

    /// `existing`: how to open a table that an older store may lack (nil
    /// then); by default `table`.
    init(_ table: (ViewTable) throws -> Table, existing: ((ViewTable) throws -> Table?)? = nil) throws {
        inspections = try table(Self.names.inspections)
        reinspections = try table(Self.names.reinspections)
        templates = try table(Self.names.templates)
        drafts = try table(Self.names.drafts)
        followUps = try table(Self.names.followUps)
        issues = try table(Self.names.issues)
        outbox = try table(Self.names.outbox)
        unreported = try existing.map { try $0(Self.names.unreported) } ?? table(Self.names.unreported)
    }

    /// The view a table belongs to (`view:reinspections` is the inspections
    /// view's, `view:unreported_submissions` the outbox's).
    static func view(of table: String) -> String {
        if table == names.reinspections.name { return InspectionView.Kind.inspections.rawValue }
        if table == names.unreported.name { return InspectionView.Kind.outbox.rawValue }
        return String(table.dropFirst(TableName.viewPrefix.count))
    }

    /// A stored row's value with its checksum checked, or `ViewDamage`.
    static func open(_ table: Table, _ key: [UInt8], _ stored: [UInt8]) throws(ViewDamage) -> [UInt8] {
        try ViewRowChecksum.open(view: view(of: table.name), table: table.name, key: key, stored: stored)
    }

    /// The value of the row under `key`, checked; nil when there is none.
    func row(_ table: Table, _ key: [UInt8], _ txn: Transaction) throws -> [UInt8]? {
        guard let stored = try txn.get(table, key) else { return nil }
        return try Self.open(table, key, stored)
    }
}

/// The keys of one kind of view row, a text-keyed map, with their
/// deterministic order (by encoded bytes) worked out once: encoding a
/// `CBORValue` map encodes and sorts every key of every row, which a rebuild
/// did for tens of thousands of rows with the same keys.
struct RowKeys: Sendable {
    /// Literals, written as they are: a rebuild's threads write them into
    /// every row, and a literal string has no reference count for them to
    /// bump (the keys' encoded bytes, kept in arrays, had one each, which
    /// the threads took from each other's caches for every key of every row).
    let keys: [String]
    private let order: [Int]

    init(_ keys: [String]) {
        self.keys = keys
        let encodedKeys = keys.map { CBORValue.text($0).encoded() }
        order = encodedKeys.indices.sorted { encodedKeys[$0].lexicographicallyPrecedes(encodedKeys[$1]) }
    }

    /// The row's bytes: the same as `CBORValue.textMap(pairs).encoded()`,
    /// `pairs` being these keys, in this order, with their values.
    func encode(_ pairs: [(String, CBORValue)]) -> [UInt8] {
        precondition(pairs.count == keys.count, "a row of \(pairs.count) keys where \(keys.count) were worked out")
        assert(pairs.map(\.0) == keys, "a row's keys are not the ones its order was worked out for")
        var writer = CBORWriter()
        writer.writeMapHeader(count: pairs.count)
        for index in order {
            writer.write(text: keys[index])
            pairs[index].1.write(to: &writer)
        }
        return writer.bytes
    }
}

/// Where an inspection stands with the server, in one word for listings.
public enum SyncState: String, Sendable, CaseIterable {
    /// A draft: nothing to send yet.
    case local
    /// Completed, with something not yet accepted and nothing failed for good.
    case pending
    /// Something failed and will be retried.
    case retrying
    /// Something has failed so many times in a row that a person may want to
    /// look (`SyncFailure.isStalled`); it is still retried, never given up by count.
    case stalled
    /// Something failed for good (a refusal, or a local fault); `jqc sync retry` puts it back.
    case failed
    /// Everything accepted except photos that failed for good: the records
    /// went out without them (the notes say which, and why).
    case syncedWithoutPhotos = "synced-without-photos"
    /// Everything accepted.
    case synced

    /// Where a folded inspection stands with the server.
    public static func of(_ state: InspectionState) -> SyncState {
        guard state.status == .completed else { return .local }
        let leftOut = Set(state.photosSentWithout.map(\.photo.photo.photoID))
        // One pass over the items (`OutboxItem.items(of:)`), nothing
        // collected: every rebuild asks this of every inspection.
        var failed = false
        var stalled = false
        var retrying = false
        var pending = false
        func count(_ item: SyncItem) {
            switch state.sync.status(of: item) {
            case .synced: break
            case .pending: pending = true
            case .failed: failed = true
            case .retrying(let failure):
                retrying = true
                if failure.isStalled { stalled = true }
            }
        }
        for photo in state.photos where !leftOut.contains(photo.photo.photoID) {
            count(SyncItem(kind: .photo, id: photo.photo.photoID))
        }
        count(SyncItem(kind: .inspection, id: state.id))
        for issue in state.issues { count(SyncItem(kind: .issue, id: issue.id)) }
        if failed { return .failed }
        if stalled { return .stalled }
        if retrying { return .retrying }
        if pending { return .pending }
        return leftOut.isEmpty ? .synced : .syncedWithoutPhotos
    }
}

/// One inspection in the `inspections` view: what listings show, without
/// folding its stream.
public struct InspectionSummary: Hashable, Sendable {
    public var id: UUID
    public var status: InspectionStatus
    public var templateID: String
    public var templateName: String
    public var facilityID: String
    public var facilityName: String
    public var areaName: String?
    public var parentID: UUID?
    public var startedAt: Timestamp?
    public var startedBy: String
    public var updatedAt: Timestamp?
    public var completedAt: Timestamp?
    public var score: Double?
    public var followUpRequired: Bool
    public var followUpResolvedBy: UUID?
    public var serverID: String?
    public var syncState: SyncState
    /// What the one-word state cannot say: photos the records went out
    /// without (and why), what an unsent inspection waits for.
    public var syncNotes: [String]
    public var answered: Int
    public var issueCount: Int
    public var photoCount: Int
    /// The stream's version: what a command expects when it appends.
    public var version: UInt64

    init(_ state: InspectionState) {
        id = state.id
        status = state.status
        templateID = state.templateID
        templateName = state.template?.name ?? ""
        facilityID = state.facilityID
        facilityName = state.facilityName
        areaName = state.areaName
        parentID = state.parentInspectionID
        startedAt = state.startedAt
        startedBy = state.startedBy?.name ?? ""
        updatedAt = state.updatedAt
        completedAt = state.completedAt
        score = state.score
        followUpRequired = state.followUpRequired
        followUpResolvedBy = state.followUpResolvedBy
        serverID = state.sync.serverID
        syncState = SyncState.of(state)
        syncNotes = state.syncNotes
        answered = state.values.values.reduce(0) { $0 + ($1.isEmpty ? 0 : 1) }
        issueCount = state.issues.count
        photoCount = state.photos.count
        version = UInt64(state.eventCount)
    }

    static let rowKeys = RowKeys([
        "status", "template_id", "template_name", "facility_id", "facility_name", "area_name", "parent", "started_at",
        "started_by", "updated_at", "completed_at", "score", "follow_up", "follow_up_resolved_by", "server_id", "sync",
        "sync_notes", "answered", "issues", "photos", "version",
    ])

    /// The row's bytes (keys in `rowKeys`' order).
    var encoded: [UInt8] {
        func time(_ t: Timestamp?) -> CBORValue { t.map { .integer($0.microsecondsSinceEpoch) } ?? .null }
        func text(_ s: String?) -> CBORValue { s.map { .text($0) } ?? .null }
        return Self.rowKeys.encode([
            ("status", .text(status.rawValue)), ("template_id", .text(templateID)),
            ("template_name", .text(templateName)), ("facility_id", .text(facilityID)),
            ("facility_name", .text(facilityName)), ("area_name", text(areaName)),
            ("parent", parentID.map { .bytes($0.bytes) } ?? .null), ("started_at", time(startedAt)),
            ("started_by", .text(startedBy)), ("updated_at", time(updatedAt)), ("completed_at", time(completedAt)),
            ("score", score.map { .double($0) } ?? .null), ("follow_up", .bool(followUpRequired)),
            ("follow_up_resolved_by", followUpResolvedBy.map { .bytes($0.bytes) } ?? .null),
            ("server_id", text(serverID)), ("sync", .text(syncState.rawValue)),
            ("sync_notes", .array(syncNotes.map { .text($0) })), ("answered", .unsigned(UInt64(answered))),
            ("issues", .unsigned(UInt64(issueCount))),
            ("photos", .unsigned(UInt64(photoCount))), ("version", .unsigned(version)),
        ])
    }

    init(id: UUID, cbor v: CBORValue) throws {
        func text(_ key: String) throws -> String {
            guard let t = v[key]?.textValue else { throw InspectionStoreError.corruptView("inspection \(id): \(key)") }
            return t
        }
        func optionalText(_ key: String) -> String? { v[key]?.textValue }
        func time(_ key: String) -> Timestamp? {
            v[key]?.integerValue.map { Timestamp(microsecondsSinceEpoch: $0) }
        }
        func uuid(_ key: String) -> UUID? {
            if case .bytes(let b)? = v[key] { return UUID(bytes: b) }
            return nil
        }
        func int(_ key: String) -> Int { Int(v[key]?.integerValue ?? 0) }
        self.id = id
        guard let status = InspectionStatus(rawValue: try text("status")),
            let sync = SyncState(rawValue: try text("sync"))
        else { throw InspectionStoreError.corruptView("inspection \(id): status") }
        self.status = status
        templateID = try text("template_id")
        templateName = try text("template_name")
        facilityID = try text("facility_id")
        facilityName = try text("facility_name")
        areaName = optionalText("area_name")
        parentID = uuid("parent")
        startedAt = time("started_at")
        startedBy = optionalText("started_by") ?? ""
        updatedAt = time("updated_at")
        completedAt = time("completed_at")
        if case .double(let d)? = v["score"] { score = d } else { score = v["score"]?.integerValue.map(Double.init) }
        if case .bool(let b)? = v["follow_up"] { followUpRequired = b } else { followUpRequired = false }
        followUpResolvedBy = uuid("follow_up_resolved_by")
        serverID = optionalText("server_id")
        syncState = sync
        if case .array(let notes)? = v["sync_notes"] {
            syncNotes = notes.compactMap(\.textValue)
        } else {
            syncNotes = []
        }
        answered = int("answered")
        issueCount = int("issues")
        photoCount = int("photos")
        version = UInt64(clamping: int("version"))  // a planted negative version must not trap
    }

    static func read(_ id: UUID, _ txn: Transaction, _ tables: InspectionTables) throws -> InspectionSummary? {
        guard let bytes = try tables.row(tables.inspections, id.bytes, txn) else { return nil }
        return try InspectionSummary(id: id, cbor: try CBORValue(decoding: bytes))
    }
}

/// An issue in the `issues` view.
public struct IssueRow: Hashable, Sendable {
    public var id: UUID
    public var inspectionID: UUID
    public var facilityID: String
    public var facilityName: String
    public var severity: IssueSeverity
    public var description: String
    public var photoID: UUID?
    public var flaggedAt: Timestamp
    public var flaggedBy: String
    public var serverID: String?
    public var syncState: SyncState
    /// Sent again after the server's answer was lost, to a server that offers
    /// no way to check: it may hold the issue twice
    /// (`SyncFacts.issuesPossiblySentTwice`), said by `issues` and `status`
    /// as `show` and `sync` say it.
    public var possiblySentTwice: Bool

    init(_ issue: FlaggedIssue, of state: InspectionState) {
        id = issue.id
        inspectionID = state.id
        facilityID = state.facilityID
        facilityName = state.facilityName
        severity = issue.severity
        description = issue.description
        photoID = issue.photoID
        flaggedAt = issue.flaggedAt
        flaggedBy = issue.flaggedBy.name
        serverID = state.sync.acceptedIssues[issue.id]
        possiblySentTwice = state.sync.issuesPossiblySentTwice.contains(issue.id)
        switch (state.status, state.sync.status(of: SyncItem(kind: .issue, id: issue.id))) {
        case (.draft, _): syncState = .local
        case (_, .synced): syncState = .synced
        case (_, .failed): syncState = .failed
        case (_, .retrying(let failure)): syncState = failure.isStalled ? .stalled : .retrying
        default: syncState = .pending
        }
    }

    static let rowKeys = RowKeys([
        "inspection", "facility_id", "facility_name", "severity", "description", "photo", "flagged_at", "flagged_by",
        "server_id", "sync", "possibly_sent_twice",
    ])

    /// The row's bytes (keys in `rowKeys`' order).
    var encoded: [UInt8] {
        Self.rowKeys.encode([
            ("inspection", .bytes(inspectionID.bytes)), ("facility_id", .text(facilityID)),
            ("facility_name", .text(facilityName)), ("severity", .text(severity.rawValue)),
            ("description", .text(description)), ("photo", photoID.map { .bytes($0.bytes) } ?? .null),
            ("flagged_at", .integer(flaggedAt.microsecondsSinceEpoch)), ("flagged_by", .text(flaggedBy)),
            ("server_id", serverID.map { .text($0) } ?? .null), ("sync", .text(syncState.rawValue)),
            ("possibly_sent_twice", .bool(possiblySentTwice)),
        ])
    }

    init(id: UUID, cbor v: CBORValue) throws {
        guard case .bytes(let inspection)? = v["inspection"], let inspectionID = UUID(bytes: inspection),
            let severity = v["severity"]?.textValue.flatMap(IssueSeverity.init(rawValue:)),
            let flaggedAt = v["flagged_at"]?.integerValue,
            let sync = v["sync"]?.textValue.flatMap(SyncState.init(rawValue:))
        else { throw InspectionStoreError.corruptView("issue \(id)") }
        self.id = id
        self.inspectionID = inspectionID
        facilityID = v["facility_id"]?.textValue ?? ""
        facilityName = v["facility_name"]?.textValue ?? ""
        self.severity = severity
        description = v["description"]?.textValue ?? ""
        if case .bytes(let b)? = v["photo"] { photoID = UUID(bytes: b) } else { photoID = nil }
        self.flaggedAt = Timestamp(microsecondsSinceEpoch: flaggedAt)
        flaggedBy = v["flagged_by"]?.textValue ?? ""
        serverID = v["server_id"]?.textValue
        syncState = sync
        if case .bool(true)? = v["possibly_sent_twice"] { possiblySentTwice = true } else { possiblySentTwice = false }
    }
}

/// Something the server has not acknowledged, in the `outbox` view. Keys
/// (kind rank ‖ submitted-at µs ‖ item id) order photos first, then
/// inspections, then issues — the order a sync run must send them in — and
/// within each, in the order the inspections were submitted.
public struct OutboxItem: Hashable, Sendable {
    public var item: SyncItem
    public var inspectionID: UUID
    /// pending, retrying, stalled or failed.
    public var state: SyncState
    /// What the one-word state cannot say: what the item waits for, or that
    /// its record went out without it (a photo failed for good).
    public var detail: String?
    /// A photo failed for good whose record went to the server without it:
    /// it is kept here as a fact, but nothing will ever send it.
    public var leftOut: Bool
    public var attempts: Int
    public var nextAttemptAt: Timestamp?
    public var lastError: String?
    public var lastHTTPStatus: Int?
    /// The device whose submission this device sends, having adopted it
    /// (`jqc sync adopt`); nil when it was submitted here.
    public var adoptedFrom: UUID?

    static func rank(_ kind: SyncItemKind) -> UInt8 {
        switch kind {
        case .photo: 0
        case .inspection: 1
        case .issue: 2
        }
    }

    static func key(_ item: SyncItem, submittedAt: Timestamp?) -> [UInt8] {
        [rank(item.kind)] + BigEndian.bytes(UInt64(max(0, submittedAt?.microsecondsSinceEpoch ?? 0)))
            + item.id.bytes
    }

    /// Every item an inspection can owe the server, synced or not.
    static func items(of state: InspectionState) -> [(item: SyncItem, label: String)] {
        state.photos.map { (SyncItem(kind: .photo, id: $0.photo.photoID), "photo") }
            + [(SyncItem(kind: .inspection, id: state.id), "inspection")]
            + state.issues.map { (SyncItem(kind: .issue, id: $0.id), "issue") }
    }

    /// The outbox rows of an inspection: only completed inspections send
    /// anything, and only what is not yet accepted.
    static func rows(of state: InspectionState) -> [(key: [UInt8], row: OutboxItem?)] {
        // A handed-over inspection is the receiving device's to send, a
        // shared one its submitter's, or the device's that adopted it.
        // Asked once per inspection, not once per item: each looks through
        // the submits and adoptions.
        let sendsHere = state.status == .completed && !state.isHandedAway && state.sendsHere
        let adoptedFrom = sendsHere && state.adoptedHere ? state.standingAdoption?.submittedOnDevice : nil
        return items(of: state).map { entry in
            let key = key(entry.item, submittedAt: state.completedAt)
            guard sendsHere else { return (key, nil) }
            let status = state.sync.status(of: entry.item)
            var row: OutboxItem
            switch status {
            case .synced: return (key, nil)
            case .failed(let failure) where failure.dismissed != nil: return (key, nil)
            case .pending:
                row = OutboxItem(
                    item: entry.item, inspectionID: state.id, state: .pending, attempts: 0, nextAttemptAt: nil,
                    lastError: nil, lastHTTPStatus: nil)
            case .retrying(let failure), .failed(let failure):
                row = OutboxItem(
                    item: entry.item, inspectionID: state.id,
                    state: failure.gaveUp ? .failed : failure.isStalled ? .stalled : .retrying,
                    attempts: failure.attempts, nextAttemptAt: failure.nextAttemptAt, lastError: failure.lastError,
                    lastHTTPStatus: failure.lastHTTPStatus)
            }
            if entry.item.kind == .photo, let photo = state.photo(id: entry.item.id),
                case .synced = state.sync.status(of: state.owner(ofPhoto: photo))
            {
                let owner = photo.issueID.map { "issue \($0.lowercased.prefix(8))" } ?? "inspection"
                row.detail = "its \(owner) went to the server without it; it is not uploaded on its own"
                row.leftOut = true
            } else {
                row.detail = state.waitingReason(for: entry.item)
            }
            row.adoptedFrom = adoptedFrom
            return (key, row)
        }
    }

    static let rowKeys = RowKeys([
        "inspection", "state", "detail", "left_out", "attempts", "next_attempt_at", "last_error", "http_status",
        "adopted_from",
    ])

    /// The row's bytes (keys in `rowKeys`' order).
    var encoded: [UInt8] {
        Self.rowKeys.encode([
            ("inspection", .bytes(inspectionID.bytes)), ("state", .text(state.rawValue)),
            ("detail", detail.map { .text($0) } ?? .null), ("left_out", .bool(leftOut)),
            ("attempts", .unsigned(UInt64(attempts))),
            ("next_attempt_at", nextAttemptAt.map { .integer($0.microsecondsSinceEpoch) } ?? .null),
            ("last_error", lastError.map { .text($0) } ?? .null),
            ("http_status", lastHTTPStatus.map { .integer(Int64($0)) } ?? .null),
            ("adopted_from", adoptedFrom.map { .bytes($0.bytes) } ?? .null),
        ])
    }

    init(
        item: SyncItem, inspectionID: UUID, state: SyncState, attempts: Int, nextAttemptAt: Timestamp?,
        lastError: String?, lastHTTPStatus: Int?
    ) {
        self.item = item
        self.inspectionID = inspectionID
        self.state = state
        detail = nil
        leftOut = false
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.lastHTTPStatus = lastHTTPStatus
        adoptedFrom = nil
    }

    init(key: [UInt8], cbor v: CBORValue) throws {
        guard key.count == 25, let id = UUID(bytes: Array(key[9...])),
            let kind: SyncItemKind = [.photo, .inspection, .issue].first(where: { Self.rank($0) == key[0] }),
            case .bytes(let inspection)? = v["inspection"], let inspectionID = UUID(bytes: inspection),
            let state = v["state"]?.textValue.flatMap(SyncState.init(rawValue:))
        else { throw InspectionStoreError.corruptView("outbox entry") }
        item = SyncItem(kind: kind, id: id)
        self.inspectionID = inspectionID
        self.state = state
        detail = v["detail"]?.textValue
        if case .bool(let flag)? = v["left_out"] { leftOut = flag } else { leftOut = false }
        attempts = Int(v["attempts"]?.integerValue ?? 0)
        nextAttemptAt = v["next_attempt_at"]?.integerValue.map { Timestamp(microsecondsSinceEpoch: $0) }
        lastError = v["last_error"]?.textValue
        lastHTTPStatus = v["http_status"]?.integerValue.map { Int($0) }
        if case .bytes(let bytes)? = v["adopted_from"] { adoptedFrom = UUID(bytes: bytes) } else { adoptedFrom = nil }
    }
}

/// A submission recorded on another device that this device holds a copy of
/// and that no device has reported sent, in the outbox view's second table
/// (`view:unreported_submissions`): not this device's to send, unless
/// `jqc sync adopt ID` makes it so. Keys (submitted-at µs ‖ inspection id)
/// order them as the outbox orders its inspections.
public struct UnreportedSubmission: Hashable, Sendable {
    public var inspectionID: UUID
    /// The device whose submit stands.
    public var submittedOnDevice: UUID
    public var submittedAt: Timestamp
    public var submittedBy: String
    /// The device expected to send it: the submitter, or the device whose
    /// adoption (`inspection.send_adopted`) this device received.
    public var expectedSender: UUID
    /// When that device adopted it (nil: not adopted).
    public var adoptedAt: Timestamp?
    public var photos: Int
    public var issues: Int
    /// `InspectionState.expectedElsewhereNote`: the words `status` and `show` use.
    public var note: String

    static func key(_ id: UUID, submittedAt: Timestamp?) -> [UInt8] {
        BigEndian.bytes(UInt64(max(0, submittedAt?.microsecondsSinceEpoch ?? 0))) + id.bytes
    }

    /// The row of `state`, or nil when it is none (`InspectionState.unreportedSubmission`).
    static func row(of state: InspectionState) -> UnreportedSubmission? {
        guard let submit = state.unreportedSubmission else { return nil }
        let adoption = state.standingAdoption
        return UnreportedSubmission(
            inspectionID: state.id, submittedOnDevice: submit.stamp.device, submittedAt: submit.at,
            submittedBy: submit.by.name, expectedSender: adoption?.device ?? submit.stamp.device,
            adoptedAt: adoption?.at, photos: state.photos.count, issues: state.issues.count,
            note: state.expectedElsewhereNote(submit))
    }

    static let rowKeys = RowKeys([
        "submitted_on_device", "submitted_at", "submitted_by", "expected_sender", "adopted_at", "photos", "issues",
        "note",
    ])

    /// The row's bytes (keys in `rowKeys`' order).
    var encoded: [UInt8] {
        Self.rowKeys.encode([
            ("submitted_on_device", .bytes(submittedOnDevice.bytes)),
            ("submitted_at", .integer(submittedAt.microsecondsSinceEpoch)), ("submitted_by", .text(submittedBy)),
            ("expected_sender", .bytes(expectedSender.bytes)),
            ("adopted_at", adoptedAt.map { .integer($0.microsecondsSinceEpoch) } ?? .null),
            ("photos", .unsigned(UInt64(photos))), ("issues", .unsigned(UInt64(issues))), ("note", .text(note)),
        ])
    }

    init(
        inspectionID: UUID, submittedOnDevice: UUID, submittedAt: Timestamp, submittedBy: String,
        expectedSender: UUID, adoptedAt: Timestamp?, photos: Int, issues: Int, note: String
    ) {
        self.inspectionID = inspectionID
        self.submittedOnDevice = submittedOnDevice
        self.submittedAt = submittedAt
        self.submittedBy = submittedBy
        self.expectedSender = expectedSender
        self.adoptedAt = adoptedAt
        self.photos = photos
        self.issues = issues
        self.note = note
    }

    init(key: [UInt8], cbor v: CBORValue) throws {
        func device(_ name: String) -> UUID? {
            if case .bytes(let bytes)? = v[name] { return UUID(bytes: bytes) }
            return nil
        }
        guard key.count == 24, let id = UUID(bytes: Array(key[8...])), let submitter = device("submitted_on_device"),
            let sender = device("expected_sender"), let submittedAt = v["submitted_at"]?.integerValue
        else { throw InspectionStoreError.corruptView("unreported submission") }
        inspectionID = id
        submittedOnDevice = submitter
        self.submittedAt = Timestamp(microsecondsSinceEpoch: submittedAt)
        submittedBy = v["submitted_by"]?.textValue ?? ""
        expectedSender = sender
        adoptedAt = v["adopted_at"]?.integerValue.map { Timestamp(microsecondsSinceEpoch: $0) }
        photos = Int(clamping: v["photos"]?.integerValue ?? 0)
        issues = Int(clamping: v["issues"]?.integerValue ?? 0)
        note = v["note"]?.textValue ?? ""
    }
}
