import FoundationEssentials
import LMDB
import LedgerCore

/// What `EventLog.proveStream` found wrong, naming the position.
public enum StreamProofFinding: Hashable, Sendable, CustomStringConvertible {
    /// The record's bytes are not the leaf the tree holds at its position.
    case notInTree(position: UInt64)
    /// The record's key 13 is not the leaf hash of the stream's previous record.
    case brokenLink(position: UInt64, version: UInt64)
    /// The stream index does not lead to versions 1, 2, 3 … of this stream in order.
    case wrongRecord(position: UInt64, why: String)
    /// Today's tree does not extend the checkpoint.
    case notExtended(String)

    public var position: UInt64? {
        switch self {
        case .notInTree(let p), .brokenLink(let p, _), .wrongRecord(let p, _): p
        case .notExtended: nil
        }
    }

    public var description: String {
        switch self {
        case .notInTree(let p):
            "record \(p) is not the record the Merkle tree holds at its position: it was changed after it was written"
        case .brokenLink(let p, let v):
            "record \(p) (version \(v)) does not link to the stream's previous record: a record was changed, removed or inserted"
        case .wrongRecord(let p, let why): "record \(p): \(why)"
        case .notExtended(let why): "the log does not extend the checkpoint: \(why)"
        }
    }
}

/// The outcome of `EventLog.proveStream`.
public struct StreamProofReport: Sendable {
    /// The tree the records were proven in.
    public var treeSize: UInt64
    public var root: Digest256
    /// Records of the stream proven (all of them when `finding` is nil).
    public var proven: Int
    /// The checkpoint the tree was proven to extend, if one was given.
    public var checkpoint: Checkpoint?
    public var finding: StreamProofFinding?

    public var isIntact: Bool { finding == nil }
}

extension EventLog {
    /// Proves one stream's records without walking the log, in one snapshot:
    /// the tree today extends `checkpoint` (a consistency proof), the head's
    /// chain link holds, and each record of the stream — found through the
    /// stream index — is the leaf the tree holds at its position (an inclusion
    /// proof), is version 1, 2, 3 … of the stream at increasing positions, and
    /// links to the previous one (key 13, format 2). O(k log n) for k records.
    public func proveStream(_ stream: UUID, checkpoint: Checkpoint? = nil) throws -> StreamProofReport {
        try read { reader in
            let size = try reader.treeSize()
            let root = try reader.treeRoot(size: size)
            var report = StreamProofReport(treeSize: size, root: root, proven: 0, checkpoint: checkpoint)
            if let checkpoint, let finding = try Self.extensionFinding(reader, checkpoint, size: size, root: root) {
                report.finding = finding
                return report
            }
            do {
                _ = try reader.verifiedHead()
            } catch let error as HeadCheckError {
                report.finding = .notExtended("the head does not hold: \(error.finding)")
                return report
            }
            var walk = StreamWalk(stream: stream, size: size, root: root)
            for position in try Self.positions(of: stream, reader) {
                if let finding = try walk.prove(position, reader) {
                    report.finding = finding
                    return report
                }
                report.proven += 1
            }
            return report
        }
    }

    /// Why today's tree of `size` records (root `root`) does not extend
    /// `checkpoint`, or nil when it does.
    static func extensionFinding(
        _ reader: LedgerReader, _ checkpoint: Checkpoint, size: UInt64, root: Digest256
    ) throws -> StreamProofFinding? {
        if checkpoint.size > size {
            return .notExtended("it signs \(checkpoint.size) records, the log has \(size): it was truncated")
        }
        guard checkpoint.size > 0 else { return nil }
        let proof = try reader.consistencyProof(from: checkpoint.size, to: size)
        let consistent = Merkle.verifyConsistency(
            from: checkpoint.size, to: size, first: checkpoint.root, second: root, proof: proof)
        return consistent
            ? nil : .notExtended("a record at or before position \(checkpoint.size) was changed, removed or reordered")
    }

    /// The positions the stream index gives for `stream`, version 1 first.
    static func positions(of stream: UUID, _ reader: LedgerReader) throws -> [UInt64] {
        var positions: [UInt64] = []
        try reader.transaction.forEach(reader.tables.streamIndex, from: stream.bytes + BigEndian.bytes(1)) {
            key, value in
            guard key.count == 24, key[0..<16].elementsEqual(stream.bytes), let p = BigEndian.uint64(value) else {
                return false
            }
            positions.append(p)
            return true
        }
        return positions
    }
}

/// One stream's records proven in order: each at a later position than the
/// one before, in the tree, the next version of the stream, linked to the
/// previous record's leaf.
struct StreamWalk {
    let stream: UUID
    let size: UInt64
    let root: Digest256
    let hasher = SHA256Hasher()
    private(set) var version: UInt64 = 0
    private var previousLeaf: Digest256?
    private var previousPosition: UInt64 = 0

    init(stream: UUID, size: UInt64, root: Digest256) {
        self.stream = stream
        self.size = size
        self.root = root
    }

    /// What is wrong with the record the index gives as the next version,
    /// or nil when it is proven.
    mutating func prove(_ position: UInt64, _ reader: LedgerReader) throws -> StreamProofFinding? {
        version += 1
        guard position > previousPosition, position <= size else {
            return .wrongRecord(position: position, why: "the stream index puts version \(version) out of order")
        }
        // Positions count from 1, leaves from 0: the guard above keeps the crossing in range.
        precondition(position >= 1 && position - 1 < size, "bad math: record \(position) is no leaf of \(size)")
        let bytes = try reader.encodedRecord(at: position)
        let leaf = hasher.digest(prefix: 0x00, bytes, range: bytes.indices)
        let proof = try reader.inclusionProof(position: position, size: size)
        guard
            Merkle.verifyInclusion(
                leafHash: leaf, leaf: position - 1, size: size, proof: proof, root: root, hasher: hasher)
        else { return .notInTree(position: position) }
        let header: RecordHeader
        do {
            header = try EventRecord.header(ofEncoded: bytes)
        } catch {
            return .wrongRecord(position: position, why: "\(error)")
        }
        guard header.position == position, header.stream == stream.bytes, header.streamVersion == version else {
            return .wrongRecord(
                position: position,
                why: "it is not version \(version) of \(stream.lowercased) (the stream index points elsewhere)")
        }
        if header.format >= 2 {
            let linked =
                version == 1
                ? header.previousInStream == nil
                : previousLeaf.map { header.previousInStream == $0.bytes } ?? true
            guard linked else { return .brokenLink(position: position, version: version) }
        }
        previousLeaf = leaf
        previousPosition = position
        return nil
    }
}
