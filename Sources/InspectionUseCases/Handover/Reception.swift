import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// Taking over an inspection from a handover file, or merging a shared copy
/// of one this device holds: everything verified before anything is
/// recorded, then the photos stored by hash, the template pinned when this
/// device does not hold it, and one `inspection.received` that keeps the
/// sender's records and proofs as the sender's (`docs/domain.md` § Sharing
/// and merging).
public struct Reception {
    public let ledger: InspectionLedger
    public let device: UUID

    /// Runs on every attempt after the reception is decided and before it
    /// is appended: where this package's tests record another command, to
    /// race the reception as a `jqc set` in another window would.
    package var beforeAppending: (() throws -> Void)?

    public init(ledger: InspectionLedger, device: UUID) {
        self.ledger = ledger
        self.device = device
    }

    /// The largest handover file read (photos are at most 50 MiB each).
    public static let maximumFileSize = 1 << 30

    /// What `receive` did.
    public struct Received: Sendable, Equatable {
        public var inspection: UUID
        public var fromDevice: UUID
        /// False when the file adds no event this device has not folded (the
        /// same file again, or an older copy): nothing was recorded.
        public var recorded: Bool
        public var records: Int
        public var photos: Int
        public var pinnedTemplate: Bool
        public var sha256: Digest256
        /// True when the inspection was held here already and the file's
        /// records were merged with this device's.
        public var merged = false
        /// The device a plain handover file was bound to (`to_device`), or nil.
        public var addressedTo: UUID? = nil
        /// The device that alone records on the inspection when this device
        /// holds a read-only copy (a plain handover bound to another device).
        public var readOnlyCopyOf: UUID? = nil
        /// What the file changed here: the folded state before and after
        /// compared (`ReceptionChanges`); empty when nothing was recorded.
        public var changes = ReceptionChanges()
    }

    /// Why a file that verifies cannot be taken here: `NOT RECEIVED`, the
    /// class `Tools/verify-ledger --handover` says it with (a file that
    /// verifies, refused for what this ledger holds).
    public enum Conflict: Error, CustomStringConvertible {
        case ownFile(UUID)
        case sharedDeviceID(UUID, device: UUID)
        case otherInspection(UUID)

        public var description: String {
            switch self {
            case .ownFile(let id):
                "NOT RECEIVED: this handover file of inspection \(id.lowercased) names this ledger's own device id as its sender: "
                    + "it was written by this device, or by another ledger that shares this device id (a backup "
                    + "restored or copied beside the ledger it was taken from); nothing was recorded. Two ledgers "
                    + "must never share a device id: a backup is a restore point, not a second device; another "
                    + "device starts with its own 'jqc init'. Receive the file on the other device."
            case .sharedDeviceID(let id, let device):
                "NOT RECEIVED: this handover file of inspection \(id.lowercased) names this device's own id "
                    + "\(device.lowercased) as its sender, yet holds records this device never wrote: two ledgers "
                    + "share a device id (a copied or restored ledger used as a second device); nothing was recorded. "
                    + "Give one of them a device of its own before exchanging files."
            case .otherInspection(let id):
                "NOT RECEIVED: this handover file's inspection \(id.lowercased) was started by another record than the one this "
                    + "device holds under that id; nothing was recorded."
            }
        }
    }

