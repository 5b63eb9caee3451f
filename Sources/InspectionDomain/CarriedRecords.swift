import FoundationEssentials
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
            guard closure.bytes.count < ReceptionWalk.maximumRecords else {
                throw CarriedRecordsError.tooLarge(limit: ReceptionWalk.maximumRecords)
            }
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
        // Only words for a message about the record: one that does not read has no position to give.
        (try? EventRecord(decoding: record)).map { String($0.position) } ?? "?"
    }
}

/// Why a carried record could not be read: its bytes are missing, or they
/// are not what their leaf says, or the receptions nest deeper or reach more
/// records than a walk takes (`ReceptionWalk`). Never skipped: a reception
/// that does not resolve cannot be folded, audited or handed on.
public enum CarriedRecordsError: Error, Hashable, Sendable, CustomStringConvertible {
    case missing(leaf: Digest256, referencedBy: String)
    case damaged(leaf: Digest256)
    case unreadable(leaf: Digest256, reason: String)
    /// Receptions nested deeper than `limit` (one inside another's records).
    case tooDeep(limit: Int)
    /// More than `limit` distinct carried records reached.
    case tooLarge(limit: Int)

    /// The leaf the error names (none for a limit).
    public var leaf: Digest256? {
        switch self {
        case .missing(let leaf, _), .damaged(let leaf), .unreadable(let leaf, _): leaf
        case .tooDeep, .tooLarge: nil
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
        case .tooDeep(let limit):
            "its receptions nest more than \(limit) deep (a reception inside the records of another, "
                + "\(limit) times over), past the limit of what a ledger takes; ask the sender to start a fresh copy "
                + "of the inspection, or hand over its submitted record"
        case .tooLarge(let limit):
            "its receptions reach more than \(limit) carried records, past the limit of what a ledger takes"
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

/// The bounds of every walk over nested receptions (`Schemas/ledger-format.md`
/// § Handover files): how deep receptions may nest, and how many distinct
/// carried records one walk may reach. A file past either is refused at
/// `receive`, so no ledger holds what a walk could not take; each walk is
/// iterative (an explicit stack or queue, never the thread's stack) and
/// opens each reception once (a visited set by leaf hash).
public enum ReceptionWalk {
    /// A reception inside the records of another counts one level; the
    /// reception a file records is level 1. Two devices exchanging a copy
    /// back and forth add about one level an exchange.
    public static let maximumDepth = 256
    /// Distinct carried records reached from one reception, at every depth.
    public static let maximumRecords = 1_000_000
}

extension InspectionReceived {
    /// One carried record met by `walk`: its record, its leaf, and how deep
    /// the reception that carries it nests (1: this one's own records).
    public struct WalkedRecord {
        public var record: EventRecord
        public var leaf: Digest256
        public var depth: Int
    }

    /// Visits every carried record, breadth first (this reception's own
    /// records in order, then those of each reception among them, level by
    /// level), each leaf once; `visit` answers whether to open a reception
    /// (false: its records are not walked) or whether to stop (nil).
    /// Throws when a record is missing or unreadable, when receptions nest
    /// deeper than `ReceptionWalk.maximumDepth`, or reach more than
    /// `ReceptionWalk.maximumRecords` records.
    public func walk(_ visit: (WalkedRecord) throws -> Bool?) throws {
        var level: [(received: InspectionReceived, depth: Int)] = [(self, 1)]
        var visited: Set<Digest256> = []
        while !level.isEmpty {
            var next: [(received: InspectionReceived, depth: Int)] = []
            for (received, depth) in level {
                guard depth <= ReceptionWalk.maximumDepth else {
                    throw CarriedRecordsError.tooDeep(limit: ReceptionWalk.maximumDepth)
                }
                for reference in received.records where visited.insert(reference.leaf).inserted {
                    guard visited.count <= ReceptionWalk.maximumRecords else {
                        throw CarriedRecordsError.tooLarge(limit: ReceptionWalk.maximumRecords)
                    }
                    guard let bytes = received.carried.record(reference.leaf) else {
                        throw CarriedRecordsError.missing(
                            leaf: reference.leaf,
                            referencedBy: "the reception from \(received.fromDevice.lowercased) (nested \(depth) deep)")
                    }
                    let record: EventRecord
                    do {
                        record = try EventRecord(decoding: bytes)
                    } catch {
                        throw CarriedRecordsError.unreadable(leaf: reference.leaf, reason: "\(error)")
                    }
                    guard let open = try visit(WalkedRecord(record: record, leaf: reference.leaf, depth: depth)) else {
                        return
                    }
                    guard open, record.type == InspectionEventType.received.rawValue else { continue }
                    if case .received(let nested) = try received.event(of: record, template: nil) {
                        next.append((nested, depth + 1))
                    }
                }
            }
            level = next
        }
    }

    /// Checks that the receptions nest no deeper and reach no more records
    /// than `ReceptionWalk` allows, and that every record resolves: what
    /// `receive` asks of a file before anything is recorded.
    public func checkNesting() throws { try walk { _ in true } }

    /// The ids of every event the reception carries, at any depth.
    public func carriedEventIDs() throws -> Set<UUID> { try newEventIDs(besides: []) }

    /// The ids of the events the reception carries, at any depth, that are
    /// not in `known`: a reception already known is not opened (what it
    /// carries was folded with it).
    public func newEventIDs(besides known: Set<UUID>) throws -> Set<UUID> {
        var ids: Set<UUID> = []
        try walk { walked in
            guard !known.contains(walked.record.id) else { return false }
            ids.insert(walked.record.id)
            return true
        }
        return ids
    }

    /// The first `inspection.started` record among the carried records, or
    /// among what their receptions carry (the shallowest, in order).
    public func startedRecord() throws -> EventRecord? {
        var started: EventRecord?
        try walk { walked in
            guard walked.record.type == InspectionEventType.started.rawValue else { return true }
            started = walked.record
            return nil
        }
        return started
    }

    /// The template hash of the `inspection.started` among the carried
    /// records, or among what their receptions carry.
    public func startedTemplateHash() throws -> String? {
        guard let record = try startedRecord(),
            case .started(let started) = try event(of: record, template: nil)
        else { return nil }
        return started.templateHash
    }
}
