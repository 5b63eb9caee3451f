import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// What is not on the server yet, counted by kind, and when the device last
/// synced, as `jqc status` shows it: read from the views (drafts, outbox)
/// and from the log's sync outcome events.
public struct SyncStanding: Sendable, Equatable {
    /// Drafts: inspections not submitted, nothing of them sent.
    public var drafts: Int
    /// Photos of drafts, sent once their inspection is submitted.
    public var draftPhotos: Int
    /// Submitted items waiting to be sent (pending, or retrying and not stalled), by kind.
    public var waiting: [SyncItemKind: Int]
    /// Items retried so often in a row that a person may want to look; still retried.
    public var stalled: [OutboxItem]
    /// Items failed for good, waiting for `jqc sync retry ID` once the cause is fixed.
    public var failed: [OutboxItem]
    /// Photos failed for good whose records went to the server without them.
    public var leftOut: Int
    /// Inspections submitted on another device (whose submit stands) and
    /// not reported sent: this device sends nothing of them, that device is
    /// expected to; each with its note (`InspectionState.syncNotes`).
    public var expectedElsewhere: [InspectionNote] = []
    /// Inspections the server holds more than one record of, with the note
    /// saying which stands and which to remove.
    public var serverRecordsTwice: [InspectionNote] = []
    /// The newest outcome the server accepted (`sync.*_accepted`, `sync.photo_uploaded`).
    public var lastSent: Timestamp?
    /// The newest sync outcome of any kind (accepted, failed, given up).
    public var lastAttempt: Timestamp?
    /// Issues sent again after the server's answer was lost, which the
    /// server may hold twice (from the issues view), oldest first.
    public var possiblySentTwice: [UUID] = []

    /// The outcome events that mean the server took something.
    public static let acceptedTypes: Set<String> = [
        "sync.photo_uploaded", "sync.inspection_accepted", "sync.issue_accepted",
    ]
    /// Every outcome event of a send.
    public static let attemptTypes: Set<String> = acceptedTypes.union(["sync.attempt_failed", "sync.gave_up"])

    /// Submitted items not on the server yet, photos included (stalled and failed too; not those left out).
    public var unsent: Int { waiting.values.reduce(0, +) + stalled.count + failed.count }

    /// Photos not on the server: of drafts, and submitted ones still to send.
    public var photos: Int {
        draftPhotos + (waiting[.photo] ?? 0) + (stalled + failed).filter { $0.item.kind == .photo }.count
    }

    /// Whether the server has everything this device recorded, as far as
    /// the log says (and no copy it holds waits on another device).
    public var serverHasEverything: Bool { drafts == 0 && unsent == 0 && expectedElsewhere.isEmpty }

    /// What `jqc outbox` says when it is empty: never that the server has
    /// everything while a draft exists (a draft sends nothing until it is
    /// submitted), nor with no server configured to have it.
    public static func emptyOutboxLine(drafts: Int, serverConfigured: Bool) -> String {
        if drafts > 0 {
            return "The outbox is empty, but \(drafts) draft\(drafts == 1 ? " is" : "s are") only on this device: "
                + "nothing of an inspection is sent before 'jqc submit ID' ('jqc status' counts what is not on the "
                + "server)."
        }
        guard serverConfigured else {
            return "The outbox is empty; no server is configured, so nothing has reached one ('jqc config set server "
                + "URL'). 'jqc status' lists copies another device is expected to send."
        }
        return "The outbox is empty: the server has everything this device is to send."
    }

    /// Reads the standing of `ledger`.
    public static func read(_ ledger: InspectionLedger) throws -> SyncStanding {
        let drafts = try ledger.summaries(.drafts)
        var standing = SyncStanding(
            drafts: drafts.count, draftPhotos: drafts.reduce(0) { $0 + $1.photoCount }, waiting: [:], stalled: [],
            failed: [], leftOut: 0)
        let outbox = try ledger.outbox()
        for summary in try ledger.summaries(.all) where summary.status == .completed {
            if let note = summary.syncNotes.first(where: {
                $0.hasPrefix(InspectionState.serverRecordsNotePrefix)
            }) {
                standing.serverRecordsTwice.append(InspectionNote(inspection: summary.id, note: note))
            }
        }
        // Another device's submitted copy, not reported sent: the outbox
        // view's second table (only the sending device's outbox holds it).
        standing.expectedElsewhere = try ledger.unreportedSubmissions().map {
            InspectionNote(inspection: $0.inspectionID, note: $0.note)
        }
        for item in outbox {
            if item.leftOut {
                standing.leftOut += 1
                continue
            }
            switch item.state {
            case .stalled: standing.stalled.append(item)
            case .failed: standing.failed.append(item)
            default: standing.waiting[item.item.kind, default: 0] += 1
            }
        }
        standing.possiblySentTwice = try ledger.issues().filter(\.possiblySentTwice).sorted {
            $0.flaggedAt < $1.flaggedAt
        }
        .map(\.id)
        (standing.lastSent, standing.lastAttempt) = try lastSync(ledger, drafts: Set(drafts.map(\.id)))
        return standing
    }

