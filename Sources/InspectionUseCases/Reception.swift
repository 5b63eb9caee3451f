import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// Taking over an inspection from a handover file: everything verified
/// before anything is recorded, then the photos stored by hash, the template
/// pinned when this device does not hold it, and one `inspection.received`
/// that keeps the sender's records and proofs as the sender's.
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
        /// False when this very file was received before: nothing was recorded.
        public var recorded: Bool
        public var records: Int
        public var photos: Int
        public var pinnedTemplate: Bool
        public var sha256: Digest256
    }

    /// Why a handover file was refused: nothing was recorded.
    public struct Refusal: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { "NOT VERIFIED: \(reason); nothing was recorded." }
    }

    /// Why a file that verifies cannot be taken here.
    public enum Conflict: Error, CustomStringConvertible {
        case alreadyHeld(UUID)
        case ownFile(UUID)

        public var description: String {
            switch self {
            case .alreadyHeld(let id):
                "inspection \(id.lowercased) is already on this device from another record than this file; "
                    + "nothing was recorded (merging two devices' records of one inspection is not supported yet)."
            case .ownFile(let id):
                "this handover file of inspection \(id.lowercased) was written by this device; nothing was recorded. "
                    + "Receive it on the other device."
            }
        }
    }

    /// Reads, verifies and records the handover file at `path`.
    public func receive(file path: String, actor: Actor, clock: any LedgerClock) throws -> Received {
        let bytes = try Self.read(path)
        let sha256 = SHA256Hasher().digest(bytes)
        let file = try HandoverFile(decoding: bytes)
        let verified = try HandoverVerification.verify(file, receivedBy: device)
        let id = file.inspection
        let stream = try ledger.log.records(inStream: id)
        if !stream.isEmpty {
            for record in stream where record.type == InspectionEventType.received.rawValue {
                if case .received(let received) = try InspectionEvent.decode(record), received.fileSHA256 == sha256 {
                    return Received(
                        inspection: id, fromDevice: file.fromDevice, recorded: false, records: file.records.count,
                        photos: file.photoFiles.count, pinnedTemplate: false, sha256: sha256)
                }
            }
            throw Conflict.alreadyHeld(id)
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
        events.append(
            .received(
                InspectionReceived(
                    fromDevice: file.fromDevice, mode: file.mode, checkpoint: file.checkpoint,
                    publicKey: file.publicKey, keyRecord: file.keyRecord.carried,
                    templateRecord: file.templateRecord.carried, records: file.records.map(\.carried),
                    fileSHA256: sha256)))
        try ledger.record(events, stream: id, expectedVersion: 0, actor: actor, device: device, at: clock.now())
        return Received(
            inspection: id, fromDevice: file.fromDevice, recorded: true, records: file.records.count,
            photos: file.photoFiles.count, pinnedTemplate: pin, sha256: sha256)
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
