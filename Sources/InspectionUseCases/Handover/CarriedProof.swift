import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore

/// Whether each carried part of an inspection's history, at any depth of
/// nested receptions, is proven here to be its device's.
///
/// A reception carries its sender's records with their inclusion proofs, the
/// sender's signed checkpoint and key; a reception among those records (the
/// sender's own reception of a third device's file) carries the third
/// device's the same way, and so on. A part is proven when the reception
/// that carries it verifies (`ReceivedProof.verify`: the checks of
/// `jqc receive` against that checkpoint), its key is one this ledger pinned
/// for the part's device (`DevicePins`: a relaying device can sign any key
/// under any device's name, so only a pin made here tells), and that
/// reception is itself proven (this log's tree proves its own receptions).
/// This device's own records coming back inside a reception are proven by
/// this log holding them. Everything else is unproven, grouped by device,
/// carrying device, reception and reason (`UnprovenPart`).
public enum CarriedProof {
    /// A reception met on the walk, with what it came through.
    struct Carrier {
        var received: InspectionReceived
        /// The device that recorded the reception.
        var recordedBy: UUID
        /// The reception's version in its recorder's stream.
        var recordedVersion: UInt64
        /// The position, in this log, of the reception it came through.
        var top: UInt64
        /// Why the reception carrying this one is unproven, if it is.
        var inheritedReason: String?
    }

    /// The unproven parts of `timeline` (only entries it shows: a record
    /// carried again, or this device's own, is entered once).
    public static func unproven(in timeline: AuditTimeline, pins: DevicePins, own: UUID) -> [UnprovenPart] {
        let ownRecords = Set(timeline.entries.filter { $0.carriedIn == nil }.compactMap { $0.record?.id })
        var stack: [Carrier] = timeline.entries.reversed().compactMap { entry in
            guard entry.carriedIn == nil, case .received(let received)? = entry.event, let record = entry.record
            else { return nil }
            return Carrier(
                received: received, recordedBy: record.device, recordedVersion: record.streamVersion,
                top: entry.position, inheritedReason: nil)
        }
        let held = ReceivedProof.Held(timeline)
        var proven: Set<UUID> = []
        var why: [UUID: (carrier: Carrier, reason: String)] = [:]
        var visited: Set<UUID> = []
        // Iterative, each reception once: a file drives the depth, not the stack.
        while let carrier = stack.popLast() {
            let reason =
                carrier.inheritedReason
                ?? self.reason(carrier, timeline: timeline, pins: pins, own: own, held: held)
            // A reference that does not resolve makes `reason` say so.
            let records = (try? carrier.received.resolvedRecords()) ?? []
            for record in records {
                if record.device == own {
                    // This device's record: proven by this log holding it.
                    if ownRecords.contains(record.id) {
                        proven.insert(record.id)
                    } else if why[record.id] == nil {
                        why[record.id] = (carrier, "this log holds no record of its own with that id")
                    }
                } else if let reason {
                    if why[record.id] == nil { why[record.id] = (carrier, reason) }
                } else {
                    proven.insert(record.id)
                }
                // A nested reception that does not decode carries nothing to prove; its own record is counted above.
                guard record.type == InspectionEventType.received.rawValue, visited.insert(record.id).inserted,
                    case .received(var nested)? = try? InspectionEvent.decode(record)
                else { continue }
                nested.carried = nested.carried.merging(timeline.carried)
                let inherited =
                    reason.map { _ in
                        "the reception of device \(record.device.lowercased) that carries them is itself unproven"
                    }
                stack.append(
                    Carrier(
                        received: nested, recordedBy: record.device, recordedVersion: record.streamVersion,
                        top: carrier.top, inheritedReason: inherited))
            }
        }
        return group(timeline, unproven: why.filter { !proven.contains($0.key) })
    }

    /// Why the part `carrier` carries is unproven, or nil when it is proven.
    ///
    /// `held`: what the timeline holds, for a version-3 reception's
    /// continuation (the union of every reception at every depth: its
    /// closure and this log's own records).
    static func reason(
        _ carrier: Carrier, timeline: AuditTimeline, pins: DevicePins, own: UUID, held: ReceivedProof.Held
    ) -> String? {
        let received = carrier.received
        let device = received.fromDevice.lowercased
        do throws(Reception.Refusal) {
            _ = try ReceivedProof.verify(
                received, inspection: timeline.inspectionID, held: held,
                recordedAs: .init(device: carrier.recordedBy, version: carrier.recordedVersion))
        } catch {
            return "they do not verify against the checkpoint of device \(device) that the reception carries "
                + "(\(error.reason))"
        }
        // This device's own records are judged by its log, record by record.
        guard received.fromDevice != own else { return nil }
        let id = DeviceKeyFile.keyID(received.publicKey)
        let keys = pins.devices[received.fromDevice]?.keys ?? []
        if keys.contains(where: { $0.key == received.publicKey }) { return nil }
        guard keys.isEmpty else {
            return "the key \(id) they are proven with is not a key this ledger pinned for device \(device) "
                + "(pinned: \(keys.map(\.keyID).joined(separator: ", ")))"
        }
        return "the key \(id) they are proven with is only device \(carrier.recordedBy.lowercased)'s word: this "
            + "ledger pinned no key of device \(device) (it received no file of that device; receive one, or pin "
            + "its key with 'jqc receive FILE --key VKEY' on a file of that device)"
    }

    /// The timeline's unproven entries grouped by device, carrier, reception
    /// and reason, in the order the timeline shows them.
    static func group(_ timeline: AuditTimeline, unproven: [UUID: (carrier: Carrier, reason: String)])
        -> [UnprovenPart]
    {
        var parts: [UnprovenPart] = []
        for entry in timeline.entries where entry.carriedIn != nil {
            guard let record = entry.record, let (carrier, reason) = unproven[record.id] else { continue }
            if let index = parts.firstIndex(where: {
                $0.device == record.device && $0.carrier == carrier.recordedBy
                    && $0.receptionPosition == carrier.top && $0.reason == reason
            }) {
                parts[index].records.append(record.id)
            } else {
                parts.append(
                    UnprovenPart(
                        device: record.device, carrier: carrier.recordedBy, receptionPosition: carrier.top,
                        records: [record.id], reason: reason))
            }
        }
        return parts
    }
}
