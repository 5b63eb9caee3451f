import FoundationEssentials
import LMDB
import LedgerCore

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
    ///    and the table holds no other (recomputed beside the walk, from a
    ///    frontier: one node hash per record, on a second thread that the
    ///    walk hands the leaves and the stored hashes: `TreeCheck`);
    /// 7. every reference of every version-2 reception resolves in the
    ///    `carried` table, and every entry hashes to its key (the receptions
    ///    found by the second thread as it checks each record, so the log is
    ///    walked once);
    /// 8. the `heads` table is the map of stream heads the records make
    ///    (each stream's last version and leaf, kept by the second thread
    ///    for the back-links anyway, so no second pass over the log); a map
    ///    behind the log (an older jqc appended) is compared with the map of
    ///    the records it says it holds (what the catch-up builds on) and,
    ///    whole, reported as `headMapLag`, beside an intact verdict.
    ///
    /// The first problem is reported.
    public func verify(
        against digest: LedgerDigest? = nil, checkpoint: (size: UInt64, root: Digest256)? = nil,
        progress: ((UInt64, UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        try verify(against: digest, checkpoint: checkpoint, ownChecks: .balanced, progress: progress)
    }

    /// The same, with the records' own checks made where `ownChecks` says
    /// (the tests hold each placement to the same findings).
    func verify(
        against digest: LedgerDigest? = nil, checkpoint: (size: UInt64, root: Digest256)? = nil,
        ownChecks: TreeCheck.Placement, progress: ((UInt64, UInt64) -> Void)? = nil
    ) throws -> VerificationReport {
        try read { reader in
            try Self.verify(
                reader, against: digest, checkpoint: checkpoint, beside: self, ownChecks: ownChecks, progress: progress)
        }
    }

    /// `beside`: the log `reader` reads, for a second read transaction of
    /// the same snapshot on another thread after the walk (`AfterWalk`).
    static func verify(
        _ reader: LedgerReader, against digest: LedgerDigest?, checkpoint: (size: UInt64, root: Digest256)? = nil,
        beside log: EventLog?, ownChecks: TreeCheck.Placement = .balanced, progress: ((UInt64, UInt64) -> Void)?
    ) throws -> VerificationReport {
        let total = UInt64(try reader.count())
        var walk = try walk(reader, digest: digest, checkpoint: checkpoint, ownChecks: ownChecks) { done in
            progress?(done, total)
        }
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
        var builtMap: Result<HeadMapInMemory, HeadMapError>?
        if finding == nil {
            // Steps 3 to 5: the index tables read once each (IndexSums),
            // `stream_index` on a second thread beside step 8's map.
            let after = try AfterWalk.work(reader, beside: log, heads: walk.heads)
            builtMap = after.map
            if after.sums != walk.indexSums {
                finding = try firstIndexFinding(reader, records: last).map { .indexMismatch($0) }
            }
            finding = try finding ?? indexTotals(reader, records: last)
            finding = finding ?? after.order.map { .indexMismatch($0) }
        }
        if finding == nil {
            finding = walk.nodeFinding.map { .treeNode($0) }
        }
        if finding == nil {
            finding = try carriedFinding(reader, records: last, receptions: walk.receptions).map { .carried($0) }
        }
        if finding == nil {
            finding = try headMapFinding(reader, heads: walk.heads, built: builtMap?.get(), records: last).map {
                .headMap($0)
            }
        }
        progress?(last, total)
        return VerificationReport(
            checked: last, head: LedgerDigest(position: last, head: walk.previous), digest: digest, finding: finding,
            headMapLag: finding == nil ? try reader.headMapLag() : nil)
    }

    /// Where the walk along the chain got to.
    struct ChainWalk {
        var finding: TamperFinding?
        /// The entries the records verified should have in the indexes (step 3).
        var indexSums = IndexSums()
        /// The first broken back-link (or format out of sequence) seen while the chain still held.
        var linkFinding: TamperFinding?
        /// The position of the record at which it was found.
        var linkFindingAt: UInt64 = 0
        /// The first stored node of the tree that the records do not make.
        var nodeFinding: TreeNodeFinding?
        /// The checkpoint's root is not the records' root at its size.
        var checkpointFinding: TamperFinding?
        /// The positions of the records step 7 reads (`TreeCheck.Outcome.receptions`).
        var receptions: [UInt64] = []
        /// Each stream's head among the records verified (`TreeCheck.Outcome.heads`).
        var heads: [StreamHead] = []
        /// The position after the last one verified.
        var next: UInt64 = 1
        /// The chain hash recomputed at `next - 1`.
        var previous: Digest256 = .zero
        var digestChecked = false

        /// Makes the walk the one that stopped at `position` with `finding`
        /// (a record that failed its check on the second thread): nothing it
        /// found at or after that position stands, and it verified the
        /// records before it (the head is the chain stored there, which the
        /// walk recomputed).
        mutating func stopped(at position: UInt64, by finding: TamperFinding, reader: LedgerReader) throws {
            self.finding = finding
            if linkFinding != nil, linkFindingAt >= position { linkFinding = nil }
            next = position
            previous = .zero
            if position > 1,
                let value = try reader.transaction.get(reader.tables.events, BigEndian.bytes(position - 1)),
                let stored = Digest256(bytes: Array(value.prefix(32)))
            {
                previous = stored
            }
        }
    }

    /// Recomputes the chain and the tree from the first record to the last,
    /// stopping at the first chain problem, and adds up each record's index
    /// entries (`IndexSums`) and reads the tree's stored nodes.
    ///
    /// Two threads share the work (`TreeCheck`): this one walks the
    /// `events` table, reads each header the quick way, hashes the record's
    /// leaf, adds up its index entries and reads the stored nodes; the other
    /// checks each record's chain link against the previous record's stored
    /// chain hash (the same test as against the recomputed one, as long as
    /// every link before it held), its layout and encoding, its back-link,
    /// and the tree. The first record that fails there stops the result there
    /// (`ChainWalk.stopped(at:)`), whatever this thread saw after it.
    static func walk(
        _ reader: LedgerReader, digest: LedgerDigest?, checkpoint: (size: UInt64, root: Digest256)? = nil,
        ownChecks: TreeCheck.Placement = .balanced, progress: ((UInt64) -> Void)? = nil
    ) throws -> ChainWalk {
        var walk = ChainWalk()
        let tables = reader.tables
        let transaction = reader.transaction
        // The stored nodes are read in key order beside the records: an
        // append writes a leaf's nodes in increasing level at the end of the
        // table, the very order the frontier makes them in. The tree is
        // recomputed and compared on the second thread.
        var keyFinding = false
        let (restFinding, tree) = try TreeCheck.running(checkpoint: checkpoint, ownChecks: ownChecks) { feed in
            try TreeNodes.withCursor(tables.tree, in: transaction) { nodes -> TreeNodeFinding? in
                try reader.forEachStoredRecord(from: 1) { position, value in
                    guard
                        let stored = try checkRecord(value, at: position, walk: &walk, feed: &feed, digest: digest)
                    else { return false }
                    try feed.append { level, index in
                        // After the first key finding the walk reads no further nodes.
                        guard !keyFinding else { return .unchecked }
                        let stored = try nodes.stored(level: level, index: index)
                        if case .finding = stored { keyFinding = true }
                        return stored
                    }
                    walk.previous = stored
                    walk.next += 1
                    if let progress, position % 65_536 == 0 { progress(position) }
                    return true
                }
                return walk.finding == nil && !keyFinding ? try nodes.rest() : nil
            }
        }
        walk.nodeFinding = tree.node ?? restFinding
        walk.checkpointFinding = tree.checkpoint
        walk.linkFinding = tree.link
        walk.linkFindingAt = tree.link?.position ?? 0
        walk.receptions = tree.receptions
        walk.heads = tree.heads
        if let (position, finding) = tree.stop {
            // The walk alone would have stopped there.
            try walk.stopped(at: position, by: finding, reader: reader)
        }
        return walk
    }

    /// One record of the walk, before its tree nodes: its position in
    /// sequence, its header read the quick way (handed over with the record
    /// to the other thread, `TreeCheck`), the digest at its position, and its
    /// index entries added up (`IndexSums`, compared after the walk).
    /// Returns the record's stored chain hash; nil, with `walk.finding`
    /// set, where the walk stops.
    static func checkRecord(
        _ value: RawSpan, at position: UInt64, walk: inout ChainWalk, feed: inout TreeCheck.Feed,
        digest: LedgerDigest?
    ) throws -> Digest256? {
        let expected = walk.next
        if position != expected {
            walk.finding =
                position > expected
                ? .missing(position: expected, next: position)
                : .reordered(position: position, claims: expected)
            return nil
        }
        guard value.byteCount > 32 else {
            walk.finding = .unreadable(position: position, reason: "only \(value.byteCount) bytes stored")
            return nil
        }
        // The header the quick way (the same header when the record's own
        // check passes); handed over with the record, whose chain link
        // decides first on the other thread. When the quick read fails,
        // the check says why.
        let header: RecordKeys
        do throws(RecordError) {
            header = try EventRecord.keys(ofEncoded: value, at: 32)
        } catch {
            feed.check(record: value, keys: nil)
            do throws(RecordError) {
                _ = try EventRecord.checkedHeader(ofEncoded: value, at: 32)
                walk.finding = .malformed(position: position, reason: "\(error)")
            } catch {
                walk.finding = Self.finding(error, at: position)
            }
            return nil
        }
        feed.check(record: value, keys: header)
        if header.position != position {
            walk.finding = .reordered(position: position, claims: header.position)
            return nil
        }
        // The stored chain hash: the recomputed one wherever the links hold
        // (the other thread stops the walk where not).
        let stored = Digest256(value) ?? .zero
        if let digest, digest.position == position {
            walk.digestChecked = true
            if stored != digest.head {
                walk.finding = .digestMismatch(position: position, expected: digest.head, found: stored)
                return nil
            }
        }
        walk.indexSums.add(header, at: position)
        return stored
    }

    /// What a record that fails its own check is.
    static func finding(_ error: RecordError, at position: UInt64) -> TamperFinding {
        switch error {
        case .unknownFormat(let format): .newerFormat(position: position, format: format)
        case .notDeterministic(let why): .notDeterministic(position: position, reason: why)
        case .malformed(let why): .malformed(position: position, reason: why)
        }
    }

    /// The keys of a record's two index entries, rewritten in place for
    /// each record: an event id (16 bytes) and a stream id with its version
    /// (24 bytes).
    struct IndexKeys {
        var id = [UInt8](repeating: 0, count: 16)
        var stream = [UInt8](repeating: 0, count: 24)

        mutating func set(_ header: RecordKeys) {
            withUnsafeBytes(of: header.id.uuid) { raw in for i in 0..<16 { id[i] = raw[i] } }
            withUnsafeBytes(of: header.stream.uuid) { raw in for i in 0..<16 { stream[i] = raw[i] } }
            for i in 0..<8 { stream[16 + i] = UInt8(truncatingIfNeeded: header.streamVersion >> UInt64(56 - 8 * i)) }
        }
    }

    /// Checks that the record's two index entries point back at it.
    static func entries(of header: RecordKeys, in transaction: Transaction, tables: Tables, keys: inout IndexKeys)
        throws -> IndexFinding?
    {
        let position = header.position
        let id = header.id
        keys.set(header)
        // Read where they lie: an entry is 8 bytes, a position (anything
        // else points nowhere the record is).
        let byID = try transaction.withValue(tables.eventIDs, keys.id) { BigEndian.uint64($0) } ?? nil
        if byID != position {
            if let other = byID, let value = try transaction.get(tables.events, BigEndian.bytes(other)),
                value.count > 32, let otherHeader = try? EventRecord.header(ofEncoded: value, at: 32),
                otherHeader.id == keys.id
            {
                return .duplicateID(id: id, first: min(other, position), second: max(other, position))
            }
            return .eventID(id: id, position: position, pointsAt: byID)
        }
        let byStream = try transaction.withValue(tables.streamIndex, keys.stream) { BigEndian.uint64($0) } ?? nil
        if byStream != position {
            return .streamEntry(
                stream: header.stream, version: header.streamVersion, position: position, pointsAt: byStream)
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
        for (table, name) in [(tables.eventIDs, TableName.eventIDs), (tables.streamIndex, TableName.streamIndex)] {
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
                    if name == TableName.eventIDs {
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

    /// An index key in text: a UUID, a UUID and a version, or hex.
    static func keyText(_ key: [UInt8]) -> String {
        if key.count == 16, let id = UUID(bytes: key) { return id.lowercased }
        if key.count == 24, let id = UUID(bytes: Array(key[0..<16])), let version = BigEndian.uint64(key, at: 16) {
            return "\(id.lowercased)/\(version)"
        }
        return Hex.encode(key)
    }
}
