import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// Handing a draft to another device: `inspection.handed_over` recorded in
/// its stream, then one file (`jqc-handover/3`,
/// `Schemas/ledger-format.md` § Handover files) with a proof bundle of the
/// stream that includes that record, the template's `template.pinned` record
/// proven in the same tree, the photo files of its own records and those of
/// every record it carries, at any depth.
public struct Handover {
    public let ledger: InspectionLedger
    public let identity: DeviceIdentity

    public init(ledger: InspectionLedger, identity: DeviceIdentity) {
        self.ledger = ledger
        self.identity = identity
    }

    /// The format name of a handover file.
    public static let format = HandoverFile.format

    /// What `write` did.
    public struct Written: Sendable, Equatable {
        public var inspection: UUID
        public var path: String
        /// False when the inspection was handed over before: the file was
        /// written again and nothing recorded.
        public var recorded: Bool
        public var mode: HandoverMode
        public var to: String?
        /// The device the file is bound to (`--to DEVICE`), or nil.
        public var toDevice: UUID?
        public var records: Int
        /// Photo files: the stream's own (`photo_files`) and those its
        /// carried records name (`carried_photo_files`).
        public var photos: Int
        /// The size of the signed checkpoint the bundle is proven against.
        public var checkpointSize: UInt64
        /// SHA-256 of the file written.
        public var sha256: Digest256
    }

    /// Why no handover file was written.
    public enum Failure: Error, CustomStringConvertible {
        case photoMissing(photo: UUID, sha256: String)
        case carriedPhotoMissing(photo: UUID, sha256: String, device: UUID)
        case templateRecordMissing(hash: String)
        case noKeyRecord(device: UUID)

        public var description: String {
            switch self {
            case .photoMissing(let photo, let hash):
                "photo \(photo.lowercased) (file \(hash)) is not in the photo store, so no complete handover file "
                    + "can be written; no file was written. Run 'jqc check --photos' and restore the file."
            case .carriedPhotoMissing(let photo, let hash, let device):
                "photo \(photo.lowercased) (file \(hash)), captured on device \(device.lowercased) and carried in "
                    + "this inspection, is not in the photo store, so no complete handover file can be written; "
                    + "nothing was recorded and no file was written. Receive the inspection again from a device "
                    + "that holds the photo (a jqc-handover/3 file carries it), or restore photos/\(hash) from a "
                    + "backup; 'jqc check --photos' lists what is missing."
            case .templateRecordMissing(let hash):
                "the log holds no template.pinned record of template \(hash), so the receiver could not check the "
                    + "template; no file was written. Run 'jqc verify --full'."
            case .noKeyRecord(let device):
                "the log records no signing key for device \(device.lowercased); no file was written. Run "
                    + "'jqc key' and 'jqc verify --full'."
            }
        }
    }

    /// Records the handover (once) and writes the file to `output`
    /// atomically. `output` inside the ledger directory is refused before
    /// anything is recorded. With mode `handover` this device then records
    /// nothing more on the inspection.
    public func write(
        inspection id: UUID, to: String?, mode: HandoverMode, output: String, actor: Actor, clock: any LedgerClock
    ) throws -> Written {
        try OutputPath.requireOutside(ledger: identity.directory.path, output, what: "the handover file")
        // A `--to` that names a device binds the file to it; any other name
        // is only shown (unbound).
        let toDevice = to.flatMap(Self.device(named:))
        // What the file needs is checked first: a handover is never recorded
        // for a file that cannot then be written.
        if let before = try ledger.state(of: id), !before.isHandedAway, before.status != .notStarted {
            // Carried photos first: their refusal names the device that captured one.
            _ = try ledger.log.read { try carriedPhotoFiles(id, ownPhotos: [], reader: $0) }
            for captured in before.photos where !ledger.photos.holds(sha256: captured.photo.sha256.hex) {
                throw Failure.photoMissing(photo: captured.photo.photoID, sha256: captured.photo.sha256.hex)
            }
            guard try ledger.log.read({ try Self.templateRecord(before.templateHash, stream: id, reader: $0) }) != nil
            else { throw Failure.templateRecordMissing(hash: before.templateHash) }
        }
        // The key next: a device that cannot sign records no handover.
        let key = try identity.signingKey(ledger: ledger, at: clock.now())
        let recorded = try ledger.record(
            [.handOver(mode: mode, to: to, toDevice: toDevice)], on: id, by: actor, device: identity.device,
            clock: clock)
        let state = recorded.state
        let handedOver = state.handedOver
        let (file, note, counts) = try ledger.log.read { reader -> (JSONValue, String, (Int, Int, UInt64)) in
            let (checkpoint, note) = try SignedCheckpoint.today(reader, key: key, home: identity.directory)
            guard let published = try DeviceKeyFile.publishedRecord(reader, device: identity.device) else {
                throw Failure.noKeyRecord(device: identity.device)
            }
            let bundle = try ProofBundle.make(
                reader, inspection: id, checkpoint: checkpoint, note: note, published: published)
            guard let template = try Self.templateRecord(state.templateHash, stream: id, reader: reader) else {
                throw Failure.templateRecordMissing(hash: state.templateHash)
            }
            let templateEntry = try ProofBundle.entry(
                template, reader: reader, size: checkpoint.size, root: checkpoint.root)
            let photoFiles = try ownPhotoFiles(bundle, inspection: id)
            let carriedRecords = try Self.carriedRecords(of: id, reader: reader)
            let carriedPhotos = try carriedPhotoFiles(
                id, ownPhotos: Set(photoFiles.compactMap { $0["sha256"]?.stringValue }), reader: reader)
            let recordCount: Int
            if case .array(let records)? = bundle["records"] { recordCount = records.count } else { recordCount = 0 }
            let file = JSONValue.object([
                .init("format", .string(Self.format)), .init("mode", .string((handedOver?.mode ?? mode).rawValue)),
                .init("to", .optional(handedOver?.to)), .init("from_device", .string(identity.device.lowercased)),
                .init("to_device", .optional(handedOver?.toDevice?.lowercased)),
                .init("bundle", bundle), .init("template_record", templateEntry),
                .init("photo_files", .array(photoFiles)), .init("carried_records", .array(carriedRecords)),
                .init("carried_photo_files", .array(carriedPhotos)),
            ])
            return (file, note, (recordCount, photoFiles.count + carriedPhotos.count, checkpoint.size))
        }
        let bytes = Data((file.sortingKeys().prettyPrinted() + "\n").utf8)
        try DurableFile.write(bytes, to: output, mode: 0o600)
        try SignedCheckpoint.remember(note, home: identity.directory)
        return Written(
            inspection: id, path: output, recorded: !recorded.events.isEmpty, mode: handedOver?.mode ?? mode,
            to: handedOver?.to, toDevice: handedOver?.toDevice, records: counts.0, photos: counts.1,
            checkpointSize: counts.2,
            sha256: SHA256Hasher().digest(Array(bytes)))
    }

