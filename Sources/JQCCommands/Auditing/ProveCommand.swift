import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc prove ID`: a self-contained proof bundle for one inspection
/// (`Schemas/ledger-format.md` § Proof bundles), verified offline by
/// `Tools/verify-ledger --bundle` and `Tools/verify-bundle-go`.
struct ProveCommand: RunnableCommand {
    static let path = ["prove"]
    static let idArgument = PositionalSpec("ID", help: "The inspection (any unique prefix of its id).")
    static let trusted = OptionSpec(
        "checkpoint", valueName: "FILE",
        help: "A checkpoint the auditor already holds: the bundle carries the consistency proof from it.")
    static let spec = CommandSpec(
        "prove", abstract: "Write a proof bundle for one inspection (JSON on standard output).",
        discussion: """
            The bundle holds the inspection's records, each with its Merkle inclusion proof, a checkpoint \
            signed with this device's key, the public key and the record that publishes it (with its own \
            proof), and the photos' SHA-256 hashes. Anyone can check it offline: \
            'Tools/verify-ledger --bundle FILE'. With --checkpoint FILE (one handed out earlier, checked \
            against the key the log records) it also carries the consistency proof from that checkpoint's \
            tree to the bundle's, which 'Tools/verify-ledger --bundle FILE --checkpoint FILE' checks.

            On a copy without the device key (an auditor's, possibly read-only) nothing is signed or \
            appended: the bundle is proven against the checkpoint given with --checkpoint FILE, else the last \
            one the device signed (last-checkpoint in the ledger directory), and holds the inspection's \
            records within that tree.
            """,
        group: "Auditing",
        positionals: [idArgument],
        options: [trusted])

    var reference: String
    var trustedFile: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        reference = try parsed.require(Self.idArgument)
        trustedFile = try parsed.value(of: Self.trusted)
    }

    func run(_ invocation: Invocation) throws {
        // A copy without the device key (an auditor's) signs nothing and
        // appends nothing: it proves against a checkpoint it already holds.
        var key: NoteKey?
        do {
            key = try DeviceKeyFile.ensureReadOnly(invocation)
        } catch let error as DeviceKeyError {
            guard case .missing = error else { throw error }
        }
        let config = try invocation.config()
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let inspection = try auditor.resolveInspection(reference)
        let held = try key == nil ? Self.heldCheckpoint(trustedFile, auditor: auditor, home: invocation.home) : nil
        let trusted =
            try key == nil
            ? nil : trustedFile.map { try CheckpointFile.read($0, log: auditor.log, home: invocation.home).0 }
        let (bundle, note, left) = try auditor.log.read { reader -> (JSONValue, String, Int) in
            // The root is checked against the records before it is signed, and
            // every proof handed out against the root: a bundle whose records
            // fail their own proofs is never written.
            let (checkpoint, note) =
                try key.map { try SignedCheckpoint.today(reader, key: $0, home: invocation.home) }
                ?? Self.checkedAgainstTree(held!, reader: reader)
            let signer = key ?? held!.key
            let size = checkpoint.size
            let consistency = try trusted.map {
                try Self.consistency(from: $0, reader: reader, size: checkpoint.size, root: checkpoint.root)
            }
            // The record that published the signing key, within the signed tree.
            guard
                let published = try DeviceKeyFile.publishedRecords(reader, device: config.deviceID).last(where: {
                    $0.key == signer.verifierKey && $0.record.position <= size
                })
            else {
                throw CheckpointError.noKeyRecord(device: config.deviceID)
            }
            let all = try reader.records(inStream: inspection)
            let within = all.filter { $0.position <= size }.count
            guard within > 0 else {
                throw CheckpointError.notExtended(
                    "the checkpoint this copy holds (\(size) records) was signed before inspection "
                        + "\(inspection.lowercased) began, so none of its records can be proven with it: give a "
                        + "newer checkpoint of the device with --checkpoint FILE")
            }
            let bundle = try ProofBundle.make(
                reader, inspection: inspection, checkpoint: checkpoint, note: note, published: published,
                consistency: consistency)
            return (bundle, note, all.count - within)
        }
        if key != nil {
            try SignedCheckpoint.remember(note, home: invocation.home)
        } else if let held {
            invocation.stderr.line(
                "jqc: this copy holds no device key, so nothing was signed: the bundle is proven against \(held.source) "
                    + "(\(held.checkpoint.size) records, signed by \(KeyNaming.described(held.key)))"
                    + (left > 0
                        ? "; the inspection's \(left) later records are not in that tree and not in the bundle" : "")
                    + ". If this is the device itself, its device.key is missing: 'jqc key' says how to restore it.")
        }
        invocation.stdout.line(JSONOutput.render(bundle))
    }

    /// A checkpoint a copy without the key already holds: the one given with
    /// `--checkpoint`, else the last one the device signed (`last-checkpoint`),
    /// each verified with a key the log published.
    struct Held {
        var checkpoint: Checkpoint
        var note: String
        var key: NoteKey
        var source: String
    }

    static func heldCheckpoint(_ file: String?, auditor: AuditorLedger, home: LedgerDirectory) throws -> Held {
        let path = file ?? SignedCheckpoint.path(home)
        guard let data = FileManager.default.contents(atPath: path) else {
            if let file { throw CheckpointError.unreadable(file) }
            throw JQCError.refused(
                "this copy of the ledger holds no device key and no checkpoint signed by it (\(path) is missing), "
                    + "so there is nothing to prove the inspection against and nothing was signed. Give a checkpoint "
                    + "the device signed with --checkpoint FILE, or run 'jqc prove' on the device.")
        }
        let note = String(decoding: data, as: UTF8.self)
        let (checkpoint, key) = try CheckpointFile.verify(note, log: auditor.log, home: home)
        return Held(
            checkpoint: checkpoint, note: note, key: key,
            source: file.map { "the checkpoint in \($0)" } ?? "the last checkpoint the device signed (\(path))")
    }

    /// The held checkpoint, its root checked against the stored tree of its
    /// size (each proof handed out is checked against the root as well).
    static func checkedAgainstTree(_ held: Held, reader: LedgerReader) throws -> (Checkpoint, String) {
        let size = try reader.treeSize()
        guard held.checkpoint.size <= size else {
            throw CheckpointError.notExtended(
                "the checkpoint has \(held.checkpoint.size) records, the log only \(size): it was truncated")
        }
        guard try reader.treeRoot(size: held.checkpoint.size) == held.checkpoint.root else {
            throw CheckpointError.notExtended(
                "the log's first \(held.checkpoint.size) records are not the ones the checkpoint signed: a record at "
                    + "or before position \(held.checkpoint.size) was changed, removed or reordered (run 'jqc verify "
                    + "--full' to find which)")
        }
        return (held.checkpoint, held.note)
    }

    /// The bundle's `consistency` member: the proof that the tree of `size`
    /// records extends the trusted checkpoint's, checked here so that a log
    /// that does not extend it gets no bundle claiming it does.
    static func consistency(from trusted: Checkpoint, reader: LedgerReader, size: UInt64, root: Digest256)
        throws -> JSONValue
    {
        guard trusted.size <= size else {
            throw CheckpointError.notExtended(
                "the checkpoint has \(trusted.size) records, the log only \(size): it was truncated")
        }
        let proof =
            trusted.size == 0 || trusted.size == size
            ? [] : try reader.consistencyProof(from: trusted.size, to: size)
        guard
            trusted.size == 0
                || Merkle.verifyConsistency(
                    from: trusted.size, to: size, first: trusted.root, second: root, proof: proof)
        else {
            throw CheckpointError.notExtended(
                "a record at or before position \(trusted.size) was changed, removed or reordered")
        }
        return .object([
            "from_size": .integer(trusted.size),
            "proof": .strings(proof.map { Data($0.bytes).base64EncodedString() }),
        ])
    }
}
