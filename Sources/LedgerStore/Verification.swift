import Foundation
import LMDB
import LedgerCore

/// The first thing found wrong with a log, stated so an auditor can act on it.
public enum TamperFinding: Hashable, Sendable, CustomStringConvertible {
    /// The record's bytes (or its stored hash) no longer match the chain.
    case changed(position: UInt64)
    /// One or more records are missing: `position` was expected, `next` found.
    case missing(position: UInt64, next: UInt64)
    /// The record stored at `position` says it is record `claims`: records were
    /// moved or swapped.
    case reordered(position: UInt64, claims: UInt64)
    /// The stored bytes at `position` are not a record.
    case unreadable(position: UInt64, reason: String)
    /// The log ends at `found` though it had reached `expected`.
    case truncated(expected: UInt64, found: UInt64)
    /// The log does not extend the digest it was checked against.
    case digestMismatch(position: UInt64, expected: Digest256, found: Digest256)
    /// An index disagrees with the log (the log itself may still be intact).
    case indexMismatch(IndexFinding)
    /// The record's back-link (key 13) is not the leaf hash of the previous
    /// record of its stream, or is missing: a record of the stream was changed,
    /// removed or inserted before it.
    case brokenStreamLink(position: UInt64, stream: UUID, version: UInt64)
    /// A stored node of the Merkle tree is not what the records make.
    case treeNode(TreeNodeFinding)
    /// The record's chain link holds, but its bytes are not of the layout the
    /// format page defines (a key missing or extra, a value of another type).
    case malformed(position: UInt64, reason: String)
    /// The record's chain link holds, but its bytes are not the one
    /// (deterministic) encoding of its values.
    case notDeterministic(position: UInt64, reason: String)
    /// The record's chain link holds, and its record format is newer than
    /// this program reads.
    case newerFormat(position: UInt64, format: UInt64)
    /// A format-1 record after a format-2 one (`first`): records are never
    /// written in an older format, so it was relabelled (losing its back-link).
    case formatSequence(position: UInt64, first: UInt64)
    /// The first `size` records do not have the root the checkpoint signs;
    /// `node`, when the stored tree disagrees with the records there too,
    /// names the first node that does.
    case checkpointMismatch(size: UInt64, node: TreeNodeFinding?)

    /// The position the finding concerns.
    public var position: UInt64 {
        switch self {
        case .changed(let p), .missing(let p, _), .reordered(let p, _), .unreadable(let p, _): p
        case .truncated(_, let found): found + 1
        case .digestMismatch(let p, _, _): p
        case .indexMismatch(let finding): finding.position
        case .brokenStreamLink(let p, _, _): p
        case .treeNode(let node): node.position
        case .malformed(let p, _), .notDeterministic(let p, _), .newerFormat(let p, _), .formatSequence(let p, _): p
        case .checkpointMismatch(let size, let node): node?.position ?? size
        }
    }

    /// The index or table key the finding concerns: `event_ids[<id>]`,
    /// `stream_index[<stream>/<version>]`, `merkle[<level>/<index>]`, `meta[format]`.
    public var key: String? {
        switch self {
        case .indexMismatch(let finding): finding.key
        case .treeNode(let node), .checkpointMismatch(_, let node?): node.key
        default: nil
        }
    }

    /// The finding's kind, as `jqc audit --json` and the format page name it.
    public var kind: String {
        switch self {
        case .changed: "changed"
        case .missing: "missing"
        case .reordered: "reordered"
        case .unreadable: "unreadable"
        case .truncated: "truncated"
        case .digestMismatch: "digest_mismatch"
        case .indexMismatch: "index_mismatch"
        case .brokenStreamLink: "broken_stream_link"
        case .treeNode(let node): node.kind
        case .malformed: "malformed"
        case .notDeterministic: "not_deterministic"
        case .newerFormat: "newer_format"
        case .formatSequence: "format_sequence"
        case .checkpointMismatch: "checkpoint_mismatch"
        }
    }

