import Dispatch
import LMDB
import LedgerCore
import Synchronization

/// The second half of `verify --full`, on a thread of its own beside the walk:
/// each record's own check (every key, type and byte of its encoding,
/// `EventRecord.checkedLayout`), the tree, and the positions of the
/// version-2 receptions (told from the type the check reads anyway), which
/// step 7 then visits alone instead of walking the log again.
///
/// The walk (one read transaction, the calling thread) hashes every record
/// (its leaf, handed over with it) and reads the `merkle` table in key order: which nodes the records make
/// depends only on their number, so it checks each node's key itself and
/// hands over the stored hashes. This thread links each leaf into the chain,
/// recomputes the tree from the leaves (a frontier: one node hash per
/// record), compares each node with the stored hash, and the root at the
/// checkpoint's size with the checkpoint's. It touches no LMDB state: one
/// snapshot, one transaction, as before; two cores share the hashing.
///
/// The walk hands over each record whose chain link holds (lent where it
/// lies in the read transaction's map, which outlives the thread: `running`
/// waits for it) and reads its header the quick way. This thread stops at
/// the first record that fails its check; the walk then keeps only what it
/// found before that position (`ChainWalk.stopped(at:)`). So the result is
/// the one the walk made alone: the first record that fails, the first node
/// finding in the order the records make the nodes (the walk's key findings
/// travel in that order too), and the checkpoint's root with the node
/// finding seen by then.
final class TreeCheck: Sendable {
    /// What the walk read for a node the records make.
    enum StoredNode: Sendable {
        /// The stored hash, to compare with the recomputed one.
        case hash(Digest256)
        /// The node's key check failed (missing, extra, a value not 32 bytes).
        case finding(TreeNodeFinding)
        /// Nothing to compare: no table (a read-only format-1 store), or a
        /// finding came before it.
        case unchecked
    }

    /// A run of records, their headers as the walk read them (nil: the
    /// quick read failed, and the walk stopped there), their leaf hashes
    /// (the walk's thread hashes each record: the two threads then share the
    /// hashing) and the nodes they make, in order; the last record may be
    /// one the walk stopped at after handing it over (`complete` counts
    /// those it went past).
    struct Batch: Sendable {
        /// Each record's bytes where the walk's read transaction lends them
        /// (`LentValue`): they do not change while the transaction is open,
        /// which `running` outlasts (it waits for the thread on every path
        /// out).
        var records: [LentValue] = []
        var keys: [RecordKeys?] = []
        var leaves: [Digest256] = []
        var nodes: [StoredNode] = []
        var complete = 0
        /// Each record's own check, made by the walk when it started this
        /// batch with the thread behind (`Feed.checksOwn`); empty when the
        /// thread makes them.
        var own: [OwnCheck] = []

        init(checkingOwn: Bool = false) {
            records.reserveCapacity(TreeCheck.batchSize + 1)
            keys.reserveCapacity(TreeCheck.batchSize + 1)
            leaves.reserveCapacity(TreeCheck.batchSize + 1)
            nodes.reserveCapacity(TreeCheck.batchSize)
            if checkingOwn { own.reserveCapacity(TreeCheck.batchSize + 1) }
        }
    }

    /// Which thread makes the records' own checks: balanced batch by batch
    /// (`Feed.checksOwn`), or always one of them (for the tests, which hold
    /// each to the same findings).
    enum Placement: Sendable {
        case balanced, walk, thread
    }

    /// A record's own check (every key, type and byte of its encoding), the
    /// same whichever thread makes it; it counts only once the record's
    /// chain link holds, which this thread checks first.
    enum OwnCheck: Sendable {
        /// Well formed; whether it references carried records (step 7).
        case wellFormed(referencesCarried: Bool)
        case failed(RecordError)

