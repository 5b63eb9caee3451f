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
        let key = try DeviceKeyFile.ensureReadOnly(invocation)
        let config = try invocation.config()
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let inspection = try auditor.resolveInspection(reference)
        let trusted = try trustedFile.map { try CheckpointFile.read($0, log: auditor.log, home: invocation.home).0 }
        let (bundle, note) = try auditor.log.read { reader -> (JSONValue, String) in
            // The root is checked against the records before it is signed, and
            // every proof handed out against the root: a bundle whose records
            // fail their own proofs is never written.
            let (checkpoint, note) = try SignedCheckpoint.today(reader, key: key, home: invocation.home)
            let consistency = try trusted.map {
                try Self.consistency(from: $0, reader: reader, size: checkpoint.size, root: checkpoint.root)
            }
            guard let published = try DeviceKeyFile.publishedRecord(reader, device: config.deviceID) else {
                throw CheckpointError.noKeyRecord(device: config.deviceID)
            }
            let bundle = try ProofBundle.make(
                reader, inspection: inspection, checkpoint: checkpoint, note: note, published: published,
                consistency: consistency)
            return (bundle, note)
        }
        try SignedCheckpoint.remember(note, home: invocation.home)
        invocation.stdout.line(JSONOutput.render(bundle))
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
