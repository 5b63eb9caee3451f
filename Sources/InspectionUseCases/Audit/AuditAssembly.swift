import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// The assembly of an inspection's audit: its stream read without trusting
/// the views, the template and linked inspections found, the records
/// checked (proven through the Merkle tree against a checkpoint, or the
/// whole chain walked), the photo files hashed, all put into one
/// `AuditReport` for the renderings. It reads and appends nothing else.
public struct AuditAssembly {
    /// What anchors the proofs of the inspection's records.
    public enum Anchor {
        /// Today's tree, signed by the device key when the directory holds it.
        case madeNow
        /// A checkpoint handed over in a file, verified with a key the log published.
        case checkpointFile(String)
        /// One found elsewhere (the sync server's), asked for only when the proofs run.
        case given(() throws -> AuditorLedger.Anchor)
    }

    /// How the inspection's records are checked.
    public enum Verification {
        /// Not at all (`--no-verify`).
        case skipped
        /// The whole chain walked, and checked against a digest when one is given.
        case fullWalk(digest: LedgerDigest?)
        /// The inspection's records proven through the tree.
        case proofs(Anchor)
    }

    /// The moment the report stands at, and how it was asked for.
    public var asOf: LogMoment?
    public var asOfText: String?
    public var verification: Verification
    /// Whether the report carries the photo files' bytes (for HTML).
    public var embedPhotos: Bool
    /// The auditor's own copy of the device key (`--key VKEY`): the proofs'
    /// checkpoint must be signed by it, whatever key the log published.
    public var pinnedKey: NoteKey?
    /// The witness this ledger has configured, asked whether a received
    /// inspection's sender had the checkpoint it signed acknowledged.
    public var senderWitness: ReceivedProof.SenderWitness?

    public init(
        asOf: LogMoment?, asOfText: String?, verification: Verification, embedPhotos: Bool, pinnedKey: NoteKey? = nil
    ) {
        self.asOf = asOf
        self.asOfText = asOfText
        self.verification = verification
        self.embedPhotos = embedPhotos
        self.pinnedKey = pinnedKey
    }

    /// The report on `inspection`, generated at `now`; `progress` is told
    /// how far a chain walk got, `walked` when it ended.
    public func report(
        _ inspection: UUID, auditor: AuditorLedger, now: Timestamp,
        progress: @escaping (UInt64, UInt64) -> Void = { _, _ in }, walked: () -> Void = {}
    ) throws -> AuditReport {
        let entries = try auditor.history(of: inspection)
        var through: AsOf?
        if let asOf {
            guard let (position, time) = AuditReport.position(of: asOf, in: entries) else {
                let first = entries.compactMap { entry -> EventRecord? in
                    if case .record(let record) = entry { return record }
                    return nil
                }.first
                throw AuditAssemblyError.nothingAsOf(inspection, "\(asOf)", first: first)
            }
            through = AsOf(requested: asOfText ?? "\(asOf)", position: position, recordedAt: time)
        }

        // What the stream's receptions carry by reference, from this log.
        let records = entries.compactMap { entry -> EventRecord? in
            if case .record(let record) = entry { return record }
            return nil
        }
        let carried = try auditor.log.read { reader in try CarriedClosure.available(for: records, reader: reader) }
        // The template: pinned in this stream, else found by its content hash.
        let hash = AuditTimeline.templateHash(in: entries, carried: carried)
        var notes: [String] = []
        var evidence = TemplateEvidence(
            hash: hash ?? "", template: nil, pinnedAt: nil, source: "nowhere in this log")
        if let hash, let own = AuditTimeline.pinnedTemplates(in: entries)[hash] {
            evidence = TemplateEvidence(
                hash: hash, template: own.template, pinnedAt: own.position,
                source: "in this inspection's stream at position \(own.position)")
        }
        let links = try auditor.links(of: inspection, templateHash: evidence.template == nil ? hash : nil)
        notes += links.notes
        if let hash, let found = links.template {
            evidence = TemplateEvidence(
                hash: hash, template: found.template, pinnedAt: found.pinnedAt, source: found.source)
        }
        var templates: [String: Template] = [:]
        if let found = evidence.template { templates[evidence.hash] = found }
        let timeline = AuditTimeline(
            inspectionID: inspection, entries: entries, templates: templates, through: through?.position,
            carried: carried)
        let (parent, children) = try linkedInspections(of: inspection, timeline: timeline, links: links, auditor)

        var chain = try check(inspection, entries: entries, auditor, progress: progress, walked: walked)
        chain.witness = try auditor.witnessEvidence(auditor.home)

        let form = AuditReport.form(of: timeline, children: children)
        if auditor.withoutLock {
            notes.append("the ledger directory is read-only, so it was opened without LMDB's lock file")
        }
        var report = AuditReport(
            inspectionID: inspection, generatedAt: now, ledgerPath: auditor.home.path,
            chain: chain, asOf: through, timeline: timeline, form: form, template: evidence, parent: parent,
            children: children, photoFiles: photoFiles(of: timeline, auditor.photos),
            syncState: SyncState.of(form).rawValue,
            notes: notes)
        try judgeDevices(&report, timeline, auditor)
        report.chainHashes = try auditor.log.chainHashes(
            at: timeline.entries.filter { $0.carriedIn == nil }.map(\.position).filter { $0 > 0 })
        return report
    }

