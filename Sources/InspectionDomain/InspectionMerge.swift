import FoundationEssentials
import LedgerCore

// MARK: - Clocks derived from the records

/// A hybrid logical clock reading `(l, c)`: `l` in microseconds, never less
/// than the event's own recorded time nor than any causal predecessor's `l`;
/// `c` orders events with the same `l`. Derived from signed records alone
/// (recorded time, stream order, what each reception carries), so a crafted
/// value cannot be claimed: a device can only lie about its own times.
public struct HybridTime: Hashable, Sendable, Comparable {
    public var wall: Int64
    public var counter: UInt32

    public init(wall: Int64, counter: UInt32) {
        self.wall = wall
        self.counter = counter
    }

    public static func < (a: HybridTime, b: HybridTime) -> Bool {
        a.wall != b.wall ? a.wall < b.wall : a.counter < b.counter
    }

    /// The reading of an event recorded at `recordedAt` whose causal
    /// predecessors read `predecessors`.
    static func after(_ predecessors: [HybridTime], recordedAt: Int64) -> HybridTime {
        let wall = predecessors.reduce(recordedAt) { max($0, $1.wall) }
        let same = predecessors.filter { $0.wall == wall }
        guard let top = same.map(\.counter).max() else { return HybridTime(wall: wall, counter: 0) }
        return HybridTime(wall: wall, counter: top &+ 1)
    }

    /// The reading after one predecessor (the common, single-device case).
    static func after(_ predecessor: HybridTime?, recordedAt: Int64) -> HybridTime {
        guard let predecessor, predecessor.wall >= recordedAt else { return HybridTime(wall: recordedAt, counter: 0) }
        return HybridTime(wall: predecessor.wall, counter: predecessor.counter &+ 1)
    }
}

/// Per device, the highest stream version of the inspection known when an
/// event was recorded.
public struct VectorClock: Hashable, Sendable {
    public var versions: [UUID: UInt64] = [:]

    public init(_ versions: [UUID: UInt64] = [:]) { self.versions = versions }

    /// Whether version `version` of `device` is known.
    public func knows(_ device: UUID, _ version: UInt64) -> Bool { (versions[device] ?? 0) >= version }

    public mutating func merge(_ other: VectorClock) {
        versions.merge(other.versions) { max($0, $1) }
    }
}

/// Where an event stands: its device and stream version there, its hybrid
/// time and its vector clock.
public struct EventStamp: Hashable, Sendable {
    public var device: UUID
    public var version: UInt64
    public var time: HybridTime
    /// Empty while a stream has no reception (filled in when one arrives:
    /// before that, the clock is `[device: version]`).
    public var clock: VectorClock

    /// Whether this event happened before `other` (`other` knew of it).
    public func happened(before other: EventStamp) -> Bool {
        !(device == other.device && version == other.version) && other.clock.knows(device, version)
    }

    /// The total order of the merge: hybrid time, then device id bytes.
    public static func precedes(_ a: EventStamp, _ b: EventStamp) -> Bool {
        if a.time != b.time { return a.time < b.time }
        return a.device.bytesPrecede(b.device)
    }
}

extension UUID {
    /// Whether this id's 16 bytes (RFC 4122 order) come before `other`'s:
    /// the order of the merge's ties and of the views' keys, compared as two
    /// big-endian halves, with no array made per comparison.
    public func bytesPrecede(_ other: UUID) -> Bool {
        let a = halves
        let b = other.halves
        return a.high != b.high ? a.high < b.high : a.low < b.low
    }