    /// `photo_files`: `{sha256, data}` of every photo the bundle's records
    /// name; a file this device lacks is `photoMissing`, naming it.
    func ownPhotoFiles(_ bundle: JSONValue, inspection id: UUID) throws -> [JSONValue] {
        var photoFiles: [JSONValue] = []
        guard case .array(let photos)? = bundle["photos"] else { return [] }
        for photo in photos {
            guard case .string(let hash)? = photo["sha256"], case .string(let photoID)? = photo["photo_id"]
            else { continue }
            guard let data = ledger.photos.contents(sha256: hash) else {
                throw Failure.photoMissing(photo: UUID(uuidString: photoID) ?? id, sha256: hash)
            }
            photoFiles.append(
                .object([.init("sha256", .string(hash)), .init("data", .string(data.base64EncodedString()))]))
        }
        return photoFiles
    }

    /// `carried_records`: the bytes the stream's receptions carry by
    /// reference, at every depth, each once and sorted by leaf (one closure
    /// for the whole stream): the receiver resolves them from here and keeps
    /// them in its own `carried` table.
    static func carriedRecords(of id: UUID, reader: LedgerReader) throws -> [JSONValue] {
        let closure = try CarriedClosure.closure(ofStream: id, reader: reader)
        return closure.bytes.map { (leaf: $0.key.hex, record: $0.value) }.sorted { $0.leaf < $1.leaf }
            .map {
                JSONValue.object([
                    .init("leaf", .string($0.leaf)),
                    .init("record", .string(Data($0.record).base64EncodedString())),
                ])
            }
    }

    /// `carried_photo_files`: `{sha256, data}` of every photo that a record
    /// the stream's receptions carry names, at any depth, not among
    /// `ownPhotos` (the stream's own, in `photo_files`), each once, sorted by
    /// hash. A file this device lacks is `carriedPhotoMissing`, naming it.
    func carriedPhotoFiles(_ id: UUID, ownPhotos: Set<String>, reader: LedgerReader) throws -> [JSONValue] {
        var named: [String: (photo: UUID, device: UUID)] = [:]
        var opened: Set<Digest256> = []
        let memo = StreamClosures()
        for record in try reader.records(inStream: id) where record.type == InspectionEventType.received.rawValue {
            guard case .received(let received) = try CarriedClosure.event(of: record, reader: reader, memo: memo)
            else { continue }
            for capture in try received.photoCapturesAtAnyDepth(opened: &opened) {
                let hash = capture.captured.photo.sha256.hex
                if named[hash] == nil, !ownPhotos.contains(hash) {
                    named[hash] = (capture.captured.photo.photoID, capture.record.device)
                }
            }
        }
        var files: [JSONValue] = []
        for (hash, origin) in named.sorted(by: { $0.key < $1.key }) {
            guard let data = ledger.photos.contents(sha256: hash) else {
                throw Failure.carriedPhotoMissing(photo: origin.photo, sha256: hash, device: origin.device)
            }
            files.append(.object([.init("sha256", .string(hash)), .init("data", .string(data.base64EncodedString()))]))
        }
        return files
    }

    /// The device `name` names, when it is one: a device id (any case), or
    /// as `jqc key` shows it, its key's name `jqc/<id>` or the whole verifier
    /// key `jqc/<id>+…`. Anything else is a display name (unbound).
    public static func device(named name: String) -> UUID? {
        var text = Substring(name.trimming(.spaces))
        if text.hasPrefix("jqc/") { text = text.dropFirst(4).prefix { $0 != "+" } }
        guard text.utf8.count == 36, let id = UUID(uuidString: String(text)) else { return nil }
        return id
    }

    /// The `template.pinned` record of `hash`: in the inspection's own stream
    /// (the first inspection of a template pins it there), else the first in
    /// the log (a walk of the whole log, only for a handover).
    static func templateRecord(_ hash: String, stream: UUID, reader: LedgerReader) throws -> EventRecord? {
        func pins(_ record: EventRecord) throws -> Bool {
            guard record.type == InspectionEventType.templatePinned.rawValue,
                case .templatePinned(let pinned) = try InspectionEvent.decode(record)
            else { return false }
            return pinned.templateHash == hash
        }
        for record in try reader.records(inStream: stream) where try pins(record) { return record }
        var found: EventRecord?
        try reader.forEachRecord { record in
            if try pins(record) { found = record }
            return found == nil
        }
        return found
    }
}