    /// Reads, verifies and records the handover file at `path`: takes the
    /// inspection over, or merges the file's records into this device's
    /// copy; records nothing when the file adds nothing new.
    ///
    /// `key` (`jqc receive --key VKEY`) is the sender's key as the person
    /// holds it: the file must be signed by it, and it is pinned.
    public func receive(file path: String, actor: Actor, clock: any LedgerClock, key: String? = nil) throws
        -> Received
    {
        // Each photo's base64 decoded into a staging file as the file is read
        // (`HandoverFileReader`): only the rest of the document is in memory,
        // and one photo at a time when it is checked and stored.
        let read = try Self.read(path, staging: ledger.photos.stagingDirectory)
        defer { read.removeStaged() }
        let sha256 = read.sha256
        let file = try HandoverFile(decoding: read.document, staged: read.staged)
        let verified = try HandoverVerification.verify(file)
        // Its records by reference; their bytes and the file's
        // `carried_records` go into this ledger's `carried` table with it.
        let carried = file.reception(sha256: sha256)
        // Bounded before any walk below: a file nested past the limit is
        // refused here, so no ledger holds what a walk could not take.
        do { try carried.checkNesting() } catch { throw Refusal.carriedRecords(why: "\(error)") }
        var outcome = Received(
            inspection: file.inspection, fromDevice: file.fromDevice, recorded: false, records: file.records.count,
            photos: file.photoFiles.count + file.carriedPhotoFiles.count, pinnedTemplate: false, sha256: sha256,
            addressedTo: file.toDevice)
        var held: InspectionState?
        // Then the files, then the record: a file appears in the store only
        // with the reception that names it. Should the record fail, the
        // files this reception added are removed again, unless an event
        // names one meanwhile (another command's capture of the same bytes).
        var added: [PhotoStore.StoredPhoto]?
        let recorded: InspectionLedger.Recorded
        do {
            // One read snapshot per attempt, and the expected-version append
            // of every recording command: a `jqc set` recorded between this
            // snapshot and the append makes the reception plan and decide again.
            recorded = try ledger.record(
                on: file.inspection, by: actor, device: device, clock: clock,
                before: {
                    // The photo files staged: every one checked as the photo
                    // store takes a capture before any is stored, so a refused
                    // file leaves the store as it was.
                    if added == nil {
                        _ = try Self.stage(file, photos: ledger.photos)
                        added = []
                        try Self.keep(file, photos: ledger.photos) { added?.append($0) }
                    }
                    try beforeAppending?()
                }
            ) { snapshot in
                let plan = try plan(file, carried, verified, key: key, snapshot: snapshot, outcome: &outcome)
                held = outcome.merged ? snapshot.state : nil
                return plan
            }
        } catch let found as SenderTrust.ForkFound {
            if !found.alreadyHeld { try recordFork(found.fork, actor: actor, clock: clock) }
            throw found.refusal
        } catch {
            Self.removeUnnamed(added ?? [], ledger: ledger)
            throw error
        }
        guard !recorded.events.isEmpty else { return outcome }
        outcome.recorded = true
        outcome.pinnedTemplate = recorded.events.contains { if case .templatePinned = $0 { true } else { false } }
        outcome.readOnlyCopyOf =
            file.mode == .handover && file.toDevice != nil && file.toDevice != device ? file.toDevice : nil
        outcome.changes = ReceptionChanges(before: held, after: recorded.state)
        return outcome
    }