    /// Every device whose records the inspection holds, and what this log
    /// recorded of each: its pinned keys and any fork (`DevicePins`), and
    /// whether each carried part is proven to be its device's
    /// (`CarriedProof`).
    private func judgeDevices(_ report: inout AuditReport, _ timeline: AuditTimeline, _ auditor: AuditorLedger) throws {
        let own = try LedgerConfig.load(auditor.home).deviceID
        let receptions = timeline.entries.compactMap { entry -> (InspectionReceived, EventRecord)? in
            guard entry.carriedIn == nil, case .received(let received)? = entry.event, let record = entry.record
            else { return nil }
            return (received, record)
        }
        let pins = try auditor.log.read { reader in
            try DevicePins.read(reader, own: own, receptions: receptions)
        }
        report.forks = Self.forks(touching: timeline, pins: pins)
        if let fork = report.chain.witness?.forkRecorded { report.forks.append(Self.witnessFork(fork, own: own)) }
        report.ownDevice = own
        report.unproven = CarriedProof.unproven(in: timeline, pins: pins, own: own)
        report.notes += ReceivedProof.notes(of: timeline, witness: senderWitness, pins: pins)
    }

    /// Each fork recorded here of a device whose records the timeline
    /// holds (its own records, carried ones, or a reception's sender), worded.
    static func forks(touching timeline: AuditTimeline, pins: DevicePins) -> [String] {
        var touched: Set<UUID> = []
        for entry in timeline.entries {
            if let device = entry.record?.device { touched.insert(device) }
            if case .received(let received)? = entry.event { touched.insert(received.fromDevice) }
        }
        return pins.ordered.filter { touched.contains($0.id) }.flatMap { device in
            device.forks.map { fork in
                "device \(device.id.lowercased) has two histories: checkpoints of \(fork.first.size) records "
                    + "(root \(fork.first.root)) and \(fork.second.size) records (root \(fork.second.root)), "
                    + "both signed by its key and recorded by this ledger as device.fork_seen; its records here "
                    + "may be one history of two"
            }
        }
    }

    /// A fork of this very device a C2SP witness reported, as a problem:
    /// the witness cosigned a history of this device this ledger does not
    /// extend, so this ledger is one of two histories (the witness line of
    /// the report names both checkpoints).
    static func witnessFork(_ fork: RecordedFork, own: UUID) -> String {
        "device \(own.lowercased) (this ledger's own) has two histories: a witness cosigned one this ledger does "
            + "not extend, recorded here at \(fork.at.iso8601) (record \(fork.position); the witness line names both "
            + "checkpoints); its records here may be one history of two"
    }

