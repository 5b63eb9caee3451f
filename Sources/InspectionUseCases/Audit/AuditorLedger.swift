import FoundationEssentials
import Glibc
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

// MARK: - Opening a ledger the way an auditor does

/// A ledger opened read-only, without a session or the network: the
/// device's own ledger, or a copy handed to an auditor (possibly on a
/// read-only medium, or a directory made read-only with `chmod -R a-w`;
/// see `ReadOnlyOpening`). Everything it reads goes through the store's
/// own types: it never names a table.
public final class AuditorLedger {
    public let home: LedgerDirectory
    public let log: EventLog
    /// The whole ledger (views, reference data), when its tables exist: a
    /// ledger that was only `init`ed has none yet.
    public let ledger: InspectionLedger?
    public let photos: PhotoStore
    /// Whether the lock file had to be skipped.
    public let withoutLock: Bool

    private init(home: LedgerDirectory, log: EventLog, ledger: InspectionLedger?, withoutLock: Bool) {
        self.home = home
        self.log = log
        self.ledger = ledger
        self.photos = PhotoStore(directory: home.photosPath)
        self.withoutLock = withoutLock
    }

    deinit { close() }

    public func close() {
        // The ledger owns the log when there is one.
        if let ledger { ledger.close() } else { log.close() }
    }

    /// Opens `home` read-only; with `views`, also the inspection views (for
    /// pinned templates and re-inspection links).
    public static func open(_ home: LedgerDirectory, views: Bool) throws -> AuditorLedger {
        try home.checkReadable()
        try home.requireLedger()
        if views {
            do {
                let (ledger, withoutLock) = try InspectionLedger.openForReading(
                    storePath: home.storePath, photosPath: home.photosPath)
                return AuditorLedger(home: home, log: ledger.log, ledger: ledger, withoutLock: withoutLock)
            } catch LedgerError.noLedger {
                // The log exists but its views were never made: audit from the log alone.
            }
        }
        let (log, withoutLock) = try ReadOnlyOpening.log(directory: home.storePath)
        return AuditorLedger(home: home, log: log, ledger: nil, withoutLock: withoutLock)
    }

    // MARK: - Reading streams without trusting them

    /// The inspection's stream read through the stream index (never by
    /// scanning the log), keeping every hole.
    public func history(of id: UUID) throws -> [StreamEntry] {
        try log.history(ofStream: id)
    }

    /// The inspection a person named by an id or any unique prefix of it
    /// (`InspectionResolver`, the one the recording commands use too: the
    /// log's own stream index, so discarded drafts and inspections whose
    /// views are damaged are found).
    public func resolveInspection(_ reference: String) throws -> UUID {
        try InspectionResolver.resolve(reference, in: log)
    }

    // MARK: - What lies outside the stream

    /// Where the template an inspection pinned was found.
    public struct FoundTemplate: Sendable {
        public var template: Template
        public var pinnedAt: UInt64?
        public var source: String
    }

    /// The re-inspections and the pinned template of an inspection, from the
    /// views when they are up to date (each answer is checked: a template by
    /// its content hash, a child by its own stream), else by one scan of the
    /// log. The notes say how they were found and what could not be read.
    public func links(of id: UUID, templateHash: String?) throws -> (
        template: FoundTemplate?, children: [UUID], notes: [String]
    ) {
        if let ledger, try ledger.views.staleProjections().isEmpty {
            let children = try ledger.reinspections(of: id)
            guard let templateHash else { return (nil, children, []) }
            // The views keep the template, not where it was pinned: find the pin itself.
            let viewed = try ledger.pinnedTemplate(hash: templateHash)
            let scanned = try InspectionLinks.scan(log, templateHash: templateHash, parent: nil)
            let notes = Self.notes(for: scanned.unread)
            if let pin = scanned.template {
                return (
                    FoundTemplate(
                        template: pin.template, pinnedAt: pin.position,
                        source: "by an earlier inspection at position \(pin.position); its content hashes to the "
                            + "recorded value"),
                    children, notes
                )
            }
            if let viewed, viewed.contentHash == templateHash {
                return (
                    FoundTemplate(
                        template: viewed, pinnedAt: nil,
                        source: "in the templates view only (no pin of it is readable in the log); its content "
                            + "hashes to the recorded value"),
                    children, notes
                )
            }
            return (nil, children, notes)
        }
        let scanned = try InspectionLinks.scan(log, templateHash: templateHash, parent: id)
        let template = scanned.template.map {
            FoundTemplate(
                template: $0.template, pinnedAt: $0.position,
                source: "at position \($0.position) (found by scanning the log)")
        }
        return (
            template, scanned.children,
            [
                "the views are missing or out of date, so the template and re-inspections were found by scanning "
                    + "the log"
            ] + Self.notes(for: scanned.unread)
        )
    }

