import ArgumentParsing
import Foundation
import InspectionDomain
import LedgerCore
import LedgerStore

/// `jqc prove ID`: a self-contained proof bundle for one inspection
/// (`Schemas/ledger-format.md` § Proof bundles), verified offline by
/// `Tools/verify-ledger --bundle` and `Tools/verify-bundle-go`.
struct ProveCommand: RunnableCommand {
    static let path = ["prove"]
    static let idArgument = PositionalSpec("ID", help: "The inspection (any unique prefix of its id).")
    static let spec = CommandSpec(
        "prove", abstract: "Write a proof bundle for one inspection (JSON on standard output).",
        discussion: """
            The bundle holds the inspection's records, each with its Merkle inclusion proof, a checkpoint \
            signed with this device's key, the public key and the record that publishes it (with its own \
            proof), and the photos' SHA-256 hashes. Anyone can check it offline: \
            'Tools/verify-ledger --bundle FILE'.
            """,
        group: "Auditing",
        positionals: [idArgument])

    var reference: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        reference = try parsed.require(Self.idArgument)
    }

    func run(_ invocation: Invocation) throws {
        let key = try DeviceKeyFile.ensureReadOnly(invocation)
        let config = try invocation.config()
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let inspection = try auditor.resolveInspection(reference)
        let (bundle, note) = try auditor.log.read { reader -> (JSONValue, String) in
            // The root is checked against the records before it is signed, and
            // every proof handed out against the root: a bundle whose records
            // fail their own proofs is never written.
            let (checkpoint, note) = try SignedCheckpoint.today(reader, key: key, home: invocation.home)
            let size = checkpoint.size
            let hasher = SHA256Hasher()
            func entry(_ record: EventRecord) throws -> JSONValue {
                let value = try reader.encodedRecord(at: record.position)
                let proof = try reader.inclusionProof(position: record.position, size: size)
                guard
                    Merkle.verifyInclusion(
                        leafHash: hasher.digest(prefix: 0x00, value, range: value.indices), leaf: record.position - 1,
                        size: size, proof: proof, root: checkpoint.root, hasher: hasher)
                else {
                    throw TreeCheckError(
                        node: nil,
                        reason:
                            "record \(record.position)'s inclusion proof from the stored nodes does not reproduce the root: a node on its path, or the record with its chain recomputed, was changed"
                    )
                }
                return .object([
                    "position": .integer(record.position), "stream_version": .integer(record.streamVersion),
                    "type": .string(record.type), "record": .string(Data(value).base64EncodedString()),
                    "inclusion": .strings(proof.map { Data($0.bytes).base64EncodedString() }),
                ])
            }
            guard let published = try DeviceKeyFile.publishedRecord(reader, device: config.deviceID) else {
                throw CheckpointError.noKeyRecord(device: config.deviceID)
            }
            let records = try reader.records(inStream: inspection)
            var photos: [JSONValue] = []
            for record in records where record.type == InspectionEventType.photoCaptured.rawValue {
                if case .photoCaptured(let captured) = try InspectionEvent.decode(record) {
                    photos.append(
                        .object([
                            "photo_id": .string(captured.photo.photoID.lowercased),
                            "sha256": .string(captured.photo.sha256.hex), "position": .integer(record.position),
                        ]))
                }
            }
            let bundle = JSONValue.object([
                "format": .string("jqc-proof-bundle/1"), "inspection": .string(inspection.lowercased),
                "checkpoint": .string(note), "public_key": .string(published.key),
                "key_record": try entry(published.record), "records": .array(try records.map(entry)),
                "photos": .array(photos),
            ])
            return (bundle, note)
        }
        try SignedCheckpoint.remember(note, home: invocation.home)
        invocation.stdout.line(JSONOutput.render(bundle))
    }
}
