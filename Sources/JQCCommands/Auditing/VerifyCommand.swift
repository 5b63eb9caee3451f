import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionUseCases
import LedgerCore
import LedgerStore

// MARK: - verify

/// `jqc verify`: the full check of the log (the fsck), or with
/// `--checkpoint FILE`, the proof that the log extends a signed checkpoint.
struct VerifyCommand: RunnableCommand {
    static let path = ["verify"]
    static let digest = OptionSpec("digest", valueName: "DIGEST", help: "A digest from 'jqc digest' to check against.")
    static let checkpoint = OptionSpec(
        "checkpoint", valueName: "FILE", help: "A signed checkpoint from 'jqc checkpoint'.")
    static let inspection = OptionSpec(
        "inspection", valueName: "ID", help: "With --checkpoint: also prove this inspection's records.")
    static let full = FlagSpec("full", help: "Walk the whole log (also with --checkpoint).")
    static let bundle = OptionSpec(
        "bundle", valueName: "FILE",
        help: "Check a proof bundle from 'jqc prove' instead of the log (with --checkpoint TRUSTED, --key VKEY).")
    static let key = OptionSpec(
        "key", valueName: "VKEY", help: "With --bundle: the verifier key the auditor holds; any other is refused.")
    static let witnessKey = OptionSpec(
        "witness-key", valueName: "VKEY",
        help: "With --bundle: a witness's cosigner key; its cosignature/v1 on the bundle's checkpoint must verify.",
        repeatable: true)
    static let witnessQuorum = OptionSpec(
        "witness-quorum", valueName: "N",
        help: "With --witness-key: how many of those witnesses must have cosigned (default: all).")
    static let spec = CommandSpec(
        "verify", abstract: "Check the log: every hash and index entry, or that it extends a signed checkpoint.",
        discussion: """
            Without --checkpoint (or with --full), walks the whole log in one snapshot: every chain hash \
            recomputed, every record's keys, types and deterministic encoding checked, every event_ids and \
            stream_index entry checked against the record that names it, stream versions gapless, and every \
            stored Merkle node compared with the tree recomputed from the records (with --checkpoint, the \
            checkpoint's root too). With --digest, also proves the log extends a digest handed out earlier \
            (by 'jqc digest'). With --checkpoint FILE, checks the checkpoint's signature and proves with a \
            Merkle consistency proof (a few dozen hashes, no walk) that today's log extends it; with \
            --inspection ID too, also proves each of that inspection's records through the tree (inclusion \
            proofs, versions, back-links), naming the position of the first that fails. \
            Exit status 1 when anything is wrong.

            With --bundle FILE, checks a proof bundle alone, without a ledger, exactly as \
            Tools/verify-ledger --bundle and Tools/verify-bundle-go do (Schemas/ledger-format.md § Proof \
            bundles), printing the same lines: the key and the checkpoint's signature, each record's \
            inclusion proof, versions 1, 2, 3 … linked, the photos; --key VKEY pins the key (the auditor's own \
            copy), --checkpoint TRUSTED requires the bundle's tree to extend a checkpoint the auditor holds, \
            --witness-key VKEY (repeatable) requires the checkpoint to carry a valid cosignature/v1 of at least \
            --witness-quorum N of those witnesses (all by default; 'jqc prove --cosigned' makes such a bundle). \
            Exit status 0 verified, 1 not verified, 2 unreadable.
            """,
        group: "Auditing",
        options: [digest, checkpoint, inspection, bundle, key, witnessKey, witnessQuorum],
        flags: [full])

    var digest: LedgerDigest?
    var checkpointFile: String?
    var full: Bool
    var inspection: String?
    var bundleFile: String?
    var pinnedKey: String?
    var witnessKeys: [String]
    var witnessQuorum: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        digest = try parsed.digest(of: Self.digest)
        checkpointFile = try parsed.value(of: Self.checkpoint)
        inspection = try parsed.value(of: Self.inspection)
        bundleFile = try parsed.value(of: Self.bundle)
        pinnedKey = try parsed.value(of: Self.key)
        witnessKeys = try parsed.values(of: Self.witnessKey)
        witnessQuorum = try parsed.value(of: Self.witnessQuorum)
        let walk = try parsed.isSet(Self.full)
        if bundleFile != nil {
            if digest != nil || inspection != nil || walk {
                throw parsed.unexpected(
                    Self.bundle, "with --digest, --inspection or --full (a bundle is checked alone, without the log)")
            }
        } else if pinnedKey != nil {
            throw parsed.unexpected(Self.key, "without --bundle")
        } else if !witnessKeys.isEmpty || witnessQuorum != nil {
            throw parsed.unexpected(
                witnessKeys.isEmpty ? Self.witnessQuorum : Self.witnessKey,
                "without --bundle (cosignatures are checked on a bundle's checkpoint)")
        }
        if inspection != nil, checkpointFile == nil {
            throw parsed.unexpected(Self.inspection, "without --checkpoint (it proves records against a checkpoint)")
        }
        full = walk || checkpointFile == nil || digest != nil
    }

    func run(_ invocation: Invocation) throws {
        if let bundleFile { return try checkBundle(bundleFile, invocation) }
        // Read-only and without a session: an auditor verifies a copy.
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let verification = LedgerVerification(
            digest: digest, checkpointFile: checkpointFile, inspection: inspection, full: full)
        var step = try verification.anchoring(auditor, home: invocation.home)
        if full {
            if !invocation.json { for line in step.lines { invocation.stdout.line(line) } }
            step = try verification.walk(auditor.log, after: step) { done, total in
                invocation.progress("verifying \(done)/\(total)")
            }
            invocation.endProgress()
        }
        if invocation.json {
            invocation.printJSON(step.jsonValue)
        } else {
            for line in step.lines { invocation.stdout.line(line) }
        }
        if let failure = step.failure { throw failure }
    }

    /// `--bundle FILE`: the bundle tools' check, their lines and exit statuses.
    func checkBundle(_ path: String, _ invocation: Invocation) throws {
        guard !invocation.json else {
            throw JQCError.bundleCheckNotJSON
        }
        let outcome = BundleCheck.check(
            file: path, key: pinnedKey, trustedFile: checkpointFile, witnessKeys: witnessKeys,
            witnessQuorum: witnessQuorum)
        for line in outcome.lines { invocation.stdout.line(line) }
        guard outcome.status == 0 else {
            throw CommandExit(
                status: outcome.status,
                message: outcome.detail.map { "\(outcome.lines[0]) (\($0))" } ?? outcome.lines[0])
        }
    }
}
