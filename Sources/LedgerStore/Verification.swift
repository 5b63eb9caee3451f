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
    case indexMismatch(String)

    /// The position the finding concerns.
    public var position: UInt64 {
        switch self {
        case .changed(let p), .missing(let p, _), .reordered(let p, _), .unreadable(let p, _): p
        case .truncated(_, let found): found + 1
        case .digestMismatch(let p, _, _): p
        case .indexMismatch: 0
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
        case .indexMismatch(let what):
            "an index disagrees with the log: \(what)"
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

extension EventLog {
    /// Walks the whole chain, recomputing every hash, and reports the first
    /// place the log was changed, removed, reordered or truncated.
    ///
    /// With a `digest` (handed out earlier by `head()`), it also proves that
    /// today's log still extends that point unchanged.
    ///
    /// A long log is checked in two halves on two threads: each record stores
    /// the chain hash it extends, so the second half can start from the hash
    /// stored at the middle — which the first half proves when it recomputes
    /// that very hash. Together they check every link, twice as fast.
    public func verify(
        against digest: LedgerDigest? = nil, progress: ((UInt64, UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        try verify(against: digest, splittingAbove: 100_000, progress: progress)
    }

    /// `verify`, splitting the walk in two when the log has more than
    /// `threshold` records (tests lower it to exercise both paths).
    func verify(
        against digest: LedgerDigest?, splittingAbove threshold: UInt64, progress: ((UInt64, UInt64) -> Void)?
    ) throws -> VerificationReport {
        let (total, middle) = try read { reader -> (UInt64, (UInt64, Digest256)?) in
            let total = UInt64(try reader.count())
            guard total > threshold else { return (total, nil) }
            let middle = total / 2
            guard let value = try reader.transaction.get(reader.tables.events, BigEndian.bytes(middle)),
                value.count > 32, let hash = Digest256(bytes: Array(value[0..<32]))
            else { return (total, nil) }
            return (total, (middle, hash))
        }
        var first: ChainWalk
        var second: ChainWalk?
        if let (position, hash) = middle {
            let secondHalf = SecondHalf()
            let thread = Thread { [self] in
                secondHalf.finish(
                    Result {
                        try read { reader in
                            try Self.walk(reader, from: position + 1, through: nil, previous: hash, digest: digest)
                        }
                    })
            }
            thread.start()
            first = try read { reader in
                try Self.walk(reader, from: 1, through: position, previous: .zero, digest: digest) { done in
                    progress?(done * 2, total)
                }
            }
            second = try secondHalf.wait().get()
        } else {
            first = try read { reader in
                try Self.walk(reader, from: 1, through: nil, previous: .zero, digest: digest) { done in
                    progress?(done, total)
                }
            }
        }
        // The second half counts only if the first got through to the middle.
        var finding = first.finding
        var last = first.next - 1
        var head = first.previous
        var digestChecked = digest == nil || digest!.position == 0 || first.digestChecked
        if finding == nil, let second {
            finding = second.finding
            last = second.next - 1
            head = second.previous
            digestChecked = digestChecked || second.digestChecked
        }
        if let digest, digest.position == 0, digest.head != .zero, finding == nil {
            finding = .digestMismatch(position: 0, expected: digest.head, found: .zero)
        }
        if finding == nil, !digestChecked, let digest {
            finding = .truncated(expected: digest.position, found: last)
        }
        if finding == nil {
            // The indexes are written in the same transaction as each record,
            // so records deleted from the end of the log leave them longer.
            let (ids, streams) = try read { reader in
                (
                    UInt64(try reader.transaction.count(reader.tables.eventIDs)),
                    UInt64(try reader.transaction.count(reader.tables.streamIndex))
                )
            }
            if ids > last && ids == streams {
                finding = .truncated(expected: ids, found: last)
            } else if ids != last || streams != last {
                finding = .indexMismatch("\(last) records, \(ids) event ids, \(streams) stream entries")
            }
        }
        progress?(last, total)
        return VerificationReport(
            checked: last, head: LedgerDigest(position: last, head: head), digest: digest, finding: finding)
    }

    /// Where a walk along the chain got to.
    struct ChainWalk {
        var finding: TamperFinding?
        /// The position after the last one verified.
        var next: UInt64
        /// The chain hash recomputed at `next - 1`.
        var previous: Digest256
        var digestChecked: Bool
    }

    /// Recomputes the chain from `start` (whose predecessor's hash is
    /// `previous`) through `end` (or the end of the log), stopping at the
    /// first problem.
    static func walk(
        _ reader: LedgerReader, from start: UInt64, through end: UInt64?, previous initial: Digest256,
        digest: LedgerDigest?, progress: ((UInt64) -> Void)? = nil
    ) throws -> ChainWalk {
        let chain = HashChain()
        var walk = ChainWalk(finding: nil, next: start, previous: initial, digestChecked: false)
        try reader.forEachStoredRecord(from: start) { position, value in
            if let end, position > end { return false }
            let expected = walk.next
            if position != expected {
                walk.finding =
                    position > expected
                    ? .missing(position: expected, next: position) : .reordered(position: position, claims: expected)
                return false
            }
            guard value.count > 32 else {
                walk.finding = .unreadable(position: position, reason: "only \(value.count) bytes stored")
                return false
            }
            let claimed: UInt64
            do {
                claimed = try EventRecord.position(ofEncoded: value, at: 32)
            } catch {
                walk.finding = .unreadable(position: position, reason: "\(error)")
                return false
            }
            let computed = chain.link(
                previous: walk.previous, leaf: chain.leaf(ofRecordIn: value, range: 32..<value.count))
            if !value[0..<32].elementsEqual(computed.bytes) {
                walk.finding =
                    claimed != position
                    ? .reordered(position: position, claims: claimed) : .changed(position: position)
                return false
            }
            if claimed != position {
                walk.finding = .reordered(position: position, claims: claimed)
                return false
            }
            if let digest, digest.position == position {
                walk.digestChecked = true
                if computed != digest.head {
                    walk.finding = .digestMismatch(position: position, expected: digest.head, found: computed)
                    return false
                }
            }
            walk.previous = computed
            walk.next += 1
            if let progress, position % 65_536 == 0 { progress(position - start + 1) }
            return true
        }
        if walk.finding == nil, let end, walk.next <= end {
            // The log ends before the segment does (the count was a snapshot).
            walk.finding = .truncated(expected: end, found: walk.next - 1)
        }
        return walk
    }
}

/// Hands the second half's result to the thread that waits for it.
private final class SecondHalf: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<EventLog.ChainWalk, Error>?

    func finish(_ result: Result<EventLog.ChainWalk, Error>) {
        condition.lock()
        self.result = result
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> Result<EventLog.ChainWalk, Error> {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return result!
    }
}
