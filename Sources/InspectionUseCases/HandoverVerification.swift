import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore

/// The checks a handover file passes before anything of it is recorded: every
/// check of a proof bundle (`Schemas/ledger-format.md` § Proof bundles, as
/// `Tools/verify-ledger --bundle` makes them), then those of a handover
/// (§ Handover files). The first that fails is the refusal.
public enum HandoverVerification {
    /// What a verified file gives the reception.
    public struct Verified: Sendable {
        public var template: TemplatePinned
        public var records: [EventRecord]
        /// The size of the sender's signed checkpoint.
        public var checkpointSize: UInt64
    }

    /// An audit re-checks a reception's payload without the photo files
    /// (it checks the photo store) and without the file's `to`.
    public static func verify(_ file: HandoverFile, checkingPhotoFiles: Bool = true, checkingTo: Bool = true)
        throws(Reception.Refusal) -> Verified
    {
        func refuse(_ reason: String) -> Reception.Refusal { Reception.Refusal(reason: reason) }
        let hasher = SHA256Hasher()
        // 1. The key, the signature and the origin.
        let key: NoteKey
        do {
            key = try NoteKey(parsing: file.publicKey)
        } catch {
            throw refuse("bundle.public_key is not a verifier key: \(error)")
        }
        guard key.seed == nil else { throw refuse("bundle.public_key is a signer key, not a verifier key") }
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint(verifying: file.checkpoint, key: key)
        } catch {
            throw refuse("the checkpoint: \(error)")
        }
        guard key.name == "jqc/\(file.fromDevice.lowercased)" else {
            throw refuse("the key \(key.name) is not the key of from_device \(file.fromDevice.lowercased)")
        }
        // 3. Every entry is proven in the tree and is the record it says.
        func record(_ entry: HandoverFile.Entry) throws(Reception.Refusal) -> EventRecord {
            guard entry.position >= 1, entry.position <= checkpoint.size else {
                throw refuse("\(entry.path).position \(entry.position) is outside the tree of \(checkpoint.size)")
            }
            let leaf = hasher.digest(prefix: 0x00, entry.record, range: entry.record.indices)
            guard
                Merkle.verifyInclusion(
                    leafHash: leaf, leaf: entry.position - 1, size: checkpoint.size, proof: entry.inclusion,
                    root: checkpoint.root, hasher: hasher)
            else { throw refuse("\(entry.path) is not included in the signed tree (its inclusion proof fails)") }
            let decoded: EventRecord
            do {
                decoded = try EventRecord(decoding: entry.record)
            } catch {
                throw refuse("\(entry.path).record cannot be read: \(error)")
            }
            guard decoded.encoded() == entry.record else {
                throw refuse("\(entry.path).record is not in deterministic CBOR")
            }
            guard decoded.position == entry.position, decoded.streamVersion == entry.streamVersion,
                decoded.type == entry.type
            else { throw refuse("\(entry.path): position, stream_version or type differs from its record") }
            return decoded
        }
        let keyRecord = try record(file.keyRecord)
        // 4. The key record publishes the key, in the sender's own stream.
        guard keyRecord.type == "device.key_published", keyRecord.stream == keyRecord.device,
            keyRecord.device == file.fromDevice
        else { throw refuse("bundle.key_record is not from_device's device.key_published record") }
        let publishedKey: String?
        do {
            var cbor = CBORReader(keyRecord.payload)
            publishedKey = try cbor.readValue()["key"]?.textValue
        } catch {
            throw refuse("bundle.key_record's payload cannot be read: \(error)")
        }
        guard publishedKey == file.publicKey else { throw refuse("bundle.key_record publishes another key") }
        // 5. Versions 1 … k of the inspection's stream, linked.
        guard !file.records.isEmpty else { throw refuse("bundle.records is empty") }
        var records: [EventRecord] = []
        var previous: (position: UInt64, leaf: Digest256)?
        for (index, entry) in file.records.enumerated() {
            let decoded = try record(entry)
            guard decoded.stream == file.inspection, decoded.streamVersion == UInt64(index + 1) else {
                throw refuse(
                    "\(entry.path) is not version \(index + 1) of inspection \(file.inspection.lowercased): the stream "
                        + "is not complete from its first record")
            }
            if let previous {
                guard decoded.position > previous.position else { throw refuse("\(entry.path) is out of order") }
                if decoded.format >= 2, decoded.previousInStream != previous.leaf {
                    throw refuse("\(entry.path)'s back-link does not name the record before it: one was left out")
                }
            } else if decoded.previousInStream != nil {
                throw refuse("\(entry.path) has a back-link, so it is not the stream's first record")
            }
            guard decoded.device == file.fromDevice else {
                throw refuse("\(entry.path) was recorded by device \(decoded.device.lowercased), not from_device")
            }
            previous = (decoded.position, hasher.digest(prefix: 0x00, entry.record, range: entry.record.indices))
            records.append(decoded)
        }
        // 6. The photos are the captures, and each file is its hash.
        var captures: [(UUID, Digest256, UInt64)] = []
        for decoded in records where decoded.type == InspectionEventType.photoCaptured.rawValue {
            guard case .photoCaptured(let captured)? = try? InspectionEvent.decode(decoded) else {
                throw refuse("the photo.captured record at \(decoded.position) cannot be read")
            }
            captures.append((captured.photo.photoID, captured.photo.sha256, decoded.position))
        }
        guard captures.count == file.photos.count,
            zip(captures, file.photos).allSatisfy({ $0.0 == $1.photoID && $0.1 == $1.sha256 && $0.2 == $1.position })
        else { throw refuse("bundle.photos is not the list of the records' photo captures") }
        guard !checkingPhotoFiles || file.photoFiles.count == file.photos.count else {
            throw refuse("photo_files has \(file.photoFiles.count) files for \(file.photos.count) photos")
        }
        for (index, (photo, data)) in zip(file.photos, file.photoFiles).enumerated() {
            guard data.sha256 == photo.sha256, hasher.digest(Array(data.data)) == photo.sha256 else {
                throw refuse(
                    "photo_files[\(index)] is not the file of photo \(photo.photoID.lowercased) (its SHA-256 differs)")
            }
        }
        // The handover itself: the last record, as the file says.
        guard let last = records.last, case .handedOver(let handed)? = try? InspectionEvent.decode(last) else {
            throw refuse("the last record is not the sender's inspection.handed_over")
        }
        guard handed.mode == file.mode, !checkingTo || handed.to == file.to else {
            throw refuse("mode or to differs from the sender's inspection.handed_over record")
        }
        // The template: proven in the same tree, the one the start names.
        let templateRecord = try record(file.templateRecord)
        guard templateRecord.device == file.fromDevice,
            case .templatePinned(let pinned)? = try? InspectionEvent.decode(templateRecord)
        else { throw refuse("template_record is not one of from_device's template.pinned records") }
        guard pinned.template.contentHash == pinned.templateHash else {
            throw refuse("template_record's template does not hash to the hash it is pinned under")
        }
        var startedHash: String?
        for decoded in records where decoded.type == InspectionEventType.started.rawValue {
            if case .started(let started)? = try? EventUpcaster.decode(decoded, template: nil) {
                startedHash = started.templateHash
            }
        }
        startedHash = startedHash ?? InspectionReceived.startedTemplateHash(in: records)  // a shared copy's, carried
        guard let startedHash else { throw refuse("the records hold no inspection.started") }
        guard startedHash == pinned.templateHash else {
            throw refuse(
                "template_record pins template \(pinned.templateHash), the inspection started with \(startedHash)")
        }
        for decoded in records {
            do {
                _ = try EventUpcaster.decode(decoded, template: pinned.template)
            } catch {
                throw refuse("the \(decoded.type) record at \(decoded.position) cannot be read: \(error)")
            }
        }
        return Verified(template: pinned, records: records, checkpointSize: checkpoint.size)
    }
}
