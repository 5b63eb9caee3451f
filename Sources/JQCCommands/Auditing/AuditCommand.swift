import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import SyncWorker

// MARK: - audit

/// `jqc audit ID`: an inspection's whole history, checked.
struct AuditCommand: RunnableCommand {
    static let path = ["audit"]
    static let asOf = OptionSpec(
        "as-of", valueName: "TIME|SEQ", help: "Show the inspection as it stood at this moment.")
    static let format = OptionSpec(
        "format", valueName: "FORMAT", help: "text, json or html.", defaultDescription: "text")
    static let output = OptionSpec(
        "output", short: "o", valueName: "FILE", help: "Write the report to FILE instead of stdout.")
    static let digest = OptionSpec(
        "digest", valueName: "DIGEST",
        help: "Walk the whole chain and prove the log extends this digest from 'jqc digest'.")
    static let checkpoint = OptionSpec(
        "checkpoint", valueName: "FILE",
        help: "Anchor the proofs to this signed checkpoint from 'jqc checkpoint' (handed over earlier).")
    static let full = FlagSpec("full", help: "Walk the whole hash chain instead of proving the inspection's records.")
    static let witness = FlagSpec(
        "witness",
        help: "With C2SP witnesses ('jqc witness add'): ask each now what it last cosigned of this device and say "
            + "whether the stored cosigned checkpoint is still consistent; else anchor the proofs to the sync "
            + "server's latest checkpoint of this device (needs a login).")
    static let noVerify = FlagSpec("no-verify", help: "Skip the proofs and the chain walk.")
    static let key = OptionSpec(
        "key", valueName: "VKEY",
        help: "Pin the device's verifier key (the auditor's own copy): the proofs' checkpoint must be signed by it.")
    static let spec = CommandSpec(
        "audit",
        abstract: "Replay an inspection's whole history and check it: timeline, form, photos, links, proofs.",
        discussion: """
            States at the top whether the inspection's records are INTACT, proven through the log's Merkle \
            tree against a checkpoint (made now and signed by the device key, or --checkpoint FILE, one \
            handed over earlier: then today's log is also proven to extend it): each record is the leaf the \
            tree holds at its position, versions 1, 2, 3 … linked by their back-links, so none was changed, \
            removed, hidden or reordered. Records of other inspections are not this audit's concern; --full \
            walks the whole hash chain instead (and --digest checks a digest from 'jqc digest' on the way). \
            States whether every photo file still hashes to the SHA-256 recorded when it was taken, and \
            whether a sync server witnessed the log's history (--witness anchors the proofs to the \
            server's latest checkpoint of this device, so a log rewritten after it synced fails). Then every event of the inspection, \
            discarded drafts and sync outcomes included, with each answer changed as old → new; the pinned \
            template; re-inspection links; issues; photos.

            --as-of shows the form exactly as it stood at a moment, rebuilt from the log alone: for a \
            position, after the inspection's last event at or before it; for a TIME (as in 'jqc log'), after \
            its last event recorded at or before it; the text then shows the timeline up to that moment \
            after the form. With --format json or html, the whole report is as of that moment.

            --format json writes the report of Schemas/audit-report.schema.json (--json is the same); \
            --format html one self-contained file for a browser (inline CSS, no scripts, photos embedded). \
            The proofs cost a few dozen hashes per record (milliseconds on a million events); the full \
            walk reads the whole log (about a second per million events); --no-verify skips both and says so. Opens the ledger read-only and needs no login; a read-only copy works.

            The checkpoint's signer is named with its key id, and whether it is the key the log \
            published or the one pinned with --key VKEY (then any other key is refused, whatever the log \
            published); the report says when the log published more than one key (a rotation).

            Exit status 1 when a proof fails or the chain is not intact, a photo file is missing or altered, the \
            inspection's own records are damaged, a device whose records it holds has two histories (FORKED: \
            two checkpoints signed by its key, or a C2SP witness that cosigned another history of this device, as \
            recorded by 'jqc witness sync' or 'jqc sync'), or a part another device carried is not proven against \
            its own device's checkpoint under a key pinned here (PARTLY PROVEN; the report is printed first).
            """,
        group: "Auditing",
        positionals: [.inspection], options: [asOf, format, output, digest, checkpoint, key],
        flags: [full, witness, noVerify])

