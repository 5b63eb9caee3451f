import FoundationEssentials
import LedgerCore

/// Carried entries of an inspection's history that nothing here proves to
/// be their device's: records of device `device` met inside a reception
/// recorded by `carrier` (another device's, nested, or this device's own),
/// whose checkpoint does not verify, whose key is not one this ledger pinned
/// for `device`, or whose own carrying reception is itself unproven. The
/// audit lists each group and its verdict is then `PARTLY PROVEN`, never
/// `INTACT`: a relaying device can write any record under another device's
/// name, and only that device's signed checkpoint under a key this ledger
/// pinned tells a record it wrote from one invented for it.
public struct UnprovenPart: Hashable, Sendable {
    /// The device the records are credited to.
    public var device: UUID
    /// The device that recorded the reception carrying them.
    public var carrier: UUID
    /// The position, in this log, of the reception through which they came.
    public var receptionPosition: UInt64
    /// The ids of the timeline's entries concerned, in timeline order.
    public var records: [UUID]
    /// Why they are not proven, worded for a person.
    public var reason: String

    public init(device: UUID, carrier: UUID, receptionPosition: UInt64, records: [UUID], reason: String) {
        self.device = device
        self.carrier = carrier
        self.receptionPosition = receptionPosition
        self.records = records
        self.reason = reason
    }

    /// `unproven: 3 entries of device X met only inside device Y's
    /// reception (through the reception at position 2 of this log): why`.
    public func line(own: UUID?) -> String {
        let count = "\(records.count) entr\(records.count == 1 ? "y" : "ies")"
        let inside =
            carrier == own
            ? "carried by this device's reception at position \(receptionPosition)"
            : "met only inside device \(carrier.lowercased)'s reception (through the reception at position "
                + "\(receptionPosition) of this log)"
        return "unproven: \(count) of device \(device.lowercased) \(inside): \(reason)"
    }
}
