import Foundation
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
            if let checkpoint {
                if checkpoint.size > size {
                    report.finding = .notExtended(
                        "it signs \(checkpoint.size) records, the log has \(size): it was truncated")
                    return report
                }
                let proof = checkpoint.size == 0 ? [] : try reader.consistencyProof(from: checkpoint.size, to: size)
                let consistent =
                    checkpoint.size == 0
                    || Merkle.verifyConsistency(
                        from: checkpoint.size, to: size, first: checkpoint.root, second: root, proof: proof)
                guard consistent else {
                    report.finding = .notExtended(
                        "a record at or before position \(checkpoint.size) was changed, removed or reordered")
                    return report
                }
            }
            do {
                _ = try reader.verifiedHead()
            } catch let error as HeadCheckError {
                report.finding = .notExtended("the head does not hold: \(error.finding)")
                return report
            }
            let hasher = SHA256Hasher()
            var previousLeaf: Digest256?
            var previousPosition: UInt64 = 0
            var version: UInt64 = 0
            var positions: [UInt64] = []
            try reader.transaction.forEach(reader.tables.streamIndex, from: stream.bytes + BigEndian.bytes(1)) {
                key, value in
                guard key.count == 24, key[0..<16].elementsEqual(stream.bytes), let p = BigEndian.uint64(value) else {
                    return false
                }
                positions.append(p)
                return true
            }
            for position in positions {
                version += 1
                guard position > previousPosition, position <= size else {
                    report.finding = .wrongRecord(
                        position: position, why: "the stream index puts version \(version) out of order")
                    return report
                }
                let bytes = try reader.encodedRecord(at: position)
                let leaf = hasher.digest(prefix: 0x00, bytes, range: bytes.indices)
                let proof = try reader.inclusionProof(position: position, size: size)
                guard
                    Merkle.verifyInclusion(
                        leafHash: leaf, leaf: position - 1, size: size, proof: proof, root: root, hasher: hasher)
                else {
                    report.finding = .notInTree(position: position)
                    return report
                }
                let header: RecordHeader
                do {
                    header = try EventRecord.header(ofEncoded: bytes)
                } catch {
                    report.finding = .wrongRecord(position: position, why: "\(error)")
                    return report
                }
                guard header.position == position, header.stream == stream.bytes, header.streamVersion == version
                else {
                    report.finding = .wrongRecord(
                        position: position,
                        why: "it is not version \(version) of \(stream.lowercased) (the stream index points elsewhere)")
                    return report
                }
                if header.format >= 2 {
                    let linked =
                        version == 1
                        ? header.previousInStream == nil
                        : previousLeaf.map { header.previousInStream == $0.bytes } ?? true
                    guard linked else {
                        report.finding = .brokenLink(position: position, version: version)
                        return report
                    }
                }
                previousLeaf = leaf
                previousPosition = position
                report.proven += 1
            }
            return report
        }
    }
}