        init(_ bytes: RawSpan) {
            do throws(RecordError) {
                let layout = try EventRecord.checkedLayout(ofEncoded: bytes, at: 32)
                self = .wellFormed(referencesCarried: EventLog.referencesCarried(layout, in: bytes))
            } catch {
                self = .failed(error)
            }
        }
    }

    /// The first node the records do not make as stored, and the
    /// checkpoint's root, if it is not the records' root at its size.
    struct Outcome: Sendable {
        /// The first record whose chain link or own check failed, and what
        /// the finding is.
        var stop: (position: UInt64, finding: TamperFinding)?
        /// The first broken back-link or format out of sequence, before `stop`.
        var link: TamperFinding?
        var node: TreeNodeFinding?
        var checkpoint: TamperFinding?
        /// The positions of the records that reference carried records by
        /// leaf hash (`EventLog.referencesCarried`), in log order, among
        /// those checked before any failure.
        var receptions: [UInt64] = []
        /// Each stream's last version and leaf among the records checked
        /// (step 8 compares the map they make with the `heads` table).
        var heads: [StreamHead] = []
    }

    private struct State: Sendable {
        var queue: [Batch] = []
        var outcome = Outcome()
    }

    static let batchSize = 4096
    private static let depth = 4

    private let checkpoint: (size: UInt64, root: Digest256)?
    private let state = Mutex(State())
    /// Made at 0 and signalled `depth` times (libdispatch traps when a
    /// semaphore ends below the value it was made with).
    private let slots = DispatchSemaphore(value: 0)
    private let ready = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)

    private init(checkpoint: (size: UInt64, root: Digest256)?) {
        self.checkpoint = checkpoint
        for _ in 0..<Self.depth { slots.signal() }
    }

    /// Starts the thread and lends `body` the way to feed it; waits for the
    /// thread's end on every path out (so no batch outlives the call) and
    /// answers its outcome beside `body`'s result.
    static func running<T>(
        checkpoint: (size: UInt64, root: Digest256)?, ownChecks: Placement = .balanced,
        _ body: (inout Feed) throws -> T
    ) rethrows -> (T, Outcome) {
        let check = TreeCheck(checkpoint: checkpoint)
        DispatchQueue.global().async { [check] in
            check.consume()
            check.ended.signal()
        }
        var feed = Feed(check: check, ownChecks: ownChecks)
        let result: T
        do {
            result = try body(&feed)
        } catch {
            feed.finish()
            throw error
        }
        return (result, feed.finish())
    }

    /// The walk's side: leaves and stored nodes go in, in log order.
    struct Feed {
        fileprivate let check: TreeCheck
        fileprivate var batch = Batch()
        /// Whether the walk makes the records' own checks of this batch: it
        /// does when it starts a batch with two or more waiting for the
        /// thread (which then has more to do than the walk), and leaves them
        /// to the thread otherwise, so the two balance batch by batch.
        private var checksOwn: Bool
        private let placement: Placement
        /// The walk's own hasher, for the leaves.
        private let chain = HashChain()
        /// Leaves handed over so far.
        private(set) var size: UInt64 = 0
        private var finished: Outcome?

        fileprivate init(check: TreeCheck, ownChecks: Placement) {
            self.check = check
            placement = ownChecks
            checksOwn = ownChecks == .walk
            batch = Batch(checkingOwn: checksOwn)
        }

        /// Hands over a record (its stored value: chain hash, then the
        /// record) with its header and its leaf hash, for its chain link and
        /// its own check; `append(stored:)` follows unless the walk stops at
        /// it. Answers the leaf.
        @discardableResult
        mutating func check(record value: RawSpan, keys: RecordKeys?) -> Digest256 {
            let leaf = chain.leaf(ofRecordIn: value, range: 32..<value.byteCount)
            batch.records.append(LentValue(lending: value))
            batch.keys.append(keys)
            batch.leaves.append(leaf)
            if checksOwn { batch.own.append(OwnCheck(value)) }
            return leaf
        }

        /// The nodes a leaf appended to a tree of `size` leaves makes, in the
        /// order the frontier makes them: (level, index) for level 1, 2, …,
        /// one per trailing one bit of `size`.
        static func nodes(madeAt size: UInt64) -> Int { (size + 1).trailingZeroBitCount }

        /// Goes past the record last handed over, with the nodes its leaf
        /// makes (`Feed.nodes(madeAt:)` of them, read by `stored(level, index)`).
        mutating func append(stored: (_ level: Int, _ index: UInt64) throws -> StoredNode) rethrows {
            let made = Self.nodes(madeAt: size)
            if made > 0 {
                for level in 1...made { batch.nodes.append(try stored(level, size >> UInt64(level))) }
            }
            batch.complete += 1
            size += 1
            if batch.complete == TreeCheck.batchSize {
                check.push(batch)
                checksOwn =
                    switch placement {
                    case .balanced: check.waiting >= 2
                    case .walk: true
                    case .thread: false
                    }
                batch = Batch(checkingOwn: checksOwn)
            }
        }

        /// Hands over the rest and waits for the thread's outcome.
        @discardableResult
        mutating func finish() -> Outcome {
            if let finished { return finished }
            if !batch.records.isEmpty { check.push(batch) }
            batch = Batch()
            let outcome = check.end()
            finished = outcome
            return outcome
        }
    }

    /// The batches handed over that the thread has not taken yet.
    private var waiting: Int { state.withLock { $0.queue.count } }

    private func push(_ batch: Batch) {
        slots.wait()
        state.withLock { $0.queue.append(batch) }
        ready.signal()
    }

    /// The last signal: after every batch's, so the thread finds the queue
    /// empty only when the walk has finished.
    private func end() -> Outcome {
        ready.signal()
        ended.wait()
        return state.withLock { $0.outcome }
    }

    /// The thread: takes batches in order until the walk has finished.
    private func consume() {
        var run = RecordRun(checkpoint: checkpoint)
        while true {
            ready.wait()
            let next: Batch? = state.withLock { state in
                state.queue.isEmpty ? nil : state.queue.removeFirst()
            }
            guard let batch = next else { break }
            defer { slots.signal() }
            // After a record fails, the rest is only drained.
            guard run.outcome.stop == nil else { continue }
            run.check(batch)
        }
        run.outcome.heads = run.links.heads
        state.withLock { [outcome = run.outcome] in $0.outcome = outcome }
    }

    /// What the thread carries from record to record: the chain, the
    /// frontier of the tree, the back-links, and what it found so far.
    private struct RecordRun {
        let hasher = SHA256Hasher()
        let chain: HashChain
        let checkpoint: (size: UInt64, root: Digest256)?
        var frontier = MerkleFrontier(size: 0, subtrees: [])
        var outcome = Outcome()
        var links = StreamLinks()
        /// The previous record's stored chain hash: a link is checked
        /// against it, which equals the recomputed one while every link holds.
        var previous = Digest256.zero

        init(checkpoint: (size: UInt64, root: Digest256)?) {
            chain = HashChain(hasher: hasher)
            self.checkpoint = checkpoint
            if let checkpoint, checkpoint.size == 0, checkpoint.root != Merkle.emptyRoot(hasher) {
                outcome.checkpoint = .checkpointMismatch(size: 0, node: nil)
            }
        }

        /// Checks a batch's records in order, up to the first that fails.
        mutating func check(_ batch: Batch) {
            var node = 0
            for (i, record) in batch.records.enumerated() {
                let position = frontier.size + 1
                let leaf = batch.leaves[i]
                let own = i < batch.own.count ? batch.own[i] : nil
                let intact = record.withSpan { bytes in
                    checkOwn(bytes, leaf: leaf, at: position, claims: batch.keys[i]?.position, made: own)
                }
                guard intact else { break }
                // The walk stopped at this one (its own finding stands).
                guard i < batch.complete, let keys = batch.keys[i] else { break }
                if outcome.link == nil {
                    outcome.link = links.check(keys, leaf: leaf)
                } else {
                    links.note(keys, leaf: leaf)
                }
                append(leaf, nodes: batch.nodes, next: &node)
            }
        }

        /// The record's chain link, then its own layout and encoding (`made`
        /// by the walk, or made here); false with `outcome.stop` set when
        /// one fails.
        mutating func checkOwn(
            _ bytes: RawSpan, leaf: Digest256, at position: UInt64, claims: UInt64?, made: OwnCheck?
        ) -> Bool {
            let computed = chain.link(previous: previous, leaf: leaf)
            if !computed.isStored(in: bytes) {
                // The link decides: whatever else is wrong with the
                // bytes, they are not the ones written there.
                let finding: TamperFinding =
                    if let claims, claims != position {
                        .reordered(position: position, claims: claims)
                    } else {
                        .changed(position: position)
                    }
                outcome.stop = (position, finding)
                return false
            }
            switch made ?? OwnCheck(bytes) {
            case .wellFormed(let referencesCarried):
                if referencesCarried { outcome.receptions.append(position) }
            case .failed(let error):
                outcome.stop = (position, EventLog.finding(error, at: position))
                return false
            }
            previous = computed
            return true
        }

        /// Appends the leaf to the tree, comparing each node it makes with
        /// the stored one (`nodes[next]` on), and the root at the
        /// checkpoint's size with the checkpoint's.
        mutating func append(_ leaf: Digest256, nodes: [StoredNode], next node: inout Int) {
            var found = outcome.node
            frontier.append(leaf: leaf, hasher: hasher) { level, index, hash in
                let stored = nodes[node]
                node += 1
                guard found == nil else { return }
                switch stored {
                case .hash(let value): if value != hash { found = .mismatch(level: level, index: index) }
                case .finding(let finding): found = finding
                case .unchecked: break
                }
            }
            outcome.node = found
            if let checkpoint, checkpoint.size == frontier.size, frontier.root(hasher) != checkpoint.root {
                outcome.checkpoint = .checkpointMismatch(size: frontier.size, node: outcome.node)
            }
        }
    }
}

