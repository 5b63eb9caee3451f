import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore

/// The checks a handover file passes before anything of it is recorded: every
/// check of a proof bundle, made by `BundleCheck` (`jqc verify --bundle`,
/// the same checks and wording as `Tools/verify-ledger --bundle` and
/// `Tools/verify-bundle-go`), then those of a handover (`Schemas/ledger-format.md`
/// § Handover files). The first that fails is the refusal.
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
    ///
    /// `continuing`: the file is a version-3 reception's part, versions
    /// s … k continuing the held version s − 1 (its leaf), and
    /// `startedTemplateHash` the template the inspection started with when
    /// its start is among what earlier receptions hold.
    public static func verify(
        _ file: HandoverFile, checkingPhotoFiles: Bool = true, checkingTo: Bool = true,
        continuing: InspectionReceived.Continuation? = nil, startedTemplateHash: String? = nil
    ) throws(Reception.Refusal) -> Verified {
        let (proven, records) = try provenRecords(file, continuing: continuing)
        // 2. Each photo file is its photo's.
        guard !checkingPhotoFiles || file.photoFiles.count == file.photos.count else {
            throw .photoFileCount(files: file.photoFiles.count, photos: file.photos.count)
        }
        let hasher = SHA256Hasher()
        for (index, (photo, data)) in zip(file.photos, file.photoFiles).enumerated() {
            guard data.sha256 == photo.sha256, data.data.sha256(hasher) == photo.sha256 else {
                throw .photoFileNotItsPhoto(index: index, photo: photo.photoID)
            }
        }
        // 2, continued: the photos the carried records name, at any depth.
        if checkingPhotoFiles { try checkCarriedPhotoFiles(file) }
        try checkHandedOver(file, records, checkingTo: checkingTo)
        let pinned = try pinnedTemplate(
            file, proven, records, continuing: continuing, startedTemplateHash: startedTemplateHash)
        // 5. Every record reads as an event of its type.
        for decoded in records {
            do {
                _ = try EventUpcaster.decode(decoded, template: pinned.template)
            } catch {
                throw .eventUnreadable(type: decoded.type, position: decoded.position, why: "\(error)")
            }
        }
        return Verified(template: pinned, records: records, checkpointSize: proven.size)
    }

    /// Check 1: the bundle, exactly as `jqc verify --bundle` and the two
    /// bundle tools check one (key, signature, origin, every inclusion, the
    /// key record, versions 1 … k linked, the photo list); then what a
    /// handover adds: the key and every record are from_device's, and each
    /// record is one jqc reads, in deterministic CBOR.
    static func provenRecords(_ file: HandoverFile, continuing: InspectionReceived.Continuation?)
        throws(Reception.Refusal) -> (BundleCheck.Proven, [EventRecord])
    {
        var detail: String?
        let proven: BundleCheck.Proven
        do {
            proven = try BundleCheck.verify(
                file.bundle, pinned: nil, trusted: nil, detail: &detail,
                continuing: continuing.map { ($0.streamVersion, $0.leaf) })
        } catch {
            throw .bundle(reason: error.reason, detail: detail)
        }
        let device = file.fromDevice.lowercased
        guard proven.key.name == "jqc/\(device)" else {
            throw .keyOfAnotherDevice(key: proven.key.name, device: file.fromDevice)
        }
        var records: [EventRecord] = []
        for (entry, record) in zip(file.records, proven.records) {
            let event = try decoded(record.raw, entry.path)
            guard event.device == file.fromDevice else {
                throw .recordOfAnotherDevice(path: entry.path, device: event.device)
            }
            records.append(event)
        }
        return (proven, records)
    }

    /// A record of the file as jqc reads it, in deterministic CBOR.
    static func decoded(_ raw: [UInt8], _ path: String) throws(Reception.Refusal) -> EventRecord {
        let record: EventRecord
        do {
            record = try EventRecord(decoding: raw)
        } catch {
            throw .recordUnreadable(path: path, why: "\(error)")
        }
        guard record.encoded() == raw else { throw .recordNotDeterministic(path: path) }
        return record
    }

    /// Check 3: the handover itself, the last record, as the file says.
    static func checkHandedOver(_ file: HandoverFile, _ records: [EventRecord], checkingTo: Bool)
        throws(Reception.Refusal)
    {
        guard let last = records.last, case .handedOver(let handed)? = try? InspectionEvent.decode(last) else {
            throw .lastRecordNotHandedOver
        }
        guard handed.mode == file.mode, !checkingTo || handed.to == file.to else {
            throw .modeOrToDiffers
        }
        guard !checkingTo || handed.toDevice == file.toDevice else {
            throw .toDeviceDiffers(file: file.toDevice, record: handed.toDevice)
        }
    }

    /// Check 4: the template, proven in the same tree, the one the start names.
    static func pinnedTemplate(
        _ file: HandoverFile, _ proven: BundleCheck.Proven, _ records: [EventRecord],
        continuing: InspectionReceived.Continuation?, startedTemplateHash: String?
    ) throws(Reception.Refusal) -> TemplatePinned {
        let templateEntry = file.templateRecord.bundleEntry
        var detail: String?
        let included: BundleCheck.Proven.Record
        do {
            included = try BundleCheck.included(templateEntry, size: proven.size, root: proven.root, detail: &detail)
        } catch {
            throw .bundle(reason: error.reason, detail: detail)
        }
        let templateRecord = try decoded(included.raw, templateEntry.path)
        // One that does not decode as a pin is refused as no pin, below.
        guard templateRecord.device == file.fromDevice,
            case .templatePinned(let pinned)? = try? InspectionEvent.decode(templateRecord)
        else { throw .templateRecordNotPinned }
        guard pinned.template.contentHash == pinned.templateHash else {
            throw .templateHashDiffers
        }
        var startedHash: String?
        for decoded in records where decoded.type == InspectionEventType.started.rawValue {
            // A start that does not decode is refused by check 5 below.
            if case .started(let started)? = try? EventUpcaster.decode(decoded, template: nil) {
                startedHash = started.templateHash
            }
        }
        if startedHash == nil, continuing != nil { startedHash = startedTemplateHash }
        if startedHash == nil {
            // A shared copy's start, carried inside a reception it carries.
            do {
                startedHash = try file.reception(sha256: .zero).startedTemplateHash()
            } catch {
                throw .carriedReceptionUnreadable(why: "\(error)")
            }
        }
        guard let startedHash else { throw .noStart }
        guard startedHash == pinned.templateHash else {
            throw .templateNotStarted(pinned: pinned.templateHash, started: startedHash)
        }
        return pinned
    }

    /// `carried_photo_files` holds exactly the files of the photos that the
    /// records the receptions among the file's records carry name, at any
    /// depth, less those `photo_files` holds (each once: the reader checked
    /// order, repeats and hashes). A `/1` or `/2` file carries none: what it
    /// lacks, `jqc check --photos` names after the reception.
    static func checkCarriedPhotoFiles(_ file: HandoverFile) throws(Reception.Refusal) {
        var named: [Digest256: PhotoCaptured] = [:]
        do {
            for capture in try file.reception(sha256: .zero).photoCapturesAtAnyDepth()
            where named[capture.captured.photo.sha256] == nil {
                named[capture.captured.photo.sha256] = capture.captured
            }
        } catch {
            throw .carriedReceptionUnreadable(why: "\(error)")
        }
        for photo in file.photos { named[photo.sha256] = nil }
        guard file.formatVersion >= 3 else { return }
        var given: Set<Digest256> = []
        for (index, carried) in file.carriedPhotoFiles.enumerated() {
            guard named[carried.sha256] != nil else {
                throw .carriedPhotoFileUnnamed(index: index, sha256: carried.sha256)
            }
            given.insert(carried.sha256)
        }
        if let missing = named.filter({ !given.contains($0.key) }).min(by: { $0.key.hex < $1.key.hex }) {
            throw .carriedPhotoFileMissing(photo: missing.value.photo.photoID, sha256: missing.key)
        }
    }
}
