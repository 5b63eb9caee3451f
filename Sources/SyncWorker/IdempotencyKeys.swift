import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// The `Idempotency-Key` of every write, taken from the event that caused it.
///
/// A photo's upload is keyed by its `photo.captured` event, an inspection's
/// submission by its `inspection.submitted` event and an issue's by its
/// `issue.flagged` event: `jqc-<kind>-<event id>`. Event ids are stored in the
/// log, so the key is the same on every retry, in every process and after a
/// crash; a request whose response was lost is answered from the server's
/// memory of the first one instead of creating a second record.
public struct IdempotencyKeys: Sendable, Equatable {
    /// The event ids that caused each write.
    var photoCaptured: [UUID: UUID] = [:]
    var issueFlagged: [UUID: UUID] = [:]
    var submitted: UUID?

    /// Reads the causing events from one inspection's stream, read through
    /// `reader` (whose `carried` table holds what its receptions carry).
    public init(records: [EventRecord], reader: LedgerReader?) throws {
        // A received inspection's captures and flags are the sender's
        // records its reception carries: keyed by their event ids too.
        var expanded: [EventRecord] = []
        let memo = StreamClosures()
        for record in records {
            if record.type == InspectionEventType.received.rawValue,
                case .received(let received) = try CarriedClosure.event(of: record, reader: reader, memo: memo)
            {
                expanded += try received.resolvedRecords()
            } else {
                expanded.append(record)
            }
        }
        for record in expanded {
            switch record.type {
            case InspectionEventType.photoCaptured.rawValue:
                if case .photoCaptured(let captured) = try EventUpcaster.decode(record, template: nil),
                    photoCaptured[captured.photo.photoID] == nil
                {
                    photoCaptured[captured.photo.photoID] = record.id
                }
            case InspectionEventType.issueFlagged.rawValue:
                if case .issueFlagged(let flagged) = try EventUpcaster.decode(record, template: nil),
                    issueFlagged[flagged.issueID] == nil
                {
                    issueFlagged[flagged.issueID] = record.id
                }
            case InspectionEventType.submitted.rawValue:
                if submitted == nil { submitted = record.id }
            default:
                break
            }
        }
    }

    /// The key for `item`. The causing event is always in the stream of a
    /// completed inspection; should it be missing, the key falls back to a
    /// hash of the item's kind and id, which is just as stable.
    public func key(for item: SyncItem) -> String {
        let cause: UUID? =
            switch item.kind {
            case .photo: photoCaptured[item.id]
            case .inspection: submitted
            case .issue: issueFlagged[item.id]
            }
        if let cause { return "jqc-\(item.kind.rawValue)-\(cause.lowercased)" }
        let digest = SHA256Hasher().digest(Array("\(item.kind.rawValue):\(item.id.lowercased)".utf8))
        return "jqc-\(item.kind.rawValue)-h\(digest.hex.prefix(32))"
    }
}
