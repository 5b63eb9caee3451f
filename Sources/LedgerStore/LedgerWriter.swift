import FoundationEssentials
import LMDB
import LedgerCore

/// What a committed write leaves for the next write through the same
/// `EventLog`: the head it ended at, the Merkle tree's right edge at that
/// head, and the version (and, when known, the leaf hash) of the last record
/// of each stream it read or appended.
///
/// It saves the next transaction reloading them from the store (the edge is
/// O(log n) lookups, a stream's tip a cursor seek, a lookup and a hash), and
/// is used only when the head the next writer reads and checks is this head:
/// the chain hash at a position commits to every record up to it, so the
/// edge and the tips are then those of the stored log. A head moved by
/// anything else (another process's append) makes the writer load them from
/// the store as before. Nothing of it is a check: the head's chain check and
/// the event-id lookup run in every transaction.
struct WriterMemo {
    var head: LedgerDigest
    var frontier: MerkleFrontier?
    var streamVersions: [UUID: UInt64]
    var streamLeaves: [UUID: Digest256]

    /// The most streams carried from one transaction to the next; beyond it
    /// only the last transaction's are kept (a rebuild or import touching
    /// thousands of streams must not grow a cache for the life of the process).
    static let maxStreams = 4096
}

/// Appends to the log inside one write transaction (lent by `EventLog.write`).
///
/// It reads the head once, then extends the chain in memory as it appends, so
/// a batch of a thousand events costs one head lookup.
public final class LedgerWriter {
    public let reader: LedgerReader
    public var transaction: Transaction { reader.transaction }
    let tables: EventLog.Tables
    private let chain = HashChain()
    private var headPosition: UInt64
    private var headHash: Digest256
    private var streamVersions: [UUID: UInt64] = [:]
    /// The Merkle tree's right edge, loaded at the first append (a writer
    /// that only reads never pays for it) unless the memo of the previous
    /// write gives it.
    private var frontier: MerkleFrontier?
    /// The leaf hash of each stream's last record, as appended or looked up.
    private var streamLeaves: [UUID: Digest256] = [:]
    /// The streams this writer read or appended to, for the memo it leaves.
    private var touched: Set<UUID> = []
    /// Each stream's newest head appended by this writer and not yet set in
    /// the map of stream heads (`settleHeads`, before the commit). The map
    /// is a function of each stream's last head alone, whatever order the
    /// heads were set in, so a batch sets each stream once: set per record,
    /// a batch of a thousand records of a few streams read, hashed and
    /// wrote O(log n) nodes a thousand times (85 % of its append time).
    private var unsettledHeads: [UUID: StreamHead] = [:]

    init(transaction: Transaction, tables: EventLog.Tables, memo: WriterMemo? = nil) throws {
        self.tables = tables
        self.reader = LedgerReader(transaction: transaction, tables: tables)
        // Nothing is recorded on top of a changed head.
        let head = try reader.checkedHead()
        headPosition = head.position
        headHash = head.head
        if let memo, memo.head == LedgerDigest(position: headPosition, head: headHash) {
            frontier = memo.frontier?.size == headPosition ? memo.frontier : nil
            streamVersions = memo.streamVersions
            streamLeaves = memo.streamLeaves
        }
    }

    /// What this writer leaves for the next one once its transaction has
    /// committed (`WriterMemo`).
    func memo() -> WriterMemo {
        var versions = streamVersions
        var leaves = streamLeaves
        if touched.count > WriterMemo.maxStreams {
            versions = [:]
            leaves = [:]
        } else if versions.count > WriterMemo.maxStreams {
            versions = versions.filter { touched.contains($0.key) }
            leaves = leaves.filter { touched.contains($0.key) }
        }
        return WriterMemo(head: head, frontier: frontier, streamVersions: versions, streamLeaves: leaves)
    }

    /// Sets the heads appended since the last call in the map of stream
    /// heads, and its size: `EventLog.write` calls it before every commit,
    /// so a committed map always holds exactly the committed records. Set in
    /// the byte order of the streams' ids: the map is the same in any order,
    /// and so are the puts of one batch from run to run.
    func settleHeads() throws {
        guard let heads = tables.heads, !unsettledHeads.isEmpty else { return }
        let ordered = unsettledHeads.values.sorted { $0.stream.lexicographicallyPrecedes($1.stream) }
        for head in ordered { try HeadMapTable.set(head, transaction, heads, chain.hasher) }
        try HeadMapTable.setSize(headPosition, transaction, heads)
        unsettledHeads = [:]
    }

    /// The head including what this writer appended so far.
    public var head: LedgerDigest { LedgerDigest(position: headPosition, head: headHash) }

    /// Fails with `versionConflict` unless `stream` is at `version`.
    public func expect(stream: UUID, version: UInt64) throws {
        let actual = try currentVersion(of: stream)
        guard actual == version else {
            throw LedgerError.versionConflict(stream: stream, expected: version, actual: actual)
        }
    }

