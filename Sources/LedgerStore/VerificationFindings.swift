import FoundationEssentials
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
    /// The `carried` table lacks a reference, or holds bytes that do not
    /// hash to their key (step 7).
    case carried(CarriedFinding)
    /// A stored node of the map of stream heads is not the one the records
    /// make (step 8).
    case headMap(HeadMapFinding)

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
        case .carried(let finding): finding.position
        case .headMap(let finding): finding.position
        }
    }

    /// The index or table key the finding concerns: `event_ids[<id>]`,
    /// `stream_index[<stream>/<version>]`, `merkle[<level>/<index>]`, `meta[format]`.
    public var key: String? {
        switch self {
        case .indexMismatch(let finding): finding.key
        case .treeNode(let node), .checkpointMismatch(_, let node?): node.key
        case .carried(let finding): finding.key
        case .headMap(let finding): finding.key
        default: nil
        }
    }

    /// The finding's kind, as `jqc audit --json` and the format page name it.
    public var kind: FindingKind {
        switch self {
        case .changed: .changed
        case .missing: .missing
        case .reordered: .reordered
        case .unreadable: .unreadable
        case .truncated: .truncated
        case .digestMismatch: .digestMismatch
        case .indexMismatch: .indexMismatch
        case .brokenStreamLink: .brokenStreamLink
        case .treeNode(let node): node.kind
        case .malformed: .malformed
        case .notDeterministic: .notDeterministic
        case .newerFormat: .newerFormat
        case .formatSequence: .formatSequence
        case .checkpointMismatch: .checkpointMismatch
        case .carried(.missing): .carriedMissing
        case .carried(.damaged): .carriedDamaged
        case .headMap: .headMapMismatch
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
        case .carried(let finding):
            "\(finding)"
        case .headMap(let finding):
            "\(finding)"
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

    public var kind: FindingKind {
        switch self {
        case .mismatch: .treeNodeMismatch
        case .missing: .treeNodeMissing
        case .extra: .treeNodeExtra
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
    /// The map of stream heads is behind the log (not damage: what to do
    /// is in its description); nil when it is not, or when there is a finding.
    public var headMapLag: HeadMapLag? = nil

    public var isIntact: Bool { finding == nil }
}

/// The head failed its check (`LedgerReader.verifiedHead`).
public struct HeadCheckError: Error, CustomStringConvertible, Sendable {
    public var finding: TamperFinding
    public var description: String {
        "the log's head is not what its last record says (\(finding)); nothing was handed out. Run 'jqc verify --full' to see what else is wrong."
    }
}
