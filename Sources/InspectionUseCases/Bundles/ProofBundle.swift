import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// A proof bundle of one inspection (`jqc-proof-bundle/1`,
/// `Schemas/ledger-format.md` § Proof bundles): its records, each with its
/// inclusion proof against a checkpoint signed now, the key that signed and
/// the record publishing it. `jqc prove` prints one; a handover file carries
/// one (`Handover`).
public enum ProofBundle {
    /// A bundle entry of `record` in the tree of `size` whose root is `root`.
    /// The proof is checked against the root before it is handed out: a
    /// bundle whose records fail their own proofs is never written.
    public static func entry(_ record: EventRecord, reader: LedgerReader, size: UInt64, root: Digest256) throws
        -> JSONValue
    {
        let hasher = SHA256Hasher()
        let value = try reader.encodedRecord(at: record.position)
        let proof = try reader.inclusionProof(position: record.position, size: size)
        guard
            Merkle.verifyInclusion(
                leafHash: hasher.digest(prefix: 0x00, value, range: value.indices), leaf: record.position - 1,
                size: size, proof: proof, root: root, hasher: hasher)
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
            "inclusion": .array(proof.map { .string(Data($0.bytes).base64EncodedString()) }),
        ])
    }

    /// The bundle of `inspection`'s stream against `checkpoint` (signed as
    /// `note`), with the published key record; `consistency` is added when given.
    public static func make(
        _ reader: LedgerReader, inspection: UUID, checkpoint: Checkpoint, note: String,
        published: (key: String, record: EventRecord), consistency: JSONValue? = nil, complete: Bool = false
    ) throws -> JSONValue {
        func entry(_ record: EventRecord) throws -> JSONValue {
            try Self.entry(record, reader: reader, size: checkpoint.size, root: checkpoint.root)
        }
        // Only the records inside the checkpoint's tree can be proven in it.
        let records = try reader.records(inStream: inspection).filter { $0.position <= checkpoint.size }
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
        // /2 only against a checkpoint carrying the map's root (jqc-heads).
        let head =
            complete ? try headMember(reader, inspection: inspection, checkpoint: checkpoint, records: records) : nil
        var members: [JSONValue.Member] = [
            .init("format", .string(head == nil ? "jqc-proof-bundle/1" : "jqc-proof-bundle/2")),
            .init("inspection", .string(inspection.lowercased)),
            .init("checkpoint", .string(note)), .init("public_key", .string(published.key)),
            .init("key_record", try entry(published.record)), .init("records", .array(try records.map(entry))),
            .init("photos", .array(photos)),
        ]
        if let consistency { members.append(.init("consistency", consistency)) }
        if let head { members.append(.init("head", head)) }
        return .object(members)
    }

    /// The `head` member of a /2 bundle: the inspection's last record within
    /// the checkpoint, proven in its map of stream heads; checked against the
    /// checkpoint's `jqc-heads` root before it is handed out. Nil when the
    /// checkpoint carries no such line (it cannot prove completeness).
    static func headMember(_ reader: LedgerReader, inspection: UUID, checkpoint: Checkpoint, records: [EventRecord])
        throws -> JSONValue?
    {
        guard let heads = checkpoint.heads, let last = records.last,
            let proof = try reader.headProof(of: inspection, size: checkpoint.size)
        else { return nil }
        let leaf = try reader.leafHash(at: last.position)
        guard proof.root == heads, proof.head.version == last.streamVersion, proof.head.leaf == leaf,
            HeadMap.verify(proof.head, siblings: proof.siblings, root: heads)
        else {
            throw TreeCheckError(
                node: nil,
                reason:
                    "the map of stream heads does not prove record \(last.position) the head of inspection \(inspection.lowercased) under the checkpoint's jqc-heads root"
            )
        }
        return .object([
            "stream_version": .integer(last.streamVersion), "leaf": .string(Data(leaf.bytes).base64EncodedString()),
            "proof": .array(proof.siblings.map { .string(Data($0.bytes).base64EncodedString()) }),
        ])
    }
}