    public func currentVersion(of stream: UUID) throws -> UInt64 {
        touched.insert(stream)
        if let cached = streamVersions[stream] { return cached }
        let version = try reader.version(ofStream: stream)
        streamVersions[stream] = version
        return version
    }

    /// Appends one event, or answers where it already is if its id is stored.
    @discardableResult
    @_spi(RawAppend) public func append(_ event: PendingEvent) throws -> AppendOutcome {
        if let existing = try reader.position(ofEvent: event.id) {
            guard let stored = try reader.record(at: existing) else {
                throw LedgerError.corruptRecord(
                    position: existing, .malformed("event_ids names position \(existing), which is missing"))
            }
            var resent = event
            resent.recordedAt = stored.recordedAt
            guard stored.event == resent else {
                throw LedgerError.eventIDReused(id: event.id, position: existing)
            }
            return AppendOutcome(position: existing, streamVersion: stored.streamVersion, wasAlreadyStored: true)
        }
        guard !event.type.isEmpty else { throw LedgerError.invalidEvent("the event type is empty") }
        var payload = CBORReader(event.payload)
        do {
            try payload.skipItem()
        } catch {
            throw LedgerError.invalidEvent("the payload of \(event.type) is not a CBOR item: \(error)")
        }
        guard payload.isAtEnd else {
            throw LedgerError.invalidEvent("the payload of \(event.type) has bytes after its CBOR item")
        }
        let version = try currentVersion(of: event.stream) + 1
        let position = headPosition + 1
        let previous = version > 1 ? try previousLeaf(of: event.stream, version: version - 1) : nil
        let record = EventRecord(position: position, streamVersion: version, event: event, previousInStream: previous)
        // The stored value is hash ‖ record: encode after 32 bytes of room
        // and write the hash into them, one buffer instead of two.
        var value = record.encoded(afterPrefixOf: 32)
        let leaf = chain.leaf(ofRecordIn: value, range: 32..<value.count)
        let hash = chain.link(previous: headHash, leaf: leaf)
        value.replaceSubrange(0..<32, with: hash.bytes)
        assert(Self.decodesAsWritten(value, record), "the record at \(position) does not decode as it was written")
        let key = BigEndian.bytes(position)
        var streamKey = event.stream.bytes
        BigEndian.append(version, to: &streamKey)
        try transaction.put(tables.events, key, value, flags: .append)
        try transaction.put(tables.eventIDs, event.id.bytes, key, flags: .noOverwrite)
        try transaction.put(tables.streamIndex, streamKey, key, flags: .noOverwrite)
        try extendTree(leaf: leaf, size: headPosition)
        if tables.heads != nil {
            unsettledHeads[event.stream] = StreamHead(stream: event.stream.bytes, version: version, leaf: leaf)
        }
        headPosition = position
        headHash = hash
        streamVersions[event.stream] = version
        streamLeaves[event.stream] = leaf
        return AppendOutcome(position: position, streamVersion: version, wasAlreadyStored: false)
    }

    /// Debug builds only (TigerBeetle's style: assert what must hold where it
    /// is cheap): the stored value decodes to the record that was encoded,
    /// with its position, stream version and back-link.
    private static func decodesAsWritten(_ value: [UInt8], _ record: EventRecord) -> Bool {
        var names = TextCache()
        guard let decoded = try? LedgerReader.decode(value, position: record.position, names: &names) else {
            return false
        }
        return decoded.position == record.position && decoded.streamVersion == record.streamVersion
            && decoded.event == record.event && decoded.previousInStream == record.previousInStream
    }

    /// The leaf hash of the stream's record at `version` (the back-link of the
    /// next one). `streamLeaves` holds only a stream's last record's leaf, and
    /// `version` is always the stream's last version here.
    private func previousLeaf(of stream: UUID, version: UInt64) throws -> Digest256 {
        if let cached = streamLeaves[stream] { return cached }
        var key = stream.bytes
        BigEndian.append(version, to: &key)
        guard let value = try transaction.get(tables.streamIndex, key), let position = BigEndian.uint64(value) else {
            throw LedgerError.corruptRecord(
                position: headPosition + 1,
                .malformed("stream_index has no entry for version \(version) of \(stream.lowercased)"))
        }
        return try reader.leafHash(at: position, hasher: chain.hasher)
    }

    /// Adds the leaf to the Merkle tree: every subtree it completes is one
    /// stored node (amortised one per append, `MerkleStore.swift`).
    private func extendTree(leaf: Digest256, size: UInt64) throws {
        guard let tree = tables.tree else {
            throw LedgerError.invalidEvent("this store has no Merkle tree table; it was opened read-only")
        }
        let hasher = chain.hasher
        // Taken out and put back, so appending does not copy the edge's array.
        var edge = try frontier ?? reader.frontier(size: size, hasher: hasher)
        frontier = nil
        let transaction = transaction
        try edge.append(leaf: leaf, hasher: hasher) { level, index, hash in
            try transaction.put(tree, MerkleKey.key(level: level, index: index), hash.bytes, flags: .append)
        }
        frontier = edge
    }
}
