import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc checkpoint`: the log's signed checkpoint (C2SP tlog-checkpoint), or
/// with `--verify FILE`, the check of one handed out earlier.
struct CheckpointCommand: RunnableCommand {
    static let path = ["checkpoint"]
    static let verify = OptionSpec("verify", valueName: "FILE", help: "A checkpoint to check against this log.")
    static let key = OptionSpec(
        "key", valueName: "VKEY",
        help: "With --verify: the verifier key the auditor holds; a checkpoint signed by any other is refused.")
    static let cosigned = FlagSpec(
        "cosigned",
        help: "Print the latest checkpoint the witnesses cosigned (cosigned-checkpoint): the device-signed note and "
            + "each verified cosignature line.")
    static let spec = CommandSpec(
        "checkpoint", abstract: "Print the log's signed checkpoint (tree size and Merkle root), or check one.",
        discussion: """
            The checkpoint is a C2SP tlog-checkpoint signed with this device's Ed25519 key \
            (device.key in the ledger directory; made on first use and its public key recorded in the log). \
            Keep it: 'jqc verify --checkpoint FILE' later proves the log still extends it. \
            Before signing, the stored tree is checked against the records (from the last checkpoint signed \
            here, kept in last-checkpoint in the ledger directory); a damaged tree is refused, nothing signed. \
            With --verify, checks the signature against the key the log records and that the root of the \
            log's first records, recomputed from the records themselves, is the checkpoint's; the signer is \
            named with its key id, pinned (--key VKEY: only that key is accepted, whatever the log \
            published) or the key the log published, and whether the log published more than one. Exit \
            status 1 when it does not.
            """,
        group: "Auditing",
        options: [verify, key], flags: [cosigned])

    var verifyFile: String?
    var pinnedKey: String?
    var printCosigned: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        verifyFile = try parsed.value(of: Self.verify)
        pinnedKey = try parsed.value(of: Self.key)
        printCosigned = try parsed.isSet(Self.cosigned)
        if printCosigned, verifyFile != nil {
            throw parsed.unexpected(Self.verify, "with --cosigned (it prints the cosigned checkpoint)")
        }
        if pinnedKey != nil, verifyFile == nil {
            throw parsed.unexpected(Self.key, "without --verify (it pins the key a checkpoint is checked with)")
        }
    }

    func run(_ invocation: Invocation) throws {
        if printCosigned { return try Self.showCosigned(invocation) }
        if let verifyFile {
            let auditor = try invocation.auditorLedger(views: false)
            defer { auditor.close() }
            let pinned = try KeyNaming.pinned(pinnedKey)
            let (checkpoint, key) = try CheckpointFile.read(
                verifyFile, log: auditor.log, home: invocation.home, pinned: pinned)
            let publishedKeys = try KeyNaming.publishedKeys(auditor.log, home: invocation.home)
            let root = try auditor.log.read { reader -> Digest256 in
                guard checkpoint.size <= (try reader.treeSize()) else {
                    throw CheckpointError.notExtended(
                        "the checkpoint has \(checkpoint.size) records, the log only \(try reader.treeSize()): it was truncated"
                    )
                }
                // From the records themselves, not the stored nodes: a record
                // rewritten under an unchanged tree fails here.
                return try reader.recomputedRoot(size: checkpoint.size)
            }
            guard root == checkpoint.root else {
                throw CheckpointError.notExtended(
                    "the log's first \(checkpoint.size) records have the root \(Data(root.bytes).base64EncodedString()), the checkpoint says \(Data(checkpoint.root.bytes).base64EncodedString()): they were changed"
                )
            }
            if invocation.json {
                invocation.printJSON(
                    .object([
                        "verified": .bool(true), "origin": .string(checkpoint.origin),
                        "size": .integer(checkpoint.size),
                        "root": .string(Data(checkpoint.root.bytes).base64EncodedString()),
                        "key": .string(key.verifierKey), "key_id": .string(Hex.encode(key.keyID)),
                        "key_pinned": .bool(pinned != nil), "published_keys": .integer(publishedKeys),
                    ]))
            } else {
                let signer = KeyNaming.signer(key, pinned: pinned != nil, publishedKeys: publishedKeys)
                invocation.stdout.line(
                    "checkpoint verified: signed by \(TerminalText.singleLine(signer)), the log's first \(checkpoint.size) records have its root"
                )
            }
            return
        }
        let key = try DeviceKeyFile.ensureReadOnly(invocation)
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let (checkpoint, note) = try auditor.log.read { reader in
            try SignedCheckpoint.today(reader, key: key, home: invocation.home)
        }
        try SignedCheckpoint.remember(note, home: invocation.home)
        if invocation.json {
            invocation.printJSON(
                .object([
                    "checkpoint": .string(note), "origin": .string(checkpoint.origin),
                    "size": .integer(checkpoint.size),
                    "root": .string(Data(checkpoint.root.bytes).base64EncodedString()),
                    "key": .string(key.verifierKey),
                ]))
        } else {
            invocation.stdout.write(note)
        }
    }

    /// `--cosigned`: the stored cosigned checkpoint, checked offline first
    /// (`CosignedCheckpoint`: the device's signature, the log's root, each
    /// cosignature against the configured witnesses) and printed as stored.
    static func showCosigned(_ invocation: Invocation) throws {
        let config = try invocation.config()
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        guard
            let stored = try CosignedCheckpoint.read(home: invocation.home, log: auditor.log, device: config.deviceID),
            let data = FileManager.default.contents(atPath: invocation.home.cosignedCheckpointPath)
        else {
            throw JQCError.notFound(
                kind: "cosigned checkpoint", reference: invocation.home.cosignedCheckpointPath,
                hint: "no witness has cosigned a checkpoint of this log yet: add one with 'jqc witness add URL --key "
                    + "VKEY', then 'jqc witness sync'")
        }
        let note = String(decoding: data, as: UTF8.self)
        if invocation.json {
            invocation.printJSON(
                .object([
                    "checkpoint": .string(note), "size": .integer(stored.checkpoint.size),
                    "root": .string(Data(stored.checkpoint.root.bytes).base64EncodedString()),
                    "cosigned_by": .array(stored.cosigners.map { .string($0.name) }),
                    "quorum": .integer(Int64(stored.quorum)), "quorum_met": .bool(stored.quorumMet),
                    "line": .string(stored.line),
                ]))
        } else {
            invocation.stdout.write(note)
        }
    }
}
