import ArgumentParsing
import FoundationEssentials
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
    static let trusted = OptionSpec(
        "checkpoint", valueName: "FILE",
        help: "A checkpoint the auditor already holds: the bundle carries the consistency proof from it.")
    static let cosignedFlag = FlagSpec(
        "cosigned",
        help: "Prove against the latest checkpoint the witnesses cosigned (its cosignature lines in the bundle's "
            + "checkpoint); refused when the inspection has records after it ('jqc witness sync' first).")
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

            With --cosigned nothing is signed: the bundle is proven against the latest checkpoint the \
            configured witnesses cosigned (cosigned-checkpoint, checked as 'jqc audit' checks it), and its \
            checkpoint carries their cosignature/v1 lines after the device's signature, which \
            'jqc verify --bundle FILE --witness-key VKEY' and both bundle tools check. It is refused when the \
            inspection has records after that checkpoint: 'jqc witness sync' has it cosigned first.
            """,
        group: "Auditing",
        positionals: [.inspection],
        options: [trusted],
        flags: [cosignedFlag])

    var reference: String
    var trustedFile: String?
    var cosigned: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        reference = try parsed.require(.inspection)
        trustedFile = try parsed.value(of: Self.trusted)
        cosigned = try parsed.isSet(Self.cosignedFlag)
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
        let proving = InspectionProving(
            home: invocation.home, device: config.deviceID, key: key, trustedFile: trustedFile, cosigned: cosigned)
        let proven = try proving.prove(reference, auditor: auditor)
        if cosigned, let held = proven.held {
            invocation.stderr.line("jqc: the bundle is proven against \(held.source)")
        } else if key != nil {
            try SignedCheckpoint.remember(proven.note, home: invocation.home)
        } else if let held = proven.held {
            let left = proven.recordsLeftOut
            invocation.stderr.line(
                "jqc: this copy holds no device key, so nothing was signed: the bundle is proven against \(held.source) "
                    + "(\(held.checkpoint.size) records, signed by \(KeyNaming.described(held.key)))"
                    + (left > 0
                        ? "; the inspection's \(left) later records are not in that tree and not in the bundle" : "")
                    + ". If this is the device itself, its device.key is missing: 'jqc key' says how to restore it.")
        }
        invocation.printJSON(proven.bundle)
    }
}