    /// The parent and the re-inspections, each folded up to the report's
    /// moment: a position bounds every stream alike, a time each stream's
    /// own last event.
    private func linkedInspections(
        of inspection: UUID, timeline: AuditTimeline,
        links: (template: AuditorLedger.FoundTemplate?, children: [UUID], notes: [String]), _ auditor: AuditorLedger
    ) throws -> (parent: LinkedInspection?, children: [LinkedInspection]) {
        func linked(_ id: UUID) throws -> AuditTimeline? {
            let entries = try auditor.history(of: id)
            var cutoff: UInt64?
            if let asOf {
                guard let (position, _) = AuditReport.position(of: asOf, in: entries) else { return nil }
                cutoff = position
            }
            let records = entries.compactMap { entry -> EventRecord? in
                if case .record(let record) = entry { return record }
                return nil
            }
            let carried = try auditor.log.read { reader in
                try CarriedClosure.available(for: records, reader: reader)
            }
            return AuditTimeline(
                inspectionID: id, entries: entries, templates: timeline.templates, through: cutoff, carried: carried)
        }
        var children: [LinkedInspection] = []
        for child in links.children {
            // A child started after the report's moment did not exist yet.
            guard let childTimeline = try linked(child), childTimeline.state.status != .notStarted else { continue }
            let problem =
                childTimeline.state.parentInspectionID == inspection
                ? nil
                : "re-inspection \(child.lowercased) is listed by the views, but its own stream does not name "
                    + "this inspection as its parent"
            children.append(LinkedInspection(timeline: childTimeline, problem: problem))
        }
        var parent: LinkedInspection?
        if let parentID = timeline.state.parentInspectionID {
            let parentTimeline =
                try linked(parentID) ?? AuditTimeline(inspectionID: parentID, entries: [], through: 0)
            parent = LinkedInspection(
                timeline: parentTimeline,
                problem: parentTimeline.entries.isEmpty
                    ? "the parent \(parentID.lowercased) has no events in this log" : nil)
        }
        return (parent, children)
    }

    /// The check the verification asks for.
    private func check(
        _ inspection: UUID, entries: [StreamEntry], _ auditor: AuditorLedger,
        progress: @escaping (UInt64, UInt64) -> Void, walked: () -> Void
    ) throws -> ChainCheck {
        switch verification {
        case .skipped:
            return try auditor.uncheckedChain()
        case .fullWalk(let digest):
            let chain = try auditor.checkChain(against: digest, progress: progress)
            walked()
            return chain
        case .proofs(let choice):
            let anchor: AuditorLedger.Anchor
            switch choice {
            case .checkpointFile(let path):
                let (checkpoint, key) = try CheckpointFile.read(
                    path, log: auditor.log, home: auditor.home, pinned: pinnedKey)
                anchor = .init(checkpoint: checkpoint, kind: .file, source: path, key: key, pinned: pinnedKey != nil)
            case .given(let find):
                anchor = try find()
            case .madeNow:
                anchor = try auditor.checkpointNow(auditor.home, pinned: pinnedKey)
            }
            return try auditor.proveInspection(inspection, entries: entries, anchor: anchor)
        }
    }

    /// Every photo file the inspection captured, hashed against its record.
    private func photoFiles(of timeline: AuditTimeline, _ photos: PhotoStore) -> [String: PhotoFile] {
        var files: [String: PhotoFile] = [:]
        for (_, captured) in timeline.capturedPhotos {
            let hex = captured.photo.sha256.hex
            guard files[hex] == nil else { continue }
            let status: PhotoFileStatus =
                switch photos.check(sha256: hex) {
                case .matches: .matches
                case .missing: .missing
                case .altered(let actual): .altered(actualSHA256: actual)
                }
            let contents = embedPhotos && status != .missing ? photos.contents(sha256: hex).map { [UInt8]($0) } : nil
            files[hex] = PhotoFile(status: status, contents: contents)
        }
        return files
    }
}

/// An audit that cannot be assembled as asked.
public enum AuditAssemblyError: Error, CustomStringConvertible {
    /// The inspection had no events at or before the moment asked for.
    case nothingAsOf(UUID, String, first: EventRecord?)

    public var description: String {
        switch self {
        case .nothingAsOf(let inspection, let moment, let first):
            "inspection \(inspection.lowercased) had no events at or before \(moment)"
                + (first.map { ": its first is at position \($0.position), recorded \($0.recordedAt.iso8601)" } ?? "")
                + ". Choose a later moment."
        }
    }
}
