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
    static let spec = CommandSpec(
        "prove", abstract: "Write a proof bundle for one inspection (JSON on standard output).",
        discussion: """
            The bundle holds the inspection's records, each with its Merkle inclusion proof, a checkpoint \
            signed with this device's key, the public key and the record that publishes it (with its own \
            proof), and the photos' SHA-256 hashes. Anyone can check it offline: \
            'Tools/verify-ledger --bundle FILE'.
            """,
        group: "Auditing",
        positionals: [PositionalSpec("ID", help: "The inspection (any unique prefix of its id).")])

    var reference: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        reference = try parsed.require("ID")
    }

    func run(_ invocation: Invocation) throws {
        let key = try DeviceKeyFile.ensureReadOnly(invocation)
        let config = try invocation.config()
        let auditor = try invocation.auditorLedger(views: false)
        defer { auditor.close() }
        let inspection = try auditor.resolveInspection(reference)
        let bundle = try auditor.log.read { reader -> [String: Any] in
            let size = try reader.treeSize()
            let root = try reader.treeRoot(size: size)
            let note = try Checkpoint(origin: key.name, size: size, root: root).signed(by: key)
            func entry(_ record: EventRecord) throws -> [String: Any] {
                let value = try reader.encodedRecord(at: record.position)
                return [
                    "position": record.position, "stream_version": record.streamVersion, "type": record.type,
                    "record": Data(value).base64EncodedString(),
                    "inclusion": try reader.inclusionProof(position: record.position, size: size).map {
                        Data($0.bytes).base64EncodedString()
                    },
                ]
            }
            guard let published = try DeviceKeyFile.publishedRecord(reader, device: config.deviceID) else {
                throw DeviceKeyError.notPublished(device: config.deviceID)
            }
            let records = try reader.records(inStream: inspection)
            var photos: [[String: Any]] = []
            for record in records where record.type == InspectionEventType.photoCaptured.rawValue {
                if case .photoCaptured(let captured) = try InspectionEvent.decode(record) {
                    photos.append([
                        "photo_id": captured.photo.photoID.lowercased, "sha256": captured.photo.sha256.hex,
                        "position": record.position,
                    ])
                }
            }
            return [
                "format": "jqc-proof-bundle/1", "inspection": inspection.lowercased, "checkpoint": note,
                "public_key": published.key, "key_record": try entry(published.record),
                "records": try records.map(entry), "photos": photos,
            ]
        }
        invocation.stdout.line(JSONOutput.render(bundle))
    }
}