    private var halves: (high: UInt64, low: UInt64) {
        withUnsafeBytes(of: uuid) { raw in
            (
                UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }
}

/// Where this device's stream stands in the merge's clocks: bookkeeping of
/// the fold that says nothing about the record (like the count of events
/// that changed nothing), so two states that show the same record are equal
/// whatever it holds.
struct StreamClock: Hashable, Sendable {
    var last: EventStamp? {
        didSet {
            // This device's own stamps by version, for a version-3 reception
            // (carried back from another device) that continues one of them.
            guard let last, last.version >= 1 else { return }
            let index = Int(last.version - 1)
            if index == own.count { own.append(last) } else if index < own.count { own[index] = last }
        }
    }
    var own: [EventStamp] = []
    /// The stamp of every carried record folded, by device and version:
    /// where a version-3 reception's records continue (`continues`).
    var carried: [EventKey: EventStamp] = [:]

    /// The stamp of version `version` of `device`'s stream, as folded.
    func stamp(_ device: UUID, _ version: UInt64) -> EventStamp? {
        if let stamp = carried[EventKey(device: device, version: version)] { return stamp }
        guard version >= 1, Int(version) <= own.count, own[Int(version - 1)].device == device else { return nil }
        var stamp = own[Int(version - 1)]
        // Before the stream's first reception an own stamp has no clock yet.
        if stamp.clock.versions.isEmpty { stamp.clock = VectorClock([device: version]) }
        return stamp
    }

    static func == (a: StreamClock, b: StreamClock) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// What the merge's fold changed since its views were last derived
/// (`deriveMerged`): bookkeeping of the fold, like `StreamClock`, so two
/// states that show the same record are equal whatever it holds.
struct DeriveScope: Hashable, Sendable {
    /// The fields a write was folded for.
    var fields: Set<FieldID> = []
    /// A photo or an issue was added (the merge's order of them may change).
    var items = false
    /// Everything: the in-order fold has just become a merge.
    var all = false

    static func == (a: DeriveScope, b: DeriveScope) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// One write of a field: the field, and the event (device, version) that
/// wrote it (a start pre-fills several fields in one event).
struct FieldWriteKey: Hashable, Sendable {
    var field: FieldID
    var device: UUID
    var version: UInt64
}

/// A device and one version of its stream: one event of the inspection.
struct EventKey: Hashable, Sendable {
    var device: UUID
    var version: UInt64
}

// MARK: - Writes and their merge

/// One answer or clear (a tombstone, `value` nil) of a field, with where it
/// stands.
public struct FieldWrite: Hashable, Sendable {
    public var fieldID: FieldID
    public var value: FieldValue?
    public var stamp: EventStamp
    public var actor: Actor
    public var recordedAt: Timestamp

    /// The merge order: hybrid time, device id bytes, then the value's bytes.
    public static func precedes(_ a: FieldWrite, _ b: FieldWrite) -> Bool {
        if a.stamp.time != b.stamp.time || a.stamp.device != b.stamp.device {
            return EventStamp.precedes(a.stamp, b.stamp)
        }
        return a.payloadBytes.lexicographicallyPrecedes(b.payloadBytes)
    }

    var payloadBytes: [UInt8] { value?.cbor.encoded() ?? [] }
}

/// How a field's value is chosen among its writes (given in the order they
/// were folded). The real rule is `latest`; another is injected only to show
/// that the merge's tests catch a wrong one. The fold asks it again with only
/// the standing write and a new one of this device (`deriveMerged`), so a
/// rule must pick from a pair as it would from the whole list; after a
/// reception, it is asked only for the fields the reception wrote
/// (`deriveAfterReception`).
public struct FieldMerge: Hashable, Sendable {
    public let name: String
    public let winner: @Sendable ([FieldWrite]) -> FieldWrite?

    public init(name: String, winner: @escaping @Sendable ([FieldWrite]) -> FieldWrite?) {
        self.name = name
        self.winner = winner
    }

    /// The greatest by `(hlc.l, hlc.c, device id bytes, payload bytes)`.
    public static let latest = FieldMerge(name: "latest") { writes in writes.max(by: FieldWrite.precedes) }

    public static func == (a: FieldMerge, b: FieldMerge) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// A field whose latest writes do not follow one another: each device
/// changed it since the last exchange. Shown until a write that follows all
/// of them settles it.
public struct FieldConflict: Hashable, Sendable {
    public var fieldID: FieldID
    /// The concurrent writes, the standing one first.
    public var writes: [FieldWrite]
    public var standing: FieldWrite { writes[0] }
}

/// A submit (or discard) of the inspection, with where it stands.
public struct Closing: Hashable, Sendable {
    public var stamp: EventStamp
    public var at: Timestamp
    public var by: Actor
    public var score: Double?
    public var followUpRequired: Bool
    public var reason: String?
    /// The record's id when it was carried from another device (nil for
    /// this device's own: its fold is given no record ids).
    public var eventID: UUID? = nil

    static func precedes(_ a: Closing, _ b: Closing) -> Bool { EventStamp.precedes(a.stamp, b.stamp) }
}

/// What a stream with receptions keeps to merge: every write of every field
/// (own and carried), the events folded, and the stamps of receptions seen.
struct MergeHistory: Hashable, Sendable {
    var writes: [FieldID: [FieldWrite]] = [:]
    /// Each write once, by field, device and version.
    var written: Set<FieldWriteKey> = []
    /// Per field, the write that stands among those that count (the last
    /// derive's `FieldMerge.winner`).
    var standing: [FieldID: FieldWrite] = [:]
    var keys: Set<EventKey> = []
    var receptionStamps: [EventKey: EventStamp] = [:]
}

/// One reception being opened by `InspectionState.foldCarried`: where its
/// records stand, the stamp of the last one folded, what they carried, and
/// the nested reception whose own records are being folded first.
struct CarriedFold {
    var received: InspectionReceived
    var next = 0
    var previous: EventStamp?
    var clock = VectorClock()
    var latest: HybridTime?
    var waiting: (record: EventRecord, event: InspectionEvent?)?

    /// A frame of `received`; a version-3 reception's records follow the
    /// held version they continue (`continued`, its stamp as folded).
    init(received: InspectionReceived, continued: EventStamp? = nil) {
        self.received = received
        if let continued { follow(continued) }
    }

    /// `stamp` is the last record folded: the next one follows it.
    mutating func follow(_ stamp: EventStamp) {
        previous = stamp
        clock.merge(stamp.clock)
        latest = max(latest ?? stamp.time, stamp.time)
    }
}
