import Foundation
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
    /// other event unchanged. Read through `reader`'s snapshot.
    public static func attach(
        _ event: InspectionEvent, of record: EventRecord, reader: LedgerReader?
    ) throws -> InspectionEvent {
        guard record.schemaVersion >= 2, case .received(var received) = event else { return event }
        received.carried = try closure(of: received.records.map(\.leaf), at: record.position, reader: reader)
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
        of record: EventRecord, reader: LedgerReader?, template: () -> Template? = { nil }
    ) throws -> InspectionEvent {
        try InspectionFold.event(of: record, log: reader, template: template)
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