    /// What the file asks of this ledger, judged in one read snapshot: the
    /// sender believed (`SenderTrust`), then nothing when the file adds no
    /// record this device has not folded (`outcome` says so), or the
    /// reception to decide, with the sender's key pinned beside it.
    private func plan(
        _ file: HandoverFile, _ carried: InspectionReceived, _ verified: HandoverVerification.Verified,
        key: String?, snapshot: RecordingSnapshot, outcome: inout Received
    ) throws -> RecordingPlan {
        let id = file.inspection
        let reader = snapshot.reader
        let stream = try reader.records(inStream: id)
        // Pinned keys, forks and the copy rule (`SenderTrust`): what the file
        // cannot prove alone, against what this ledger holds.
        let trusted = try SenderTrust(ledger: ledger, device: device).check(
            file, sha256: outcome.sha256, stream: stream, given: key, reader: reader)
        outcome.merged = !stream.isEmpty
        outcome.readOnlyCopyOf = stream.isEmpty ? nil : snapshot.state.readOnlyCopyOf
        // Every event folded here: this device's own, and what its
        // receptions carried (this device's records carried back among them).
        let folded = Set(stream.map(\.id)).union(stream.isEmpty ? [] : snapshot.state.carriedEventIDs)
        var startedHere: UUID?
        var sameFileBefore = false
        // The highest version of the sender's stream an earlier reception of
        // it references, with its leaf: where a version-3 reception continues.
        var held: InspectionReceived.Continuation?
        let memo = StreamClosures()
        for record in stream {
            if record.type == InspectionEventType.started.rawValue { startedHere = record.id }
            guard record.type == InspectionEventType.received.rawValue,
                case .received(let received) = try CarriedClosure.event(of: record, reader: reader, memo: memo)
            else { continue }
            if received.fileSHA256 == outcome.sha256 { sameFileBefore = true }
            startedHere = try startedHere ?? received.startedRecord()?.id
            let last = received.firstVersion - 1 + UInt64(received.records.count)
            if received.fromDevice == file.fromDevice, let leaf = received.records.last?.leaf,
                last > held?.streamVersion ?? 0
            {
                held = InspectionReceived.Continuation(streamVersion: last, leaf: leaf)
            }
        }
        if file.fromDevice == device {
            guard try carried.newEventIDs(besides: folded).isEmpty else {
                throw Conflict.sharedDeviceID(id, device: device)
            }
            throw Conflict.ownFile(id)
        }
        if sameFileBefore { return .nothing }
        if !stream.isEmpty {
            let startedThere = try carried.startedRecord()?.id
            if let startedHere, let startedThere, startedHere != startedThere { throw Conflict.otherInspection(id) }
            if try carried.newEventIDs(besides: folded).isEmpty { return .nothing }
        }
        let pinned = try snapshot.pinnedTemplate(hash: verified.template.templateHash) != nil
        let recorded = Self.newToThisReceiver(carried, held: held)
        let copy = ReceiveCopy(received: recorded, template: verified.template, templateAlreadyPinned: pinned)
        // Only bytes the `carried` table does not hold yet are written.
        var unheld = CarriedRecords()
        for (leaf, bytes) in carried.carried.bytes where try reader.carriedRecord(leaf) == nil {
            unheld.insert(bytes)
        }
        return RecordingPlan([.receive(copy)], carrying: unheld, beside: trusted.commands)
    }

    /// The reception as version 3 records it: only the file's records after
    /// `held` (the highest version of the sender's stream an earlier
    /// reception of it here references), continuing it. The whole list
    /// (versions 1 … k, `continues` null) when nothing is held, or when the
    /// file's record at that version is not the one held (its back-link
    /// chain would not continue it: then nothing is left to an earlier
    /// reception), or when the file holds nothing past it.
    static func newToThisReceiver(_ carried: InspectionReceived, held: InspectionReceived.Continuation?)
        -> InspectionReceived
    {
        guard let held, held.streamVersion >= 1, held.streamVersion < UInt64(carried.records.count),
            carried.records[Int(held.streamVersion - 1)].leaf == held.leaf,
            let bytes = carried.carried.record(carried.records[Int(held.streamVersion)].leaf),
            // A format-1 record has no back-link to continue by.
            (try? EventRecord(decoding: bytes))?.previousInStream == held.leaf
        else { return carried }
        return carried.continuing(from: held.streamVersion + 1, leaf: held.leaf)
    }

    /// Records the fork `SenderTrust` found, as evidence, before the file is
    /// refused: decided on this device's stream (`DeviceState`), so a fork
    /// recorded meanwhile is not recorded twice.
    private func recordFork(_ fork: DeviceStreamEvent.ForkSeen, actor: Actor, clock: any LedgerClock) throws {
        try ledger.record([.recordFork(fork)], onStreamOf: device, by: actor, clock: clock)
    }

    /// Every photo file of `file` (`photo_files`, then `carried_photo_files`)
    /// read and checked as the photo store takes a capture (bytes, size, an
    /// image), nothing stored; the first that the store would refuse is the
    /// refusal, named by its path. Their hashes were checked already.
    static func stage(_ file: HandoverFile, photos: PhotoStore) throws(Refusal) -> [PhotoStore.StoredPhoto] {
        var staged: [PhotoStore.StoredPhoto] = []
        for (path, photo) in photoFiles(of: file) {
            staged.append(try prepared(photo, path, photos).description)
        }
        return staged
    }

