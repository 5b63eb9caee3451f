import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
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
        let bundle = try auditor.log.read { reader -> JSONValue in
            let size = try reader.treeSize()
            let root = try reader.treeRoot(size: size)
            let note = try Checkpoint(origin: key.name, size: size, root: root).signed(by: key)
            func entry(_ record: EventRecord) throws -> JSONValue {
                let value = try reader.encodedRecord(at: record.position)
                return .object([
                    "position": .integer(record.position), "stream_version": .integer(record.streamVersion),
                    "type": .string(record.type), "record": .string(Data(value).base64EncodedString()),
                    "inclusion": .strings(
                        try reader.inclusionProof(position: record.position, size: size).map {
                            Data($0.bytes).base64EncodedString()
                        }),
                ])
            }
            guard let published = try DeviceKeyFile.publishedRecord(reader, device: config.deviceID) else {
                throw DeviceKeyError.notPublished(device: config.deviceID)
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
            return .object([
                "format": .string("jqc-proof-bundle/1"), "inspection": .string(inspection.lowercased),
                "checkpoint": .string(note), "public_key": .string(published.key),
                "key_record": try entry(published.record), "records": .array(try records.map(entry)),
                "photos": .array(photos),
            ])
        }
        invocation.stdout.line(JSONOutput.render(bundle))
    }
}
