import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore

/// What one sync run did, for the summary `jqc sync` prints.
public struct SyncReport: Sendable {
    /// Why a run stopped before it went through the outbox.
    public enum Stop: Sendable, Equatable, CustomStringConvertible {
        /// The session was refused and could not be refreshed; no attempt was counted.
        case loginRequired(String)
        /// The server could not be reached (no connection: nothing recorded),
        /// or did not answer in time (that item's attempt counted); the rest wait.
        case serverUnreachable(String)
        /// The transport refused to send (TLS, redirect, a bad URL): a
        /// configuration problem, not the items' fault, so no attempt was counted.
        case transportRefused(String)
        /// SIGINT or SIGTERM: the item in flight was finished and recorded first.
        case interrupted

        public var description: String {
            switch self {
            case .loginRequired(let why), .serverUnreachable(let why), .transportRefused(let why): why
            case .interrupted:
                "Sync was interrupted: every answer that arrived was recorded first; a request cut short is "
                    + "sent again by the next sync, under the same idempotency key."
            }
        }
    }

    /// How the reference-data pull at the end of the run went.
    public enum Reference: Sendable, Equatable {
        case notAttempted
        case refreshed(facilities: Int, templates: Int)
        case failed(String)
    }

    /// An item that failed, in this run or before.
    public struct Failure: Sendable, Equatable {
        public var item: SyncItem
        public var inspectionID: UUID
        public var error: String
        public var httpStatus: Int?
        /// When the worker tries again (nil once it has given up).
        public var nextAttemptAt: Timestamp?
        /// Failed attempts in a row, this one included.
        public var attempts: Int = 0

        /// Still retried, but failing long enough that a person may want to look.
        public var isStalled: Bool { nextAttemptAt != nil && attempts >= SyncFailure.stalledAfterAttempts }
    }

    /// An item of the outbox this run neither sent nor failed, with why and
    /// when it is tried next (`skippedItems`).
    public struct Skipped: Sendable, Equatable {
        public var item: SyncItem
        public var inspectionID: UUID
        /// Why it was not sent: not due yet after a failure, waiting for what
        /// it depends on, or not reached because the run stopped.
        public var reason: String
        /// When it is tried next: the recorded next attempt, or nil for the
        /// next sync (or as soon as what it waits for is on the server).
        public var nextAttemptAt: Timestamp?

        /// The reason with the next try, as `jqc sync` prints it.
        public var wording: String {
            if let nextAttemptAt { return "\(reason); next try \(nextAttemptAt.iso8601.prefix(19))Z" }
            if reason.hasPrefix("waiting for") { return "\(reason); it goes once that is on the server" }
            return "\(reason); next try at the next sync"
        }
    }

    /// Items the server accepted in this run, in the order they were sent.
    public internal(set) var sent: [SyncItem] = []
    /// Items of `sent` that a look-up found already on the server (an
    /// earlier send's answer was lost), adopted instead of sent again.
    public internal(set) var adopted: [SyncItem] = []
    /// Items of `adopted` that another device sent, not this one (the
    /// look-up of a copy that may be sent elsewhere, with no earlier send
    /// of this device's own in doubt), in the order found.
    public internal(set) var sentElsewhere: [SentElsewhere] = []
    /// Issues of `sent` that were sent again after an earlier send's answer
    /// was lost, to a server that did not say it was a replay: it may hold
    /// them twice (no endpoint lists issues, so nothing could be checked).
    public internal(set) var possiblySentTwice: [SyncItem] = []
    /// Items given up in this run (a refusal, a local fault, or a dependency
    /// that failed for good).
    public internal(set) var gaveUp: [Failure] = []
    /// Items that failed in this run and will be retried (stalled ones too:
    /// a transient failure is never given up by count).
    public internal(set) var retrying: [Failure] = []
    /// Photos failed for good whose records went to the server without them
    /// (before this run): facts to show, not failures anyone can retry.
    public internal(set) var leftOut: [Failure] = []
    /// Items that had failed for good before this run; `jqc sync retry` sends them again.
    public internal(set) var failedEarlier: [Failure] = []
    /// Items left in the outbox that this run neither sent nor failed: not
    /// due yet, waiting for what they depend on, or not reached.
    public internal(set) var skipped: [SyncItem] = []
    /// `skipped`, each with its reason and next try.
    public internal(set) var skippedItems: [Skipped] = []
    public internal(set) var reference: Reference = .notAttempted
    /// Templates the pull skipped, each named with why.
    public internal(set) var referenceWarnings: [String] = []
    public internal(set) var stop: Stop?
    /// The server's own reason for refusing the session (`HTTP 401: …`),
    /// beside `stop`'s whole sentence: what a line that already says "the
    /// server refused the session … log in again" quotes, so the sentence is
    /// never said inside itself.
    public internal(set) var sessionRefusedBecause: String?
    /// The earliest moment a retrying item is due again, if any.
    public internal(set) var nextAttemptAt: Timestamp?
    /// Passes made over the outbox (another pass runs while retries fall due).
    public internal(set) var passes = 0

