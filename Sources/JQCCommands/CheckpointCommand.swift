import ArgumentParsing
import Foundation
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
    static let spec = CommandSpec(
        "checkpoint", abstract: "Print the log's signed checkpoint (tree size and Merkle root), or check one.",
        discussion: """
            The checkpoint is a C2SP tlog-checkpoint signed with this device's Ed25519 key \
            (device.key in the ledger directory; made on first use and its public key recorded in the log). \
            Keep it: 'jqc verify --checkpoint FILE' later proves the log still extends it. \
            Before signing, the stored tree is checked against the records (from the last checkpoint signed \
            here, kept in last-checkpoint in the ledger directory); a damaged tree is refused, nothing signed. \
            With --verify, checks the signature against the key the log records and that the root of the \
            log's first records, recomputed from the records themselves, is the checkpoint's. Exit status 1 \
            when it does not.
            """,
        group: "Auditing",
        options: [verify])

    var verifyFile: String?

    init(_ parsed: ParsedCommand) throws(UsageError) {
        verifyFile = try parsed.value(of: Self.verify)
    }

    func run(_ invocation: Invocation) throws {
        if let verifyFile {
            let auditor = try invocation.auditorLedger(views: false)
            defer { auditor.close() }
            let (checkpoint, key) = try CheckpointFile.read(verifyFile, log: auditor.log, home: invocation.home)
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
                invocation.stdout.line(
                    JSONOutput.render(
                        .object([
                            "verified": .bool(true), "origin": .string(checkpoint.origin),
                            "size": .integer(checkpoint.size),
                            "root": .string(Data(checkpoint.root.bytes).base64EncodedString()),
                            "key": .string(key.verifierKey),
                        ])))
            } else {
                invocation.stdout.line(
                    "checkpoint verified: signed by \(TerminalText.singleLine(key.name)), the log's first \(checkpoint.size) records have its root"
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
            invocation.stdout.line(
                JSONOutput.render(
                    .object([
                        "checkpoint": .string(note), "origin": .string(checkpoint.origin),
                        "size": .integer(checkpoint.size),
                        "root": .string(Data(checkpoint.root.bytes).base64EncodedString()),
                        "key": .string(key.verifierKey),
                    ])))
        } else {
            invocation.stdout.write(note)
        }
    }
}

/// Reading a checkpoint handed over in a file, verified with the key the log records.
enum CheckpointFile {
    static func read(_ path: String, log: EventLog, home: LedgerDirectory) throws -> (Checkpoint, NoteKey) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CheckpointError.unreadable(path)
        }
        return try verify(String(decoding: data, as: UTF8.self), log: log, home: home)
    }

    /// A signed checkpoint note verified with a key the log published (a
    /// file's contents, or a witness's answer).
    static func verify(_ text: String, log: EventLog, home: LedgerDirectory) throws -> (Checkpoint, NoteKey) {
        let config = try LedgerConfig.load(home)
        // Any key the device published counts, if it was published within
        // the tree the checkpoint signs (a key published later cannot sign
        // for an earlier log): so a replaced key file keeps old checkpoints valid.
        let published = try log.read { try DeviceKeyFile.publishedRecords($0, device: config.deviceID) }
        guard !published.isEmpty else { throw CheckpointError.noKeyRecord(device: config.deviceID) }
        var firstError: NoteError?
        for (verifierKey, record) in published.reversed() {
            let key = try NoteKey(parsing: verifierKey)
            do {
                let checkpoint = try Checkpoint(verifying: text, key: key)
                guard record.position <= checkpoint.size else {
                    throw NoteError.unverified(
                        "its key was published at position \(record.position), after the \(checkpoint.size) records it signs"
                    )
                }
                return (checkpoint, key)
            } catch let error as NoteError {
                firstError = firstError ?? error
            }
        }
        throw firstError!
    }
}

/// A checkpoint that this log does not extend, or cannot be read.
enum CheckpointError: Error, CustomStringConvertible {
    case unreadable(String)
    case notExtended(String)
    /// The log records no key to check a checkpoint with. Signing now would
    /// publish a key and sign this very log, whatever was done to it.
    case noKeyRecord(device: UUID)

    var description: String {
        switch self {
        case .unreadable(let path): "cannot read the checkpoint file \(path)"
        case .notExtended(let why): "NOT INTACT: the log does not extend the checkpoint: \(why)"
        case .noKeyRecord(let device):
            "NOT VERIFIED: the log records no signing key for device \(device.lowercased), so no checkpoint can be checked "
                + "against it: if this device signed checkpoints before, its key record was removed from the log. "
                + "Do not sign this log ('jqc checkpoint' would sign whatever it now holds); run 'jqc verify --full' "
                + "and check it against a checkpoint or digest kept elsewhere."
        }
    }
}