    /// Records the link scan could not read: each could have been the pin or
    /// a re-inspection, so the report says so rather than skipping them.
    private static func notes(for unread: [InspectionLinks.Unread]) -> [String] {
        unread.map {
            "while looking for the template and re-inspections, \($0) (a link there would be missing from this "
                + "report; 'jqc verify' checks the record)"
        }
    }

    // MARK: - The chain

    /// Walks the whole chain (the one full scan of an audit) and states the
    /// result without the store's types, with how long it took.
    public func checkChain(against digest: LedgerDigest?, progress: @escaping (UInt64, UInt64) -> Void) throws
        -> ChainCheck
    {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        let report = try log.verify(against: digest, progress: progress)
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        guard let finding = report.finding else {
            return ChainCheck(
                result: .intact, checked: report.checked, head: report.head, digest: digest,
                verifiedThrough: report.checked, seconds: seconds)
        }
        let kind = finding.kind
        let verifiedThrough: UInt64 =
            switch finding {
            case .truncated(_, let found): found
            // Every record up to the digest's (checkpoint's) position is in doubt: one of them differs.
            case .digestMismatch, .checkpointMismatch: 0
            // The chain itself was walked to its end.
            case .indexMismatch, .treeNode, .headMap: report.checked
            default: finding.position - 1
            }
        return ChainCheck(
            result: .notIntact(.init(kind: kind, position: finding.position, message: finding.description)),
            checked: report.checked, head: report.head, digest: digest, verifiedThrough: verifiedThrough,
            seconds: seconds)
    }

    /// Proves the inspection's records through the Merkle tree against
    /// `anchor` (O(k log n) for its k records, no walk of the log): each is
    /// the leaf the tree holds at its position, versions 1, 2, 3 … linked by
    /// their back-links, the head's chain link holds, and today's tree
    /// extends the checkpoint. Records of other inspections are not read.
    public func proveInspection(_ id: UUID, entries: [StreamEntry], anchor: Anchor) throws -> ChainCheck {
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        func elapsed() -> Double {
            var end = timespec()
            clock_gettime(CLOCK_MONOTONIC, &end)
            return Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        }
        let head = try log.head()
        let checkpoint = anchor.checkpoint
        var evidence = ProofEvidence(
            treeSize: 0, root: "", proven: [], records: entries.count, anchor: anchor.kind, source: anchor.source,
            checkpointSize: checkpoint.size, checkpointRoot: Data(checkpoint.root.bytes).base64EncodedString(),
            signer: anchor.signer, consistencyHashes: 0)
        evidence.keyID = anchor.keyID
        evidence.keyPinned = anchor.pinned
        evidence.publishedKeys = try KeyNaming.publishedKeys(log, home: home)
        func failed(_ kind: ChainCheck.Finding.Kind, _ position: UInt64, _ message: String) -> ChainCheck {
            ChainCheck(
                result: .notIntact(.init(kind: kind, position: position, message: message)),
                checked: UInt64(evidence.proven.count), head: head, digest: nil, verifiedThrough: 0,
                seconds: elapsed(), method: .proofs, proof: evidence)
        }
        // A hole in the stream is named before any proof is tried: the record is not there to prove.
        for entry in entries {
            switch entry {
            case .record: continue
            case .missing(let version, let position):
                return failed(
                    .missing, position,
                    "record \(position) was removed: the stream index names it as version \(version) of this "
                        + "inspection, the log holds no record there")
            case .unreadable(let version, let position, let reason):
                return failed(
                    .unreadable, position, "record \(position) (version \(version)) cannot be read: \(reason)")
            }
        }
        if checkpoint.size > 0 {
            do {
                evidence.consistencyHashes = try CheckpointProof.extends(checkpoint, log: log).hashes
            } catch CheckpointError.notExtended(let why) {
                return failed(.notExtended, checkpoint.size, "the log does not extend the checkpoint: \(why)")
            }
        }
        let report = try log.proveStream(id, checkpoint: checkpoint)
        evidence.treeSize = report.treeSize
        evidence.root = Data(report.root.bytes).base64EncodedString()
        evidence.proven = Set(entries.prefix(report.proven).map(\.position))
        guard let finding = report.finding else {
            return ChainCheck(
                result: .intact, checked: UInt64(report.proven), head: head, digest: nil, verifiedThrough: 0,
                seconds: elapsed(), method: .proofs, proof: evidence)
        }
        if case .notInTree(let position) = finding,
            let (kind, culprit, message) = try changedLeaf(near: position, size: report.treeSize)
        {
            return failed(kind, culprit, message)
        }
        let kind: ChainCheck.Finding.Kind =
            switch finding {
            case .notInTree: .changed
            case .brokenLink: .brokenStreamLink
            case .wrongRecord: .wrongRecord
            case .notExtended: .notExtended
            }
        return failed(kind, finding.position ?? checkpoint.size, finding.description)
    }