/// What the back-link check remembers: each stream's last version and its
/// leaf hash, and the first format-2 record.
struct StreamLinks {
    private var streams: [StreamKey: (version: UInt64, leaf: Digest256)] = [:]
    private var firstFormat2: UInt64?

    /// Each stream's last version and leaf: its head in the map of stream heads.
    var heads: [StreamHead] {
        streams.map { StreamHead(stream: $0.key.bytes, version: $0.value.version, leaf: $0.value.leaf) }
    }

    /// Keeps the record's stream version and leaf for the next one.
    mutating func note(_ header: RecordKeys, leaf: Digest256) {
        if header.format >= 2 { firstFormat2 = firstFormat2 ?? header.position }
        streams[StreamKey(header.stream)] = (header.streamVersion, leaf)
    }

    /// The record's back-link (key 13) and its format against the ones
    /// before it; then `note`.
    mutating func check(_ header: RecordKeys, leaf: Digest256) -> TamperFinding? {
        let position = header.position
        let key = StreamKey(header.stream)
        let last = streams[key]
        streams[key] = (header.streamVersion, leaf)
        if header.format >= 2 {
            firstFormat2 = firstFormat2 ?? position
        } else if let first = firstFormat2 {
            return .formatSequence(position: position, first: first)
        }
        guard header.format >= 2 else { return nil }
        let linked: Bool
        if header.streamVersion == 1 {
            linked = header.previousInStream == nil
        } else if let last, last.version == header.streamVersion - 1 {
            // Compared as digests: no array is made per record.
            linked = header.previousInStream == last.leaf
        } else {
            // A gap or reordering, reported by the stream check.
            linked = true
        }
        return linked
            ? nil : .brokenStreamLink(position: position, stream: header.stream, version: header.streamVersion)
    }
}
