import Foundation
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
        /// What the file changed here: the folded state before and after
        /// compared (`ReceptionChanges`); empty when nothing was recorded.
        public var changes = ReceptionChanges()
    }

    /// Why a handover file was refused: nothing was recorded.
    public struct Refusal: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { "NOT VERIFIED: \(reason); nothing was recorded." }
    }

    /// Why a file that verifies cannot be taken here.
    public enum Conflict: Error, CustomStringConvertible {
        case ownFile(UUID)
        case sharedDeviceID(UUID, device: UUID)
        case otherInspection(UUID)

        public var description: String {
            switch self {
            case .ownFile(let id):
                "this handover file of inspection \(id.lowercased) names this ledger's own device id as its sender: "
                    + "it was written by this device, or by another ledger that shares this device id (a backup "
                    + "restored or copied beside the ledger it was taken from); nothing was recorded. Two ledgers "
                    + "must never share a device id: a backup is a restore point, not a second device; another "
                    + "device starts with its own 'jqc init'. Receive the file on the other device."
            case .sharedDeviceID(let id, let device):
                "this handover file of inspection \(id.lowercased) names this device's own id "
                    + "\(device.lowercased) as its sender, yet holds records this device never wrote: two ledgers "
                    + "share a device id (a copied or restored ledger used as a second device); nothing was recorded. "
                    + "Give one of them a device of its own before exchanging files."
            case .otherInspection(let id):
                "this handover file's inspection \(id.lowercased) was started by another record than the one this "
                    + "device holds under that id; nothing was recorded."
            }
        }
    }

    /// Reads, verifies and records the handover file at `path`: takes the
    /// inspection over, or merges the file's records into this device's
    /// copy; records nothing when the file adds nothing new.
    public func receive(file path: String, actor: Actor, clock: any LedgerClock) throws -> Received {
        let bytes = try Self.read(path)
        let sha256 = SHA256Hasher().digest(bytes)
        let file = try HandoverFile(decoding: bytes)
        let verified = try HandoverVerification.verify(file)
        let id = file.inspection
        let stream = try ledger.log.records(inStream: id)
        // Its records by reference; their bytes and the file's
        // `carried_records` go into this ledger's `carried` table with it.
        let carried = file.reception(sha256: sha256)
        // Bounded before any walk below: a file nested past the limit is
        // refused here, so no ledger holds what a walk could not take.
        do { try carried.checkNesting() } catch { throw Refusal(reason: "\(error)") }
        func nothingNew() -> Received {
            Received(
                inspection: id, fromDevice: file.fromDevice, recorded: false, records: file.records.count,
                photos: file.photoFiles.count, pinnedTemplate: false, sha256: sha256, merged: !stream.isEmpty)
        }
        // Every event folded here: this device's own, and what its
        // receptions carried (this device's records carried back among them).
        let held = stream.isEmpty ? nil : try ledger.state(of: id)
        let folded = Set(stream.map(\.id)).union(held?.carriedEventIDs ?? [])
        var startedHere: UUID?
        var sameFileBefore = false
        try ledger.log.read { reader in
            for record in stream {
                if record.type == InspectionEventType.started.rawValue { startedHere = record.id }
                guard record.type == InspectionEventType.received.rawValue,
                    case .received(let received) = try CarriedClosure.event(of: record, reader: reader)
                else { continue }
                if received.fileSHA256 == sha256 { sameFileBefore = true }
                startedHere = try startedHere ?? received.startedRecord()?.id
            }
        }
        if file.fromDevice == device {
            guard try carried.newEventIDs(besides: folded).isEmpty else {
                throw Conflict.sharedDeviceID(id, device: device)
            }
            throw Conflict.ownFile(id)
        }
        if sameFileBefore { return nothingNew() }
        if !stream.isEmpty {
            let startedThere = try carried.startedRecord()?.id
            if let startedHere, let startedThere, startedHere != startedThere { throw Conflict.otherInspection(id) }
            if try carried.newEventIDs(besides: folded).isEmpty { return nothingNew() }
        }
        // Photo files first, by hash: a file stays unnamed only if the
        // event then fails, and `jqc check --photos` lists it.
        for photo in file.photoFiles {
            let prepared = try ledger.photos.prepare(data: photo.data, name: "photo \(photo.sha256.hex.prefix(12))")
            try ledger.photos.keep(prepared)
        }
        var events: [InspectionEvent] = []
        let pin = try ledger.pinnedTemplate(hash: verified.template.templateHash) == nil
        if pin { events.append(.templatePinned(verified.template)) }
        events.append(.received(carried))
        try ledger.record(
            events, stream: id, expectedVersion: UInt64(stream.count), actor: actor, device: device, at: clock.now(),
            carrying: carried.carried)
        var received = Received(
            inspection: id, fromDevice: file.fromDevice, recorded: true, records: file.records.count,
            photos: file.photoFiles.count, pinnedTemplate: pin, sha256: sha256, merged: !stream.isEmpty)
        if let after = try ledger.state(of: id) { received.changes = ReceptionChanges(before: held, after: after) }
        return received
    }

    static func read(_ path: String) throws -> [UInt8] {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw HandoverFile.Unreadable(reason: "cannot read \(path): \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maximumFileSize + 1) ?? Data()
        } catch {
            throw HandoverFile.Unreadable(reason: "cannot read \(path): \(error.localizedDescription)")
        }
        guard data.count <= maximumFileSize else {
            throw HandoverFile.Unreadable(reason: "\(path) is larger than \(maximumFileSize >> 20) MiB")
        }
        return Array(data)
    }
}
