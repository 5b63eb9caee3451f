import FoundationEssentials
import InspectionDomain
import LedgerCore
import LedgerStore

/// The bytes a reception of this ledger carries by reference, attached from
/// the `carried` table when the reception is read: the store's half of
/// `InspectionReceived.carried` (a handover file's reader attaches its own).
/// A reference the table cannot resolve is an error naming the reception's
/// position and the leaf, never a record silently left out.
public enum CarriedClosure {
    /// `event` (read from `record`, one of this ledger's) with the closure
    /// of what it carries attached, when it is a version-2 reception; any
    /// other event unchanged. Read through `reader`'s snapshot; with a
    /// `memo`, the closure is the stream's, computed once for all its
    /// receptions (`StreamClosures`).
    public static func attach(
        _ event: InspectionEvent, of record: EventRecord, reader: LedgerReader?, memo: StreamClosures? = nil
    ) throws -> InspectionEvent {
        guard record.schemaVersion >= 2, case .received(var received) = event else { return event }
        if let memo, let reader, let stream = try memo.closure(ofStream: record.stream, reader: reader) {
            received.carried = stream
        } else {
            received.carried = try closure(of: received.records.map(\.leaf), at: record.position, reader: reader)
        }
        return .received(received)
    }

    /// Every leaf `leaves` reach, with its bytes from the `carried` table.
    public static func closure(
        of leaves: [Digest256], at position: UInt64, reader: LedgerReader?
    ) throws -> CarriedRecords {
        do {
            return try CarriedRecords.closure(of: leaves) { leaf in try reader?.carriedRecord(leaf) }
        } catch let error as CarriedRecordsError {
            throw InspectionStoreError.unresolvedCarried(position: position, error)
        }
    }

    /// The record's event, as the current version of its type (upcast with
    /// the template `template` gives when it must be), a reception with its
    /// closure attached.
    public static func event(
        of record: EventRecord, reader: LedgerReader?, memo: StreamClosures? = nil,
        template: () -> Template? = { nil }
    ) throws -> InspectionEvent {
        try InspectionFold.event(of: record, log: reader, memo: memo, template: template)
    }

    /// The closure of every version-2 reception of `stream` together: each
    /// leaf they reach at any depth, once, with its bytes. What a handover
    /// file's `carried_records` holds.
    public static func closure(ofStream stream: UUID, reader: LedgerReader) throws -> CarriedRecords {
        if let whole = try StreamClosures().closure(ofStream: stream, reader: reader) { return whole }
        // Something does not resolve: each reception's own closure, in order,
        // fails naming the first that cannot be read.
        var closure = CarriedRecords()
        for record in try reader.records(inStream: stream) where StreamClosures.carriesByReference(record) {
            closure = closure.merging(
                try Self.closure(
                    of: try CarriedRecords.references(in: record.encoded()), at: record.position, reader: reader))
        }
        return closure
    }
}

/// One closure per stream, for reading many of its receptions: nested
/// receptions reach the whole history before them, so a closure per
/// reception made reading a long-shared stream quadratic. The stream's
/// closure is the union of its receptions' (content-addressed, each leaf
/// once), walked once, iteratively, with a visited set by leaf and
/// `ReceptionWalk.maximumRecords` kept; every reception of the stream is
/// given it (a superset of its own: a reception reads only the leaves it
/// references). When the walk meets a record the `carried` table lacks,
/// the memo answers nil for that stream and each reception's own closure
/// is made instead, so the error names the reception that cannot be read,
/// as before, and those that can still read.
public final class StreamClosures {
    /// By stream: its closure, or nil when it does not resolve.
    private var streams: [UUID: CarriedRecords?] = [:]

    public init() {}

    /// A record that carries records by reference: a version-2 or later
    /// `inspection.received`.
    static func carriesByReference(_ record: EventRecord) -> Bool {
        record.type == InspectionEventType.received.rawValue && record.schemaVersion >= 2
    }

    /// The closure of every reception of `stream` in `reader`'s snapshot, or
    /// nil when some leaf does not resolve (missing, damaged, unreadable, or
    /// past the size limit).
    public func closure(ofStream stream: UUID, reader: LedgerReader) throws -> CarriedRecords? {
        if let known = streams[stream] { return known }
        var leaves: [Digest256] = []
        for record in try reader.records(inStream: stream) where Self.carriesByReference(record) {
            do {
                leaves += try CarriedRecords.references(in: record.encoded())
            } catch {
                streams[stream] = .some(nil)
                return nil
            }
        }
        let closure: CarriedRecords?
        do {
            closure = try CarriedRecords.closure(of: leaves) { leaf in try reader.carriedRecord(leaf) }
        } catch is CarriedRecordsError {
            closure = nil
        }
        streams[stream] = .some(closure)
        return closure
    }
}

extension CarriedClosure {
    /// As much of the closure of the version-2 receptions among `records` as
    /// the `carried` table holds, for an audit: what it lacks is left out
    /// here on purpose, so that the audit's timeline names each missing leaf
    /// as a problem of its reception's entry instead of the audit failing.
    public static func available(for records: [EventRecord], reader: LedgerReader) throws -> CarriedRecords {
        var found = CarriedRecords()
        var pending: [Digest256] = []
        for record in records where record.type == InspectionEventType.received.rawValue && record.schemaVersion >= 2 {
            // Undecodable: the timeline's fold names it.
            guard case .received(let received)? = try? InspectionEvent.decode(record) else { continue }
            pending += received.records.map(\.leaf)
        }
        var seen: Set<Digest256> = []
        while let leaf = pending.popLast() {
            guard seen.insert(leaf).inserted, let bytes = try reader.carriedRecord(leaf) else { continue }
            guard CarriedRecords.leaf(of: bytes) == leaf else { continue }  // damaged: named by the timeline
            found.insert(bytes)
            do {
                pending += try CarriedRecords.references(in: bytes)
            } catch {
                continue  // unreadable: the timeline's fold names it
            }
        }
        return found
    }
}
