import FoundationEssentials
import InspectionDomain
import LedgerCore

extension Reception {
    /// Why a handover file was refused: nothing was recorded.
    ///
    /// One case per check of `HandoverVerification` (numbered as in
    /// `Schemas/ledger-format.md` § Handover files) and of a reception's
    /// carried part, so a caller or a test tells them apart by kind; `reason`
    /// is the clause a person reads after `NOT VERIFIED:`.
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        // 1. The bundle, and its records as jqc reads them.

        /// The bundle's own check failed, in `BundleCheck`'s words (and its
        /// detail, when it gives one).
        case bundle(reason: String, detail: String?)
        /// The bundle's key is not the one of the device the file names.
        case keyOfAnotherDevice(key: String, device: UUID)
        /// A record of the file was recorded by another device than the sender.
        case recordOfAnotherDevice(path: String, device: UUID)
        /// A record's bytes are no event record.
        case recordUnreadable(path: String, why: String)
        /// A record's bytes read, but are not in deterministic CBOR.
        case recordNotDeterministic(path: String)

        // 2. The photo files.

        /// `photo_files` does not hold one file per photo.
        case photoFileCount(files: Int, photos: Int)
        /// A photo file's bytes are not its photo's.
        case photoFileNotItsPhoto(index: Int, photo: UUID)
        /// A `carried_photo_files` entry is the file of no photo a carried
        /// record names, or one `photo_files` holds already.
        case carriedPhotoFileUnnamed(index: Int, sha256: Digest256)
        /// A photo a carried record names has no file in `carried_photo_files`.
        case carriedPhotoFileMissing(photo: UUID, sha256: Digest256)
        /// A photo file the photo store would refuse (`PhotoStore.Failure.refusedFile`).
        case photoFileRefused(path: String, sha256: Digest256, refusedFile: String)
        /// A photo file that could not be read back to be checked.
        case photoFileUncheckable(path: String, sha256: Digest256, why: String)

        // 3. The handover record.

        /// The last record is not the sender's `inspection.handed_over`.
        case lastRecordNotHandedOver
        /// The file's mode or `to` is not the handover record's.
        case modeOrToDiffers
        /// The file's `to_device` is not the handover record's.
        case toDeviceDiffers(file: UUID?, record: UUID?)

        // 4. The template.

        /// `template_record` is not one of the sender's `template.pinned` records.
        case templateRecordNotPinned
        /// The pinned template does not hash to the hash it is pinned under.
        case templateHashDiffers
        /// No record, held or carried, starts the inspection.
        case noStart
        /// The template pinned is not the one the inspection started with.
        case templateNotStarted(pinned: String, started: String)

        // 5. Every record an event.

        /// A record does not read as an event of its type.
        case eventUnreadable(type: String, position: UInt64, why: String)

        // The receptions the file carries.

        /// A reception among the records cannot be read with what it carries.
        case carriedReceptionUnreadable(why: String)
        /// The carried part does not resolve, or nests past the bounds a walk takes.
        case carriedRecords(why: String)
        /// A version-3 part continues a version this ledger does not hold.
        case continuationNotHeld(Continued)
        /// The record held under the continued leaf is not that version.
        case continuationNotThatRecord(Continued)
        /// No earlier reception of the recorder references the continued version.
        case continuationNotTheRecorders(Continued, recorder: UUID)

        /// The version of the sender's stream a version-3 part continues.
        public struct Continued: Equatable, Sendable {
            public var version: UInt64
            public var device: UUID
            public var leaf: Digest256

            var wording: String { "version \(version) of device \(device.lowercased)'s stream (leaf \(leaf.hex))" }
        }

        public var description: String { "NOT VERIFIED: \(reason); nothing was recorded." }

        /// What failed, as a clause.
        public var reason: String {
            switch self {
            case .bundle(let reason, let detail):
                reason + (detail.map { " (\($0))" } ?? "")
            case .keyOfAnotherDevice(let key, let device):
                "the key \(BundleCheck.shown(key)) is not the key of from_device \(device.lowercased)"
            case .recordOfAnotherDevice(let path, let device):
                "\(path) was recorded by device \(device.lowercased), not from_device"
            case .recordUnreadable(let path, let why):
                "\(path).record cannot be read: \(why)"
            case .recordNotDeterministic(let path):
                "\(path).record is not in deterministic CBOR"
            case .photoFileCount(let files, let photos):
                "photo_files has \(files) files for \(photos) photos"
            case .photoFileNotItsPhoto(let index, let photo):
                "photo_files[\(index)] is not the file of photo \(photo.lowercased) (its SHA-256 differs)"
            case .carriedPhotoFileUnnamed(let index, let sha256):
                "carried_photo_files[\(index)] (\(sha256.hex)) is the file of no photo a carried "
                    + "record names, or one photo_files holds already"
            case .carriedPhotoFileMissing(let photo, let sha256):
                "carried_photo_files lacks the file of photo \(photo.lowercased) "
                    + "(\(sha256.hex)), which a carried record names"
            case .photoFileRefused(let path, let sha256, let refusedFile):
                "\(path) (file \(sha256.hex)) \(refusedFile)"
            case .photoFileUncheckable(let path, let sha256, let why):
                "\(path) (file \(sha256.hex)) cannot be checked: \(why)"
            case .lastRecordNotHandedOver:
                "the last record is not the sender's inspection.handed_over"
            case .modeOrToDiffers:
                "mode or to differs from the sender's inspection.handed_over record"
            case .toDeviceDiffers(let file, let record):
                "to_device (\(file?.lowercased ?? "null")) differs from the sender's inspection.handed_over "
                    + "record (\(record?.lowercased ?? "null"))"
            case .templateRecordNotPinned:
                "template_record is not one of from_device's template.pinned records"
            case .templateHashDiffers:
                "template_record's template does not hash to the hash it is pinned under"
            case .noStart:
                "the records hold no inspection.started"
            case .templateNotStarted(let pinned, let started):
                "template_record pins template \(pinned), the inspection started with \(started)"
            case .eventUnreadable(let type, let position, let why):
                "the \(type) record at \(position) cannot be read: \(why)"
            case .carriedReceptionUnreadable(let why):
                "a reception it carries cannot be read: \(why)"
            case .carriedRecords(let why):
                why
            case .continuationNotHeld(let continued):
                "its records continue \(continued.wording), which this ledger does not hold: a gap in the sender's "
                    + "stream"
            case .continuationNotThatRecord(let continued):
                "its records continue \(continued.wording), but the record held under that leaf is not it"
            case .continuationNotTheRecorders(let continued, let recorder):
                "its records continue \(continued.wording), but no earlier reception from that device recorded by "
                    + "device \(recorder.lowercased) in this inspection references that version: the "
                    + "continuation is not the recorder's own, so the records before it are not proven to be "
                    + "the ones its earlier receptions hold"
            }
        }
    }
}