    public init() {}

    /// An item found on the server that another device sent: the device,
    /// when this device knows it (the submitter of a copy it adopted), or
    /// nil (its own shared submission, adopted on a device it has not heard from).
    public struct SentElsewhere: Sendable, Equatable {
        public var item: SyncItem
        public var device: UUID?

        public init(item: SyncItem, device: UUID?) {
            self.item = item
            self.device = device
        }
    }

    /// Sent items of one kind.
    public func sentCount(_ kind: SyncItemKind) -> Int { sent.filter { $0.kind == kind }.count }

    /// Whether anything is failed for good (in this run or before), or the
    /// run could not go on without the user: `jqc sync` then exits 1.
    public var needsAttention: Bool {
        if !gaveUp.isEmpty || !failedEarlier.isEmpty { return true }
        switch stop {
        case .loginRequired, .transportRefused: return true
        case .serverUnreachable, .interrupted, nil: return false
        }
    }

    /// Fills in the remaining outbox's picture once the run is over.
    mutating func finish(outcomes: [SyncItem: Outcome], order: [SyncItem], remaining: [OutboxItem]) {
        for item in order {
            switch outcomes[item] {
            case .sent?: sent.append(item)
            case .gaveUp(let failure)?: gaveUp.append(failure)
            case .retrying(let failure)?: retrying.append(failure)
            case nil: break
            }
        }
        for row in remaining where outcomes[row.item] == nil {
            if row.leftOut {
                leftOut.append(
                    Failure(
                        item: row.item, inspectionID: row.inspectionID, error: row.lastError ?? "",
                        httpStatus: row.lastHTTPStatus, nextAttemptAt: nil, attempts: row.attempts))
            } else if row.state == .failed {
                failedEarlier.append(
                    Failure(
                        item: row.item, inspectionID: row.inspectionID, error: row.lastError ?? "",
                        httpStatus: row.lastHTTPStatus, nextAttemptAt: nil, attempts: row.attempts))
            } else {
                skipped.append(row.item)
                skippedItems.append(Self.skipped(row, stop: stop))
            }
        }
        nextAttemptAt = remaining.filter { $0.state == .retrying || $0.state == .stalled }.compactMap(\.nextAttemptAt)
            .min()
    }

    /// Why `row` was left in the outbox by a run that ended with `stop`.
    static func skipped(_ row: OutboxItem, stop: Stop?) -> Skipped {
        var reason: String
        if let error = row.lastError, row.state == .retrying || row.state == .stalled, row.nextAttemptAt != nil {
            let status = row.lastHTTPStatus.map { "HTTP \($0): " } ?? ""
            let already = error.hasPrefix("HTTP ") ? error : status + error
            reason = "not due yet: attempt \(row.attempts) failed (\(already))"
        } else if let detail = row.detail {
            reason = detail
        } else if let stop {
            let why: String =
                switch stop {
                case .loginRequired: "the server no longer accepts the session"
                case .serverUnreachable: "the server could not be reached"
                case .transportRefused: "the connection was refused by this device's settings"
                case .interrupted: "the sync was stopped"
                }
            reason = "not reached: \(why)"
        } else {
            reason = "not reached in this run"
        }
        reason = TerminalText.singleLine(reason)
        return Skipped(item: row.item, inspectionID: row.inspectionID, reason: reason, nextAttemptAt: row.nextAttemptAt)
    }

    /// An item's last outcome in a run.
    enum Outcome: Sendable {
        case sent
        case gaveUp(Failure)
        case retrying(Failure)
    }
}

/// One step of a run, for progress lines.
public struct SyncProgress: Sendable {
    /// What happened to the item.
    public enum Step: Sendable, Equatable {
        /// Looking the record up on the server before sending it again.
        case lookingUp
        case sending
        case sent(String)
        case willRetry(String)
        case gaveUp(String)
        case waiting(String)
    }

    public var item: SyncItem
    public var inspectionID: UUID
    /// 1-based place in this pass, and the pass's size.
    public var index: Int
    public var total: Int
    public var step: Step
}

extension SyncReport.Failure {
    /// The failure in one line: the item, its inspection and the error.
    public var summary: String {
        "\(item.named(inInspection: inspectionID)): \(TerminalText.singleLine(error))"
    }
}

extension SyncItem {
    /// The item with its inspection, as a line names it ("photo 3d15a2b0 of
    /// inspection c73923c2"); an inspection's own item once ("inspection
    /// c73923c2", not "inspection c73923c2 of inspection c73923c2").
    public func named(inInspection inspection: UUID) -> String {
        let own = "\(kind.rawValue) \(id.lowercased.prefix(8))"
        guard id != inspection else { return own }
        return own + " of inspection \(inspection.lowercased.prefix(8))"
    }
}