    /// Which record a failed inclusion proof of `position` points at. The
    /// tree stores its nodes from level 1 up and recomputes a leaf from its
    /// record, so the proof also fails when the record's sibling leaf (the
    /// other record of its pair) was changed: the one whose own chain link no
    /// longer holds is named. When both links hold (the chain was recomputed
    /// after the rewrite), the stored node over the pair is the only witness
    /// of the records it covers, and it cannot tell which of the two
    /// changed: both are named, never one of them alone. When that node
    /// holds, the damage is higher up the tree, on the path.
    private func changedLeaf(near position: UInt64, size: UInt64) throws -> (
        ChainCheck.Finding.Kind, UInt64, String
    )? {
        let sibling = position % 2 == 1 ? position + 1 : position - 1
        return try log.read { reader in
            for candidate in [position, sibling] where candidate >= 1 && candidate <= size {
                do {
                    _ = try reader.record(at: candidate)
                } catch LedgerError.brokenChain, LedgerError.corruptRecord {
                    let whose =
                        candidate == position
                        ? ""
                        : " (the other leaf of record \(position)'s pair in the Merkle tree, so record \(position) "
                            + "cannot be proven either)"
                    return (
                        .changed, candidate,
                        "record \(candidate) is not the record the Merkle tree holds at its position: it was changed "
                            + "after it was written\(whose)"
                    )
                }
            }
            switch try reader.pairNodeHolds(position, size: size) {
            case false?:
                let (first, second) = (min(position, sibling), max(position, sibling))
                return (
                    .changed, position,
                    "record \(first) or record \(second) is not what the Merkle tree holds: the two are the leaves of "
                        + "its node merkle[1/\((first - 1) / 2)], and one of them was changed after it was written, "
                        + "with the hash chain recomputed over it (or the node itself was changed); the tree cannot "
                        + "tell which of the two. An earlier checkpoint or digest ('jqc verify --checkpoint FILE "
                        + "--full') shows how far the log is unchanged"
                )
            case true?:
                return (
                    .treeNodeMismatch, position,
                    "record \(position) and the other record of its pair hash to the node the Merkle tree holds over "
                        + "them, but its inclusion proof fails higher up: a stored node of the tree on its path was "
                        + "changed ('jqc verify --full' names it)"
                )
            case nil:
                return nil
            }
        }
    }

    /// Whether a sync server witnessed the log's history, as the device's
    /// stream records it (`sync.checkpoint_witnessed`).
    public func witnessEvidence(_ home: LedgerDirectory) throws -> WitnessEvidence {
        let config = try LedgerConfig.load(home)
        let recorded = try CheckpointWitness.recorded(in: log, device: config.deviceID)
        let acknowledged = recorded.last { $0.outcome == .acknowledged }
        var since: String?
        if recorded.isEmpty, WitnessSetting.configured(config) == nil {
            since = "no witness is configured; add one with 'jqc witness add URL --key VKEY'"
        }
        if let last = recorded.last, last.outcome != .acknowledged {
            since =
                last.outcome == .refused
                ? "the server REFUSED the checkpoint sent at \(last.recordedAt.iso8601): \(last.message ?? "")"
                : "the last sync found \(last.message ?? "the server does not witness checkpoints")"
        }
        var evidence = WitnessEvidence(
            acknowledgedSize: acknowledged?.size, acknowledgedAt: acknowledged?.recordedAt,
            server: acknowledged?.server ?? recorded.last?.server, lastOutcome: since)
        // C2SP witnesses (witnesses.json): offline, from the stored cosigned checkpoint.
        let list = try WitnessList.load(home)
        if let cosigned = try CosignedCheckpoint.read(home: home, log: log, device: config.deviceID) {
            evidence.cosigning = cosigned.line
            evidence.quorumMet = cosigned.quorumMet && cosigned.rewritten == nil
        } else if let missing = CosignedCheckpoint.missingLine(
            configured: list.witnesses.count, quorum: list.effectiveQuorum)
        {
            evidence.cosigning = missing
            evidence.quorumMet = false
        }
        // A fork a witness reported stays said, whatever was cosigned before or since, and with the
        // witness removed since: the record is in the log, and the verdict is FORKED (`AuditAssembly`).
        if let fork = WitnessCosigning.lastFork(in: recorded) {
            evidence.fork = "witness: " + WitnessCosigning.forkLine(fork)
            evidence.forkRecorded = .init(at: fork.recordedAt, position: fork.position)
        }
        return evidence
    }

    /// The chain left unchecked (`--no-verify`), with the stored head.
    public func uncheckedChain() throws -> ChainCheck {
        ChainCheck(result: .skipped, checked: 0, head: try log.head(), digest: nil, verifiedThrough: 0, seconds: nil)
    }
}
