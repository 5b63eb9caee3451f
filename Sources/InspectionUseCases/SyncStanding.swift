import Foundation
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
    /// The newest outcome the server accepted (`sync.*_accepted`, `sync.photo_uploaded`).
    public var lastSent: Timestamp?
    /// The newest sync outcome of any kind (accepted, failed, given up).
    public var lastAttempt: Timestamp?

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

    /// Whether the server has everything this device recorded.
    public var serverHasEverything: Bool { drafts == 0 && unsent == 0 }

    /// Reads the standing of `ledger`.
    public static func read(_ ledger: InspectionLedger) throws -> SyncStanding {
        let drafts = try ledger.summaries(.drafts)
        var standing = SyncStanding(
            drafts: drafts.count, draftPhotos: drafts.reduce(0) { $0 + $1.photoCount }, waiting: [:], stalled: [],
            failed: [], leftOut: 0)
        for item in try ledger.outbox() {
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
        (standing.lastSent, standing.lastAttempt) = try lastSync(ledger.log)
        return standing
    }

    /// The newest accepted outcome and the newest outcome of any kind,
    /// walking the log back from its head until both are found.
    static func lastSync(_ log: EventLog) throws -> (sent: Timestamp?, attempt: Timestamp?) {
        try log.read { reader in
            var sent: Timestamp?
            var attempt: Timestamp?
            var position = try reader.head().position
            while position > 0, sent == nil {
                if let record = try reader.record(at: position), attemptTypes.contains(record.type) {
                    if attempt == nil { attempt = record.recordedAt }
                    if acceptedTypes.contains(record.type) { sent = record.recordedAt }
                }
                position -= 1
            }
            return (sent, attempt)
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