    /// Every photo file of `file` stored, one at a time (read back from its
    /// staging file, checked again, written), `added` told of each this call
    /// wrote; run only once `stage` passed.
    static func keep(_ file: HandoverFile, photos: PhotoStore, added: (PhotoStore.StoredPhoto) -> Void) throws {
        for (path, photo) in photoFiles(of: file) {
            let prepared = try prepared(photo, path, photos)
            if try photos.keep(prepared) { added(prepared.description) }
        }
    }

    private static func photoFiles(of file: HandoverFile) -> [(
        String, (sha256: Digest256, data: HandoverFile.PhotoBytes)
    )] {
        file.photoFiles.enumerated().map { ("photo_files[\($0.offset)]", $0.element) }
            + file.carriedPhotoFiles.enumerated().map { ("carried_photo_files[\($0.offset)]", $0.element) }
    }

    private static func prepared(
        _ photo: (sha256: Digest256, data: HandoverFile.PhotoBytes), _ path: String, _ photos: PhotoStore
    ) throws(Refusal) -> PhotoStore.PreparedPhoto {
        do {
            return try photos.prepare(data: try photo.data.load(name: path), name: path)
        } catch let failure as PhotoStore.Failure {
            throw .photoFileRefused(path: path, sha256: photo.sha256, refusedFile: failure.refusedFile)
        } catch {
            throw .photoFileUncheckable(path: path, sha256: photo.sha256, why: "\(error)")
        }
    }

    /// Removes the photo files a reception that did not commit had added,
    /// leaving any that an event of the log names. When the log cannot be
    /// read to tell (the store failed), every file is left: an unnamed file
    /// is listed by `jqc check --photos`, a removed one that an event names
    /// would be evidence lost.
    static func removeUnnamed(_ added: [PhotoStore.StoredPhoto], ledger: InspectionLedger) {
        guard !added.isEmpty else { return }
        let named: Set<String>
        do {
            named = Set(try ledger.log.read { try PhotoFileCheck.named(reader: $0) }.keys)
        } catch {
            return
        }
        for photo in added where !named.contains(photo.sha256) {
            ledger.photos.discard(photo)
        }
    }

    /// The handover file's bytes, after judging the path by its kind and
    /// size (`HandoverPathRefusal`): a directory, FIFO, socket or device is
    /// refused before it is opened (a FIFO would wait for a writer for ever),
    /// a file over `maximumFileSize` before any byte is read.
    static func read(_ path: String, staging: String) throws -> HandoverFileReader.Read {
        // attributesOfItem does not follow a symbolic link: judge its target.
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: target.path)
        } catch {
            throw HandoverPathRefusal.failure(error, path: path)
        }
        let type = attributes[.type] as? FileAttributeType
        guard type == .typeRegular else { throw HandoverPathRefusal.kind(type ?? .typeUnknown, path: path) }
        let size =
            switch attributes[.size] {
            case let size as Int: size
            case let size as UInt64: Int(clamping: size)
            case let size as UInt: Int(clamping: size)  // FoundationEssentials' type
            case let size as Int64: Int(clamping: size)
            default: 0
            }
        guard size <= maximumFileSize else {
            throw HandoverPathRefusal.tooLarge(size, limit: maximumFileSize, path: path)
        }
        let handle: OpenFile
        do {
            handle = try OpenFile(reading: target.path)
        } catch {
            throw HandoverPathRefusal.failure(error, path: path)
        }
        // Read only: a failed close loses nothing.
        defer { try? handle.close() }
        let data: HandoverFileReader.Read
        do {
            // In chunks, each judged as it arrives (`HandoverFileReader`); one
            // more byte than allowed: a file that grew since it was examined is still refused.
            data = try HandoverFileReader.read(handle, limit: maximumFileSize, staging: staging)
        } catch let unreadable as HandoverFile.Unreadable {
            throw unreadable
        } catch {
            throw HandoverPathRefusal.failure(error, path: path)
        }
        guard data.size <= maximumFileSize else {
            data.removeStaged()
            throw HandoverPathRefusal.tooLarge(data.size, limit: maximumFileSize, path: path)
        }
        return data
    }
}