    public var description: String {
        switch self {
        case .changed(let p):
            "record \(p) was changed after it was written: its bytes no longer match the hash chain"
        case .missing(let p, let next):
            next == p + 1
                ? "record \(p) was removed: the log jumps from \(p - 1) to \(next)"
                : "records \(p) to \(next - 1) were removed: the log jumps from \(p - 1) to \(next)"
        case .reordered(let p, let claims):
            "record \(p) holds the record written as \(claims): records were moved or swapped"
        case .unreadable(let p, let reason):
            "record \(p) is not a readable record (\(reason))"
        case .truncated(let expected, let found):
            "the log was truncated: it had \(expected) records, now it ends at \(found)"
        case .digestMismatch(let p, let expected, let found):
            "the log no longer extends the digest: at record \(p) the chain is \(found.hex), the digest says \(expected.hex)"
        case .indexMismatch(let finding):
            "an index disagrees with the log: \(finding)"
        case .brokenStreamLink(let p, let stream, let version):
            "record \(p) (version \(version) of stream \(stream.lowercased)) does not link to the stream's previous record: a record of that stream was changed, removed or inserted"
        case .treeNode(let node):
            "\(node)"
        case .malformed(let p, let reason):
            "record \(p) is not laid out as a record (\(reason)): it was not written by jqc; its chain link holds, so it was written with the chain recomputed"
        case .notDeterministic(let p, let reason):
            "record \(p) is not in the deterministic encoding jqc writes (\(reason)): its chain link holds, so it was rewritten with the chain recomputed"
        case .newerFormat(let p, let format):
            "record \(p) has record format \(format), newer than this program reads (format \(EventRecord.formatVersion)); its chain link holds. Upgrade jqc."
        case .formatSequence(let p, let first):
            "record \(p) says record format 1, but record \(first) before it is format 2: records are never written in an older format, so it was relabelled (which drops its back-link)"
        case .checkpointMismatch(let size, let node):
            "the first \(size) records do not have the root the checkpoint signs, recomputed from the records themselves: a record at or before position \(size) was changed"
                + (node.map { " (\($0))" } ?? "")
        }
    }
}

/// A stored node of the Merkle tree that disagrees with the records: the node
/// of 2^level leaves starting at leaf index·2^level, covering records
/// index·2^level + 1 … (index+1)·2^level.
public enum TreeNodeFinding: Hashable, Sendable, CustomStringConvertible {
    /// The stored hash is not the hash of the records it covers.
    case mismatch(level: Int, index: UInt64)
    /// The records make the node, the table does not hold it.
    case missing(level: Int, index: UInt64)
    /// The table holds a node the records do not make (`key` is the stored key).
    case extra(key: [UInt8])

    /// The node's level and index, if its key names one.
    public var node: (level: Int, index: UInt64)? {
        switch self {
        case .mismatch(let level, let index), .missing(let level, let index): (level, index)
        case .extra(let key): Self.node(ofKey: key)
        }
    }

    /// The level and index a `merkle` key names: last leaf (u64 BE) ‖ level,
    /// level ≥ 1 and the last leaf + 1 a multiple of 2^level.
    static func node(ofKey key: [UInt8]) -> (level: Int, index: UInt64)? {
        guard key.count == 9, let last = BigEndian.uint64(key), key[8] >= 1, key[8] < 64, last < UInt64.max else {
            return nil
        }
        let level = Int(key[8])
        let width = UInt64(1) << UInt64(level)
        guard (last + 1) % width == 0 else { return nil }
        return (level, (last + 1) / width - 1)
    }

    /// The last record the node covers.
    public var position: UInt64 {
        guard let (level, index) = node else { return 0 }
        return (index + 1) << UInt64(level)
    }

    /// `merkle[<level>/<index>]`, or `merkle[<hex key>]` for a key that names no node.
    public var key: String {
        guard let (level, index) = node else {
            if case .extra(let key) = self { return "merkle[\(Hex.encode(key))]" }
            return "merkle[]"
        }
        return "merkle[\(level)/\(index)]"
    }

