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
    public func verify(
        against digest: LedgerDigest? = nil, progress: ((UInt64, UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        try read { reader in try Self.verify(reader: reader, against: digest, progress: progress) }
    }

    static func verify(
        reader: LedgerReader, against digest: LedgerDigest?, progress: ((UInt64, UInt64) -> Void)?
    ) throws -> VerificationReport {
        let chain = HashChain()
        let total = UInt64(try reader.count())
        var expected: UInt64 = 1
        var previous = Digest256.zero
        var finding: TamperFinding?
        var digestChecked = digest == nil || digest!.position == 0
        if let digest, digest.position == 0, digest.head != .zero {
            finding = .digestMismatch(position: 0, expected: digest.head, found: .zero)
        }

        try reader.forEachStoredRecord { position, value in
            if finding != nil { return false }
            if position != expected {
                finding =
                    position > expected
                    ? .missing(position: expected, next: position) : .reordered(position: position, claims: expected)
                return false
            }
            guard value.count > 32 else {
                finding = .unreadable(position: position, reason: "only \(value.count) bytes stored")
                return false
            }
            let claimed: UInt64
            do {
                claimed = try EventRecord.position(ofEncoded: value, at: 32)
            } catch {
                finding = .unreadable(position: position, reason: "\(error)")
                return false
            }
            let computed = chain.link(previous: previous, leaf: chain.leaf(ofRecordIn: value, range: 32..<value.count))
            if !value[0..<32].elementsEqual(computed.bytes) {
                finding =
                    claimed != position
                    ? .reordered(position: position, claims: claimed) : .changed(position: position)
                return false
            }
            if claimed != position {
                finding = .reordered(position: position, claims: claimed)
                return false
            }
            if let digest, digest.position == position {
                digestChecked = true
                if computed != digest.head {
                    finding = .digestMismatch(position: position, expected: digest.head, found: computed)
                    return false
                }
            }
            previous = computed
            expected += 1
            if let progress, position % 65_536 == 0 { progress(position, total) }
            return true
        }
        let last = expected - 1
        if finding == nil, !digestChecked, let digest {
            finding = .truncated(expected: digest.position, found: last)
        }
        if finding == nil {
            // The indexes are written in the same transaction as each record,
            // so records deleted from the end of the log leave them longer.
            let ids = UInt64(try reader.transaction.count(reader.tables.eventIDs))
            let streams = UInt64(try reader.transaction.count(reader.tables.streamIndex))
            if ids > last && ids == streams {
                finding = .truncated(expected: ids, found: last)
            } else if ids != last || streams != last {
                finding = .indexMismatch("\(last) records, \(ids) event ids, \(streams) stream entries")
            }
        }
        progress?(last, total)
        return VerificationReport(
            checked: last, head: LedgerDigest(position: last, head: previous), digest: digest, finding: finding)
    }
}