    /// How many records back from the log's head the last sync is looked
    /// for before each submitted inspection's stream is asked instead.
    static let recentWindow: UInt64 = 4096

    /// The newest accepted outcome and the newest outcome of any kind.
    ///
    /// A device that synced lately has them near the log's head, so the
    /// last `recentWindow` records are looked at first. Otherwise (never
    /// synced, or long ago) each inspection's stream but the drafts' is
    /// read back from its end to its submission, the earliest a sync
    /// outcome can be: a record or two per inspection, found from the
    /// views' keys, instead of the whole log.
    static func lastSync(
        _ ledger: InspectionLedger, drafts: Set<UUID>, window: UInt64 = recentWindow
    ) throws -> (sent: Timestamp?, attempt: Timestamp?) {
        let recent = try ledger.log.read { reader -> LastSync? in
            var last = LastSync()
            let head = try reader.head().position
            var position = head
            while position > 0, head - position < window {
                if let record = try reader.record(at: position) { last.note(record) }
                if last.sent != nil { return last }
                position -= 1
            }
            // The whole log was looked at: nothing was ever sent.
            return position == 0 ? last : nil
        }
        if let recent { return (recent.sent?.at, recent.attempt?.at) }
        // From the views' keys, without decoding a row; a draft has no outcome.
        let submitted = try ledger.inspectionIDs().filter { !drafts.contains($0) }
        let found = try ledger.log.read { reader in
            var last = LastSync()
            for stream in submitted { try last.look(back: stream, reader) }
            return last
        }
        return (found.sent?.at, found.attempt?.at)
    }

    /// The newest outcomes seen so far, by log position.
    struct LastSync {
        var sent: (position: UInt64, at: Timestamp)?
        var attempt: (position: UInt64, at: Timestamp)?

        mutating func note(_ record: EventRecord) {
            guard SyncStanding.attemptTypes.contains(record.type) else { return }
            let seen = (record.position, record.recordedAt)
            if record.position > attempt?.position ?? 0 { attempt = seen }
            if SyncStanding.acceptedTypes.contains(record.type), record.position > sent?.position ?? 0 { sent = seen }
        }

        /// Notes the outcomes of `stream`, read back from its end to its
        /// submission (or its start), a few records at a time.
        mutating func look(back stream: UUID, _ reader: LedgerReader) throws {
            var end = try reader.version(ofStream: stream) + 1
            // The newest record first: a submission not sent yet is the last one.
            var step: UInt64 = 1
            while end > 1 {
                let from = end > step ? end - step : 1
                let records = try reader.records(inStream: stream, fromVersion: from).prefix { $0.streamVersion < end }
                for record in records.reversed() {
                    if record.type == InspectionEventType.submitted.rawValue { return }
                    note(record)
                    // Only the stream's newest outcomes can be the newest of all.
                    if sent != nil, record.position < sent!.position { return }
                }
                end = from
                step *= 2
            }
        }
    }

    public init(
        drafts: Int, draftPhotos: Int, waiting: [SyncItemKind: Int], stalled: [OutboxItem], failed: [OutboxItem],
        leftOut: Int, lastSent: Timestamp? = nil, lastAttempt: Timestamp? = nil
    ) {
        self.drafts = drafts
        self.draftPhotos = draftPhotos
        self.waiting = waiting
        self.stalled = stalled
        self.failed = failed
        self.leftOut = leftOut
        self.lastSent = lastSent
        self.lastAttempt = lastAttempt
    }
}

/// One inspection and what a note of its sync says (`jqc status`).
public struct InspectionNote: Sendable, Equatable {
    public var inspection: UUID
    public var note: String

    public init(inspection: UUID, note: String) {
        self.inspection = inspection
        self.note = note
    }
}
