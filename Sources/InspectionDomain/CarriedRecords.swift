import Foundation
import LedgerCore

/// One record of another device's log, carried by reference (`inspection.received`
/// version 2): its position in that device's log, its leaf hash
/// `SHA-256(0x00 ‖ record bytes)` and its inclusion proof in the tree of the
/// carried checkpoint. The bytes live beside the payload (`CarriedRecords`:
/// the ledger's `carried` table, a handover file's `carried_records`), so a
/// reception's own bytes never hold another reception's, and nothing nests.
public struct CarriedReference: Hashable, Sendable {
    public var position: UInt64
    public var leaf: Digest256
    public var inclusion: [Digest256]

    public init(position: UInt64, leaf: Digest256, inclusion: [Digest256]) {
        self.position = position
        self.leaf = leaf
        self.inclusion = inclusion
    }
}

/// The bytes of carried records by leaf hash: the closure a reception needs
/// to read what it carries, at every depth. Not part of any payload: the
/// store attaches it from its `carried` table, the handover file reader from
/// the file's `carried_records`.
public struct CarriedRecords: Hashable, Sendable {
    public private(set) var bytes: [Digest256: [UInt8]]

    public init() { bytes = [:] }

    /// The records given, each under its leaf hash.
    public init(_ records: [[UInt8]]) {
        bytes = [:]
        for record in records { insert(record) }
    }

    /// The leaf hash of a record's bytes, as the sender's tree holds it.
    public static func leaf(of record: [UInt8]) -> Digest256 { HashChain().leaf(ofRecord: record) }

    public var count: Int { bytes.count }
    public var isEmpty: Bool { bytes.isEmpty }
    public var leaves: Set<Digest256> { Set(bytes.keys) }

    /// The bytes of `leaf`, or nil when they are not here.
    public func record(_ leaf: Digest256) -> [UInt8]? { bytes[leaf] }

    /// Keeps `record` under its leaf hash (once).
    @discardableResult
    public mutating func insert(_ record: [UInt8]) -> Digest256 {
        let leaf = Self.leaf(of: record)
        if bytes[leaf] == nil { bytes[leaf] = record }
        return leaf
    }

    /// These and `other`'s (content-addressed: the same leaf is the same bytes).
    public func merging(_ other: CarriedRecords) -> CarriedRecords {
        guard !other.bytes.isEmpty else { return self }
        guard !bytes.isEmpty else { return other }
        var merged = self
        merged.bytes.merge(other.bytes) { mine, _ in mine }
        return merged
    }

    /// Every leaf `leaves` reach: themselves, and through each version-2
    /// reception among them, the leaves it references, recursively (a
    /// version-1 reception holds its records' bytes itself). `lookup` gives
    /// a leaf's bytes, or nil when they are missing: then the walk fails,
    /// naming the leaf and who referenced it.
    public static func closure(
        of leaves: [Digest256], lookup: (Digest256) throws -> [UInt8]?
    ) throws -> CarriedRecords {
        var closure = CarriedRecords()
        var pending = leaves.map { (leaf: $0, from: "the reception") }
        while let (leaf, from) = pending.popLast() {
            guard closure.bytes[leaf] == nil else { continue }
            guard let record = try lookup(leaf) else {
                throw CarriedRecordsError.missing(leaf: leaf, referencedBy: from)
            }
            guard Self.leaf(of: record) == leaf else { throw CarriedRecordsError.damaged(leaf: leaf) }
            closure.bytes[leaf] = record
            for nested in try references(in: record) {
                pending.append(
                    (nested, "the reception recorded at position \(positionText(record)) of its device's log"))
            }
        }
        return closure
    }

    /// The leaves a record references: those of a version-2 reception's
    /// records, none for any other record.
    public static func references(in record: [UInt8]) throws(CarriedRecordsError) -> [Digest256] {
        let decoded: EventRecord
        do {
            decoded = try EventRecord(decoding: record)
        } catch {
            throw .unreadable(leaf: leaf(of: record), reason: "\(error)")
        }
        guard decoded.type == InspectionEventType.received.rawValue, decoded.schemaVersion >= 2 else { return [] }
        do {
            guard case .received(let nested) = try InspectionEvent.decode(decoded) else { return [] }
            return nested.records.map(\.leaf)
        } catch {
            throw .unreadable(leaf: leaf(of: record), reason: "\(error)")
        }
    }

    static func positionText(_ record: [UInt8]) -> String {
        (try? EventRecord(decoding: record)).map { String($0.position) } ?? "?"
    }
}

/// Why a carried record could not be read: its bytes are missing, or they
/// are not what their leaf says. Never skipped: a reception that does not
/// resolve cannot be folded, audited or handed on.
public enum CarriedRecordsError: Error, Hashable, Sendable, CustomStringConvertible {
    case missing(leaf: Digest256, referencedBy: String)
    case damaged(leaf: Digest256)
    case unreadable(leaf: Digest256, reason: String)

    public var leaf: Digest256 {
        switch self {
        case .missing(let leaf, _), .damaged(let leaf), .unreadable(let leaf, _): leaf
        }
    }

    public var description: String {
        switch self {
        case .missing(let leaf, let from):
            "the carried record with leaf \(leaf.hex), which \(from) references, is missing"
        case .damaged(let leaf):
            "the carried record stored under leaf \(leaf.hex) does not hash to it (damaged)"
        case .unreadable(let leaf, let reason):
            "the carried record with leaf \(leaf.hex) cannot be read: \(reason)"
        }
    }
}

extension InspectionReceived {
    /// The carried records in order, their bytes resolved from `carried`:
    /// the one place a carried record is read. A leaf whose bytes are not
    /// there is an error naming it, never skipped.
    public func resolvedRecords() throws(CarriedRecordsError) -> [EventRecord] {
        var resolved: [EventRecord] = []
        resolved.reserveCapacity(records.count)
        for reference in records {
            guard let bytes = carried.record(reference.leaf) else {
                throw .missing(leaf: reference.leaf, referencedBy: "the reception from \(fromDevice.lowercased)")
            }
            do {
                resolved.append(try EventRecord(decoding: bytes))
            } catch {
                throw .unreadable(leaf: reference.leaf, reason: "\(error)")
            }
        }
        return resolved
    }

    /// The bytes of every carried record, in order (for a proof).
    public func resolvedBytes() throws(CarriedRecordsError) -> [[UInt8]] {
        var resolved: [[UInt8]] = []
        for reference in records {
            guard let bytes = carried.record(reference.leaf) else {
                throw .missing(leaf: reference.leaf, referencedBy: "the reception from \(fromDevice.lowercased)")
            }
            resolved.append(bytes)
        }
        return resolved
    }

    /// A carried record's event, read as the current version of its type; a
    /// carried reception is given this one's closure, so what it carries
    /// resolves too (the one place a nested reception is opened).
    public func event(of record: EventRecord, template: Template?) throws(DomainError) -> InspectionEvent {
        let event = try EventUpcaster.decode(record, template: template)
        guard case .received(var nested) = event else { return event }
        nested.carried = nested.carried.merging(carried)
        return .received(nested)
    }
}