    public var kind: String {
        switch self {
        case .mismatch: "tree_node_mismatch"
        case .missing: "tree_node_missing"
        case .extra: "tree_node_extra"
        }
    }

    /// "records a to b" for the node's leaves.
    private var records: String {
        guard let (level, index) = node else { return "no records" }
        let first = index << UInt64(level) + 1
        return "records \(first) to \(first + (UInt64(1) << UInt64(level)) - 1)"
    }

    public var description: String {
        let where_ = node.map { "the Merkle tree's node at level \($0.level), index \($0.index) (\(key), \(records))" }
        switch self {
        case .mismatch:
            return
                "\(where_!) is not the hash of those records: the node, or one of the records with its chain recomputed, was changed after it was written (a checkpoint signed earlier tells which)"
        case .missing:
            return "\(where_!) is missing from the merkle table: the tree was changed outside jqc"
        case .extra:
            return where_.map {
                "\($0) is stored, but the records do not make it: it was planted, or records were removed from the end"
            }
                ?? "the merkle table holds \(key), which is not the key of a node: it was planted"
        }
    }
}

/// What is wrong with an index entry. Each case names the record position and
/// the index key concerned; the records themselves may be intact, but reads
/// through the index (`show`, `audit`, a stream's fold) would be misled.
public enum IndexFinding: Hashable, Sendable, CustomStringConvertible {
    /// Record `position` has no `event_ids` entry, or one pointing elsewhere.
    case eventID(id: UUID, position: UInt64, pointsAt: UInt64?)
    /// Record `position` has no `stream_index` entry, or one pointing elsewhere.
    case streamEntry(stream: UUID, version: UInt64, position: UInt64, pointsAt: UInt64?)
    /// Two records carry the same event id.
    case duplicateID(id: UUID, first: UInt64, second: UInt64)
    /// A stream's versions skip `expected` (the entry found has `found`).
    case streamGap(stream: UUID, expected: UInt64, found: UInt64, position: UInt64)
    /// A stream's version `version` is stored before its previous version.
    case streamOrder(stream: UUID, version: UInt64, position: UInt64, previous: UInt64)
    /// An index entry that no record names (planted, or left over).
    case stray(table: String, key: String, pointsAt: UInt64)
    /// An index entry whose key or value is not of the documented shape.
    case malformedEntry(table: String, key: String, position: UInt64)

    public var position: UInt64 {
        switch self {
        case .eventID(_, let p, _), .streamEntry(_, _, let p, _), .duplicateID(_, _, let p): p
        case .streamGap(_, _, _, let p), .streamOrder(_, _, let p, _): p
        case .stray(_, _, let p), .malformedEntry(_, _, let p): p
        }
    }

    /// The index key, as `event_ids[<id>]` or `stream_index[<stream>/<version>]`.
    public var key: String {
        switch self {
        case .eventID(let id, _, _), .duplicateID(let id, _, _): "event_ids[\(id.lowercased)]"
        case .streamEntry(let stream, let version, _, _), .streamGap(let stream, _, let version, _),
            .streamOrder(let stream, let version, _, _):
            "stream_index[\(stream.lowercased)/\(version)]"
        case .stray(let table, let key, _), .malformedEntry(let table, let key, _): "\(table)[\(key)]"
        }
    }

    public var description: String {
        switch self {
        case .eventID(_, let p, nil):
            "record \(p) has no \(key) entry"
        case .eventID(_, let p, let other?):
            "\(key) points at position \(other), but record \(p) has that id"
        case .streamEntry(_, _, let p, nil):
            "record \(p) has no \(key) entry"
        case .streamEntry(_, _, let p, let other?):
            "\(key) points at position \(other), but record \(p) is that stream version"
        case .duplicateID(_, let first, let second):
            "records \(first) and \(second) carry the same event id (\(key))"
        case .streamGap(let stream, let expected, let found, let p):
            "stream \(stream.lowercased) skips version \(expected): \(key) (position \(p)) follows version \(expected - 1)"
                + (found < expected ? " out of order" : "")
        case .streamOrder(_, _, let p, let previous):
            "\(key) is record \(p), before the stream's previous version at record \(previous)"
        case .stray(_, _, let p):
            "\(key) points at position \(p), whose record does not name it"
        case .malformedEntry(_, _, let p):
            "\(key) is not of the documented shape (near position \(p))"
        }
    }
}

