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

    /// The position the finding concerns.
    public var position: UInt64 {
        switch self {
        case .changed(let p), .missing(let p, _), .reordered(let p, _), .unreadable(let p, _): p
        case .truncated(_, let found): found + 1
        case .digestMismatch(let p, _, _): p
        case .indexMismatch(let finding): finding.position
        case .brokenStreamLink(let p, _, _): p
        }
    }

    /// The index key the finding concerns, if it is about an index entry.
    public var key: String? {
        if case .indexMismatch(let finding) = self { return finding.key }
        return nil
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
    /// 1. the chain: every record's position, stored chain hash and key 1;
    ///    a digest, if given, at its position;
    /// 2. every record's `event_ids` and `stream_index` entries point at it
    ///    (a wrong `event_ids` entry pointing at a record with the same id is
    ///    a duplicate id);
    /// 3. the indexes hold nothing else (an extra entry is named; entries that
    ///    all point past the end mean the log was truncated);
    /// 4. each stream's versions run 1, 2, 3 … in increasing positions.
    ///
    /// The first problem is reported; a chain problem comes before an index one.
    public func verify(
        against digest: LedgerDigest? = nil, progress: ((UInt64, UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        try read { reader in try Self.verify(reader, against: digest, progress: progress) }
    }

    static func verify(
        _ reader: LedgerReader, against digest: LedgerDigest?, progress: ((UInt64, UInt64) -> Void)?
    ) throws -> VerificationReport {
        let total = UInt64(try reader.count())
        var walk = try walk(reader, digest: digest) { done in progress?(done, total) }
        let last = walk.next - 1
        if walk.finding == nil, let digest {
            if digest.position == 0, digest.head != .zero {
                walk.finding = .digestMismatch(position: 0, expected: digest.head, found: .zero)
            } else if digest.position > 0, !walk.digestChecked {
                walk.finding = .truncated(expected: digest.position, found: last)
            }
        }
        var finding = walk.finding ?? walk.linkFinding ?? walk.indexFinding.map { .indexMismatch($0) }
        if finding == nil {
            finding = try indexTotals(reader, records: last)
        }
        if finding == nil {
            finding = try streamOrder(reader).map { .indexMismatch($0) }
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
        /// The first broken back-link seen while the chain still held.
        var linkFinding: TamperFinding?
        /// Each stream's last version seen and its leaf hash.
        var streams: [[UInt8]: (version: UInt64, leaf: Digest256)] = [:]
        /// The position after the last one verified.
        var next: UInt64 = 1
        /// The chain hash recomputed at `next - 1`.
        var previous: Digest256 = .zero
        var digestChecked = false
    }

    /// Recomputes the chain from the first record to the last, stopping at
    /// the first chain problem, and looks up each record's index entries.
    static func walk(
        _ reader: LedgerReader, digest: LedgerDigest?, progress: ((UInt64) -> Void)? = nil
    ) throws -> ChainWalk {
        let chain = HashChain()
        var walk = ChainWalk()
        let tables = reader.tables
        let transaction = reader.transaction
        try reader.forEachStoredRecord(from: 1) { position, value in
            let expected = walk.next
            if position != expected {
                walk.finding =
                    position > expected
                    ? .missing(position: expected, next: position) : .reordered(position: position, claims: expected)
                return false
            }
            guard value.byteCount > 32 else {
                walk.finding = .unreadable(position: position, reason: "only \(value.byteCount) bytes stored")
                return false
            }
            let header: RecordHeader
            do {
                header = try EventRecord.header(ofEncoded: value, at: 32)
            } catch {
                walk.finding = .unreadable(position: position, reason: "\(error)")
                return false
            }
            let leaf = chain.leaf(ofRecordIn: value, range: 32..<value.byteCount)
            let computed = chain.link(previous: walk.previous, leaf: leaf)
            if !computed.isStored(in: value) {
                walk.finding =
                    header.position != position
                    ? .reordered(position: position, claims: header.position) : .changed(position: position)
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
            if walk.linkFinding == nil, header.format >= 2 {
                let last = walk.streams[header.stream]
                let linked: Bool
                if header.streamVersion == 1 {
                    linked = header.previousInStream == nil
                } else if let last, last.version == header.streamVersion - 1, last.leaf.bytes.count == 32 {
                    linked = header.previousInStream == last.leaf.bytes
                } else {
                    // A gap or reordering, reported by the stream check.
                    linked = true
                }
                if !linked {
                    walk.linkFinding = .brokenStreamLink(
                        position: position, stream: UUID(bytes: header.stream)!, version: header.streamVersion)
                }
            }
            walk.streams[header.stream] = (header.streamVersion, leaf)
            walk.previous = computed
            walk.next += 1
            if let progress, position % 65_536 == 0 { progress(position) }
            return true
        }
        return walk
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