    /// The renderings of the report.
    enum Format: String, CaseIterable {
        case text, json, html
    }

    var id: String
    var asOf: LogMoment?
    var asOfText: String?
    var format: Format?
    var output: String?
    var digest: LedgerDigest?
    var verify: Bool
    var full: Bool
    var checkpointFile: String?
    var witness: Bool
    var pinnedKey: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        pinnedKey = try parsed.value(of: Self.key)
        id = try parsed.require(.inspection)
        asOf = try parsed.moment(of: Self.asOf)
        asOfText = try parsed.value(of: Self.asOf)
        if let text = try parsed.value(of: Self.format) {
            guard let format = Format(rawValue: text.lowercased()) else {
                throw parsed.invalid(Self.format, value: text, reason: "expected text, json or html")
            }
            self.format = format
        }
        output = try parsed.value(of: Self.output)
        digest = try parsed.digest(of: Self.digest)
        verify = try !parsed.isSet(Self.noVerify)
        checkpointFile = try parsed.value(of: Self.checkpoint)
        witness = try parsed.isSet(Self.witness)
        let walk = try parsed.isSet(Self.full)
        if witness, checkpointFile != nil || !verify || walk || digest != nil {
            throw parsed.unexpected(
                Self.witness,
                "with --checkpoint, --full, --digest or --no-verify (the witness's checkpoint anchors the proofs)")
        }
        // A digest is checked by the chain walk.
        full = walk || digest != nil
        if !verify, digest != nil {
            throw parsed.unexpected(
                Self.digest, "with \(Self.noVerify.spelling) (a digest is checked by the chain walk)")
        }
        if !verify, checkpointFile != nil {
            throw .unexpectedArgument(
                "--checkpoint with --no-verify (a checkpoint anchors the proofs)", context: parsed.context)
        }
        if pinnedKey != nil, !verify || full {
            throw parsed.unexpected(
                Self.key, "with --no-verify, --full or --digest (a key pins the proofs' checkpoint)")
        }
        if full, checkpointFile != nil {
            throw .unexpectedArgument(
                "--checkpoint with --full or --digest (the walk checks the chain, a checkpoint anchors the "
                    + "proofs: run 'jqc verify --checkpoint FILE --full' for both)", context: parsed.context)
        }
    }

    func run(_ invocation: Invocation) throws {
        let format = self.format ?? (invocation.json ? .json : .text)
        if let output {
            try OutputPath.requireOutside(ledger: invocation.home.path, output, what: "the audit report")
        }
        let auditor = try invocation.auditorLedger()
        defer { auditor.close() }
        let inspection = try auditor.resolveInspection(id)
        var report = try makeReport(inspection, auditor: auditor, invocation: invocation, embedPhotos: format == .html)
        // Asked before rendering, so every format carries the answers.
        let asked = witness ? try askWitnesses(auditor, invocation) : []
        report.chain.witness?.askedNow = asked

        let rendered: String =
            switch format {
            case .json: report.jsonValue.prettyPrinted()
            case .html: report.html
            case .text:
                // As of a moment, the text is the form as 'jqc show' printed it then, and how it got there.
                asOf == nil ? report.text : report.asOfText
            }
        if let output {
            try FileStore.writeAtomically(
                Data((rendered.hasSuffix("\n") ? rendered : rendered + "\n").utf8), to: output, mode: 0o644)
            invocation.stdout.line(
                "Wrote the \(format.rawValue) audit report to \(output.terminalSafe): \(report.headline)")
        } else {
            invocation.stdout.write(rendered.hasSuffix("\n") ? rendered : rendered + "\n")
        }
        if asked.contains(where: \.isFork) {
            throw JQCError.verificationFailed("a witness asked now shows a fork of this device (above)")
        }
        if let failure = report.failure { throw failure }
    }

    /// Whether `--witness` asks the C2SP witnesses (`witnesses.json`) instead of the legacy witness.
    static func cosigning(_ invocation: Invocation) throws -> Bool {
        !(try WitnessList.load(invocation.home).witnesses.isEmpty)
    }

    /// `--witness` with C2SP witnesses: each asked now what it last cosigned
    /// of this device (`CosignedCheckpointProbe`), in the report's words
    /// (the witness lines of every format).
    func askWitnesses(_ auditor: AuditorLedger, _ invocation: Invocation) throws -> [AskedWitness] {
        guard try Self.cosigning(invocation) else { return [] }
        let config = try invocation.config()
        guard
            let stored = try CosignedCheckpoint.read(home: invocation.home, log: auditor.log, device: config.deviceID),
            let data = FileManager.default.contents(atPath: invocation.home.cosignedCheckpointPath)
        else {
            invocation.stderr.line(
                "jqc: witness: nothing to ask the witnesses about: no checkpoint of this log was cosigned yet "
                    + "('jqc witness sync' submits it)")
            return []
        }
        let probe = try CosignedCheckpointProbe(list: try WitnessList.load(invocation.home))
        let answers = probe.ask(
            checkpoint: stored.checkpoint, note: String(decoding: data, as: UTF8.self),
            logSize: try auditor.log.read { try $0.treeSize() },
            recorded: try WitnessCosigning.recorded(in: auditor.log, device: config.deviceID),
            transport: try invocation.httpClient(connections: 1))
        return answers.map { Self.asked($0, stored: stored.checkpoint.size) }
    }

    /// An answer as the audit report carries it (`AskedWitness`), its line made safe for a terminal.
    static func asked(_ answer: CosignedCheckpointProbe.Answer, stored: UInt64) -> AskedWitness {
        let line = TerminalText.singleLine(CosignedCheckpointProbe.line(answer, stored: stored))
        return switch answer {
        case .stillHolds(let name, _): AskedWitness(name: name, answer: "still_holds", size: stored, line: line)
        case .advancedAsRecorded(let name, let size):
            AskedWitness(name: name, answer: "advanced_as_recorded", size: size, line: line)
        case .forked(let name, let size, _): AskedWitness(name: name, answer: "forked", size: size, line: line)
        case .notAsked(let name, _): AskedWitness(name: name, answer: "not_asked", size: nil, line: line)
        }
    }

    func makeReport(
        _ inspection: UUID, auditor: AuditorLedger, invocation: Invocation, embedPhotos: Bool
    ) throws -> AuditReport {
        // With C2SP witnesses, --witness asks them after the report (`askWitnesses`), not as an anchor.
        let legacyWitness = try witness && !Self.cosigning(invocation)
        let verification = AuditAnchoring.verification(
            verify: verify, full: full, digest: digest, checkpointFile: checkpointFile,
            witness: legacyWitness ? { try witnessAnchor(auditor, invocation) } : nil)
        var assembly = AuditAssembly(
            asOf: asOf, asOfText: asOfText, verification: verification, embedPhotos: embedPhotos,
            pinnedKey: try KeyNaming.pinned(pinnedKey))
        // The configured witness is asked about a received inspection's sender.
        if let url = WitnessSetting.configured(try invocation.config()) {
            assembly.senderWitness = ReceivedProof.SenderWitness(url: url) { name in
                let session = try invocation.serverSession(transport: try invocation.httpClient(connections: 1))
                return try CheckpointWitness.latest(session: session, name: name, base: url)
            }
        }
        return try assembly.report(
            inspection, auditor: auditor, now: invocation.clock.now(),
            progress: { done, total in invocation.progress("verifying the chain: \(done)/\(total) records") },
            walked: { invocation.endProgress() })
    }

    /// The sync server's latest checkpoint of this device, verified with a
    /// key the log published: what `--witness` anchors the proofs to.
    func witnessAnchor(_ auditor: AuditorLedger, _ invocation: Invocation) throws -> AuditorLedger.Anchor {
        let session = try invocation.serverSession(transport: try invocation.httpClient(connections: 1))
        let config = try invocation.config()
        return try AuditAnchoring.witnessed(
            auditor: auditor, home: invocation.home, device: config.deviceID,
            // The configured witness, which need not be the sync server.
            witness: WitnessSetting.configured(config) ?? session.api.baseURL, pinned: try KeyNaming.pinned(pinnedKey),
            latest: { name, base throws(APIError) in
                try CheckpointWitness.latest(session: session, name: name, base: base)
            })
    }
}

extension Invocation {
    /// The ledger opened read-only for an auditor (see `AuditorLedger`).
    func auditorLedger(views: Bool = true) throws -> AuditorLedger {
        try openingStore { try AuditorLedger.open(home, views: views) }
    }
}