/// The outcome of `EventLog.verify`.
public struct VerificationReport: Sendable {
    /// Records whose hashes were checked.
    public var checked: UInt64
    /// The head as recomputed from the records (not as stored).
    public var head: LedgerDigest
    /// The digest checked against, if any.
    public var digest: LedgerDigest?
    /// The first problem found; nil means the log is intact.
    public var finding: TamperFinding?

    public var isIntact: Bool { finding == nil }
}

/// The head failed its check (`LedgerReader.verifiedHead`).
public struct HeadCheckError: Error, CustomStringConvertible, Sendable {
    public var finding: TamperFinding
    public var description: String {
        "the log's head is not what its last record says (\(finding)); nothing was handed out. Run 'jqc verify --full' to see what else is wrong."
    }
}

extension EventLog {
    /// The full check (`jqc verify --full`), in ONE read transaction, so
    /// appends made meanwhile are simply not seen and never cause a finding.
    ///
    /// In this order (`Schemas/ledger-format.md` § What `verify` checks):
    /// 1. the chain: every record's position and stored chain hash (a failed
    ///    link is "changed", whatever else is wrong with the bytes), then its
    ///    layout, encoding and format, and key 1; a digest, if given, at its
    ///    position; with `checkpoint`, the root of its size recomputed from
    ///    the records themselves;
    /// 2. the back-links and the format sequence;
    /// 3. every record's `event_ids` and `stream_index` entries point at it
    ///    (a wrong `event_ids` entry pointing at a record with the same id is
    ///    a duplicate id);
    /// 4. the indexes hold nothing else (an extra entry is named; entries that
    ///    all point past the end mean the log was truncated);
    /// 5. each stream's versions run 1, 2, 3 … in increasing positions;
    /// 6. every stored node of the Merkle tree is the one the records make,
    ///    and the table holds no other (recomputed during the walk, from a
    ///    frontier: one node hash per record).
    ///
    /// The first problem is reported.
    public func verify(
        against digest: LedgerDigest? = nil, checkpoint: (size: UInt64, root: Digest256)? = nil,
        progress: ((UInt64, UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        try read { reader in try Self.verify(reader, against: digest, checkpoint: checkpoint, progress: progress) }
    }

    static func verify(
        _ reader: LedgerReader, against digest: LedgerDigest?, checkpoint: (size: UInt64, root: Digest256)? = nil,
        progress: ((UInt64, UInt64) -> Void)?
    ) throws -> VerificationReport {
        let total = UInt64(try reader.count())
        var walk = try walk(reader, digest: digest, checkpoint: checkpoint) { done in progress?(done, total) }
        let last = walk.next - 1
        if walk.finding == nil, let digest {
            if digest.position == 0, digest.head != .zero {
                walk.finding = .digestMismatch(position: 0, expected: digest.head, found: .zero)
            } else if digest.position > 0, !walk.digestChecked {
                walk.finding = .truncated(expected: digest.position, found: last)
            }
        }
        if walk.finding == nil, let checkpoint, checkpoint.size > last {
            walk.finding = .truncated(expected: checkpoint.size, found: last)
        }
        var finding = walk.finding ?? walk.checkpointFinding ?? walk.linkFinding
        finding = finding ?? walk.indexFinding.map { .indexMismatch($0) }
        if finding == nil {
            finding = try indexTotals(reader, records: last)
        }
        if finding == nil {
            finding = try streamOrder(reader).map { .indexMismatch($0) }
        }
        if finding == nil {
            finding = walk.nodeFinding.map { .treeNode($0) }
        }
        progress?(last, total)
        return VerificationReport(
            checked: last, head: LedgerDigest(position: last, head: walk.previous), digest: digest, finding: finding)
    }

    /// Where the walk along the chain got to.
    struct ChainWalk {
        var finding: TamperFinding?
        /// The first index problem seen while the chain still held.
        var indexFinding: IndexFinding?
        /// The first broken back-link (or format out of sequence) seen while the chain still held.
        var linkFinding: TamperFinding?
        /// The first stored node of the tree that the records do not make.
        var nodeFinding: TreeNodeFinding?
        /// The checkpoint's root is not the records' root at its size.
        var checkpointFinding: TamperFinding?
        /// Each stream's last version seen and its leaf hash.
        var streams: [StreamKey: (version: UInt64, leaf: Digest256)] = [:]
        /// The first format-2 record.
        var firstFormat2: UInt64?
        /// The position after the last one verified.
        var next: UInt64 = 1
        /// The chain hash recomputed at `next - 1`.
        var previous: Digest256 = .zero
        var digestChecked = false
    }

    /// Recomputes the chain and the tree from the first record to the last,
    /// stopping at the first chain problem, and looks up each record's index
    /// entries and the tree's stored nodes.
    static func walk(
        _ reader: LedgerReader, digest: LedgerDigest?, checkpoint: (size: UInt64, root: Digest256)? = nil,
        progress: ((UInt64) -> Void)? = nil
    ) throws -> ChainWalk {
        let chain = HashChain()
        let hasher = chain.hasher
        var walk = ChainWalk()
        let tables = reader.tables
        let transaction = reader.transaction
        var frontier = MerkleFrontier(size: 0, subtrees: [])
        if let checkpoint, checkpoint.size == 0, checkpoint.root != Merkle.emptyRoot(hasher) {
            walk.checkpointFinding = .checkpointMismatch(size: 0, node: nil)
        }
        // The stored nodes are read in key order beside the records: an
        // append writes a leaf's nodes in increasing level at the end of the
        // table, the very order the frontier makes them in.
        try TreeNodes.withCursor(tables.tree, in: transaction) { nodes in
            try reader.forEachStoredRecord(from: 1) { position, value in
                let expected = walk.next
                if position != expected {
                    walk.finding =
                        position > expected
                        ? .missing(position: expected, next: position)
                        : .reordered(position: position, claims: expected)
                    return false
                }
                guard value.byteCount > 32 else {
                    walk.finding = .unreadable(position: position, reason: "only \(value.byteCount) bytes stored")
                    return false
                }
                let leaf = chain.leaf(ofRecordIn: value, range: 32..<value.byteCount)
                let computed = chain.link(previous: walk.previous, leaf: leaf)
                if !computed.isStored(in: value) {
                    // The link decides: whatever else is wrong with the bytes,
                    // they are not the ones written there.
                    let claims = try? EventRecord.header(ofEncoded: value, at: 32).position
                    walk.finding =
                        claims.map { $0 != position } == true
                        ? .reordered(position: position, claims: claims!) : .changed(position: position)
                    return false
                }
                let header: RecordHeader
                do throws(RecordError) {
                    header = try EventRecord.checkedHeader(ofEncoded: value, at: 32)
                } catch {
                    switch error {
                    case .unknownFormat(let format): walk.finding = .newerFormat(position: position, format: format)
                    case .notDeterministic(let why): walk.finding = .notDeterministic(position: position, reason: why)
                    case .malformed(let why): walk.finding = .malformed(position: position, reason: why)
                    }
                    return false
                }
                if header.position != position {
                    walk.finding = .reordered(position: position, claims: header.position)
                    return false
                }
                if let digest, digest.position == position {
                    walk.digestChecked = true
                    if computed != digest.head {
                        walk.finding = .digestMismatch(position: position, expected: digest.head, found: computed)
                        return false
                    }
                }
                if walk.indexFinding == nil {
                    walk.indexFinding = try entries(of: header, in: transaction, tables: tables)
                }
                if walk.linkFinding == nil {
                    walk.linkFinding = link(of: header, walk: &walk)
                }
                walk.streams[StreamKey(header.stream)] = (header.streamVersion, leaf)
                try frontier.append(leaf: leaf, hasher: hasher) { level, index, hash in
                    if walk.nodeFinding == nil { walk.nodeFinding = try nodes.check(level: level, index: index, hash) }
                }
                if let checkpoint, checkpoint.size == position, frontier.root(hasher) != checkpoint.root {
                    walk.checkpointFinding = .checkpointMismatch(size: position, node: walk.nodeFinding)
                }
                walk.previous = computed
                walk.next += 1
                if let progress, position % 65_536 == 0 { progress(position) }
                return true
            }
            if walk.finding == nil, walk.nodeFinding == nil { walk.nodeFinding = try nodes.rest() }
        }
        return walk
    }

    /// The record's back-link (key 13) and its format against the ones before it.
    static func link(of header: RecordHeader, walk: inout ChainWalk) -> TamperFinding? {
        let position = header.position
        if header.format >= 2 {
            walk.firstFormat2 = walk.firstFormat2 ?? position
        } else if let first = walk.firstFormat2 {
            return .formatSequence(position: position, first: first)
        }
        guard header.format >= 2 else { return nil }
        let last = walk.streams[StreamKey(header.stream)]
        let linked: Bool
        if header.streamVersion == 1 {
            linked = header.previousInStream == nil
        } else if let last, last.version == header.streamVersion - 1 {
            // Compared as digests: no array is made per record.
            linked = header.previousInStream.flatMap { Digest256(bytes: $0) } == last.leaf
        } else {
            // A gap or reordering, reported by the stream check.
            linked = true
        }
        return linked
            ? nil
            : .brokenStreamLink(position: position, stream: UUID(bytes: header.stream)!, version: header.streamVersion)
    }

    /// Checks that the record's two index entries point back at it.
    static func entries(of header: RecordHeader, in transaction: Transaction, tables: Tables) throws
        -> IndexFinding?
    {
        let position = header.position
        let id = UUID(bytes: header.id)!
        let byID = try transaction.get(tables.eventIDs, header.id).flatMap { BigEndian.uint64($0) }
        if byID != position {
            if let other = byID, let value = try transaction.get(tables.events, BigEndian.bytes(other)),
                value.count > 32, let otherHeader = try? EventRecord.header(ofEncoded: value, at: 32),
                otherHeader.id == header.id
            {
                return .duplicateID(id: id, first: min(other, position), second: max(other, position))
            }
            return .eventID(id: id, position: position, pointsAt: byID)
        }
        var streamKey = header.stream
        BigEndian.append(header.streamVersion, to: &streamKey)
        let byStream = try transaction.get(tables.streamIndex, streamKey).flatMap { BigEndian.uint64($0) }
        if byStream != position {
            return .streamEntry(
                stream: UUID(bytes: header.stream)!, version: header.streamVersion, position: position,
                pointsAt: byStream)
        }
        return nil
    }

    /// Every record has its own two entries; any further entry is either
    /// left over from records removed from the end (truncation) or planted.
    static func indexTotals(_ reader: LedgerReader, records last: UInt64) throws -> TamperFinding? {
        let transaction = reader.transaction
        let tables = reader.tables
        let ids = UInt64(try transaction.count(tables.eventIDs))
        let streams = UInt64(try transaction.count(tables.streamIndex))
        guard ids != last || streams != last else { return nil }
        var stray: IndexFinding?
        var beyond: UInt64 = 0
        var allBeyond = true
        for (table, name) in [(tables.eventIDs, "event_ids"), (tables.streamIndex, "stream_index")] {
            try transaction.forEach(table) { key, value in
                let keyText = Self.keyText(key)
                guard let pointed = BigEndian.uint64(value), value.count == 8 else {
                    stray = stray ?? .malformedEntry(table: name, key: keyText, position: 0)
                    allBeyond = false
                    return true
                }
                if pointed > last {
                    beyond = max(beyond, pointed)
                    stray = stray ?? .stray(table: name, key: keyText, pointsAt: pointed)
                    return true
                }
                // Within the log: the entry must be the one its record names.
                let header =
                    try transaction.withValue(tables.events, BigEndian.bytes(pointed)) { value in
                        try? EventRecord.header(ofEncoded: value, at: 32)
                    } ?? nil
                let names: Bool
                if let header {
                    if name == "event_ids" {
                        names = header.id == key
                    } else {
                        var own = header.stream
                        BigEndian.append(header.streamVersion, to: &own)
                        names = own == key
                    }
                } else {
                    names = false
                }
                if !names {
                    allBeyond = false
                    stray = stray ?? .stray(table: name, key: keyText, pointsAt: pointed)
                }
                return true
            }
        }
        if allBeyond, beyond > last, ids == streams {
            return .truncated(expected: beyond, found: last)
        }
        if let stray { return .indexMismatch(stray) }
        return nil
    }

    /// Each stream's versions run 1, 2, 3 … at increasing positions.
    static func streamOrder(_ reader: LedgerReader) throws -> IndexFinding? {
        var finding: IndexFinding?
        var stream: [UInt8] = []
        var version: UInt64 = 0
        var previous: UInt64 = 0
        try reader.transaction.forEach(reader.tables.streamIndex) { key, value in
            guard key.count == 24, let entryVersion = BigEndian.uint64(key, at: 16),
                let position = BigEndian.uint64(value)
            else {
                finding = .malformedEntry(table: "stream_index", key: Self.keyText(key), position: 0)
                return false
            }
            let id = Array(key[0..<16])
            if id != stream {
                stream = id
                version = 0
                previous = 0
            }
            let uuid = UUID(bytes: id)!
            if entryVersion != version + 1 {
                finding = .streamGap(stream: uuid, expected: version + 1, found: entryVersion, position: position)
                return false
            }
            if position <= previous {
                finding = .streamOrder(stream: uuid, version: entryVersion, position: position, previous: previous)
                return false
            }
            version = entryVersion
            previous = position
            return true
        }
        return finding
    }

    /// An index key in text: a UUID, a UUID and a version, or hex.
    static func keyText(_ key: [UInt8]) -> String {
        if key.count == 16, let id = UUID(bytes: key) { return id.lowercased }
        if key.count == 24, let id = UUID(bytes: Array(key[0..<16])), let version = BigEndian.uint64(key, at: 16) {
            return "\(id.lowercased)/\(version)"
        }
        return Hex.encode(key)
    }
}

/// The stored nodes of the `merkle` table, read in key order beside the
/// walk: each node the records make must be the next entry.
struct TreeNodes {
    var cursor: Cursor?

    /// Lends `body` the table's nodes; without a table (a read-only store of
    /// format 1, which has no tree yet) every check passes.
    static func withCursor<T>(_ table: Table?, in transaction: Transaction, _ body: (inout TreeNodes) throws -> T)
        throws -> T
    {
        guard let table else {
            var none = TreeNodes(cursor: nil)
            return try body(&none)
        }
        return try transaction.withCursor(table) { cursor in
            var nodes = TreeNodes(cursor: cursor)
            return try body(&nodes)
        }
    }

    /// Whether the next stored entry is the node (level, index) with `hash`.
    mutating func check(level: Int, index: UInt64, _ hash: Digest256) throws -> TreeNodeFinding? {
        guard var cursor else { return nil }
        defer { self.cursor = cursor }
        // Compared as (last leaf, level), the key's own order, without making the key.
        let last = ((index + 1) << UInt64(level)) - 1
        let found: TreeNodeFinding?? = try cursor.withEntry { stored, value -> TreeNodeFinding? in
            let order: Int = stored.withUnsafeBytes { raw in
                guard raw.count == 9 else {
                    return raw.lexicographicallyPrecedes(MerkleKey.key(level: level, index: index)) ? -1 : 1
                }
                let storedLast = UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
                let storedLevel = Int(raw[8])
                if storedLast != last { return storedLast < last ? -1 : 1 }
                return storedLevel == level ? 0 : storedLevel < level ? -1 : 1
            }
            if order == 0 {
                return value.byteCount == 32 && hash.isStored(in: value) ? nil : .mismatch(level: level, index: index)
            }
            return order < 0 ? .extra(key: Transaction.copy(stored)) : .missing(level: level, index: index)
        }
        guard let found else { return .missing(level: level, index: index) }
        return found
    }

    /// Any entry after the last node the records make.
    mutating func rest() throws -> TreeNodeFinding? {
        guard var cursor else { return nil }
        return try cursor.withEntry { stored, _ in TreeNodeFinding.extra(key: Transaction.copy(stored)) }
    }
}

extension LedgerReader {
    /// The head, checked: the last record's chain link is recomputed from the
    /// previous record's stored chain hash, and its key 1 must be its position.
    /// Throws `HeadCheckError` when it does not hold.
    public func verifiedHead() throws -> LedgerDigest {
        let stored = try head()
        guard stored.position > 0 else { return stored }
        let position = stored.position
        guard let value = try transaction.get(tables.events, BigEndian.bytes(position)), value.count > 32 else {
            throw HeadCheckError(finding: .unreadable(position: position, reason: "the last entry is too short"))
        }
        var previous = Digest256.zero
        if position > 1 {
            guard let before = try transaction.get(tables.events, BigEndian.bytes(position - 1)) else {
                throw HeadCheckError(finding: .missing(position: position - 1, next: position))
            }
            guard before.count > 32, let hash = Digest256(bytes: Array(before[0..<32])) else {
                throw HeadCheckError(
                    finding: .unreadable(position: position - 1, reason: "only \(before.count) bytes stored"))
            }
            previous = hash
        }
        let claimed: UInt64
        do {
            claimed = try EventRecord.position(ofEncoded: value, at: 32)
        } catch {
            throw HeadCheckError(finding: .unreadable(position: position, reason: "\(error)"))
        }
        let chain = HashChain()
        let computed = chain.link(previous: previous, leaf: chain.leaf(ofRecordIn: value, range: 32..<value.count))
        guard computed == stored.head else { throw HeadCheckError(finding: .changed(position: position)) }
        guard claimed == position else {
            throw HeadCheckError(finding: .reordered(position: position, claims: claimed))
        }
        return stored
    }
}

extension LedgerReader {
    /// Whether the stored level-1 node over the pair of leaves `position`
    /// belongs to is the hash of the two records as they are now: false when
    /// one of them (or the node) was changed; nil when the pair is not
    /// complete in a tree of `size` records (then no node covers it).
    public func pairNodeHolds(_ position: UInt64, size: UInt64) throws -> Bool? {
        let index = (position - 1) / 2
        guard position >= 1, index * 2 + 2 <= size, tables.tree != nil else { return nil }
        let hasher = SHA256Hasher()
        let stored = try perfectSubtree(level: 1, index: index, hasher: hasher)
        let left = try leafHash(at: index * 2 + 1, hasher: hasher)
        let right = try leafHash(at: index * 2 + 2, hasher: hasher)
        return Merkle.node(left, right, hasher) == stored
    }
}

/// A stream id as the walk's dictionary key: its 16 bytes as two words, so
/// a record's lookup hashes two integers and copies no array.
struct StreamKey: Hashable {
    var high: UInt64
    var low: UInt64

    init(_ bytes: [UInt8]) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (i, byte) in bytes.prefix(16).enumerated() {
            if i < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        // The header check has made sure a stream id is 16 bytes.
        self.high = high
        self.low = low
    }
}
