import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore

/// Capturing a photo or a signature: the file read and hashed first
/// (`PhotoStore.prepare`), kept in the photo store only once the decision
/// accepts it (on every attempt of a retried decision), then recorded by
/// hash; when the event does not commit, the file it would have named goes
/// too, so a refused capture leaves nothing behind.
public struct PhotoCapture {
    public let photos: PhotoStore

    public init(photos: PhotoStore) { self.photos = photos }

    /// The reference an event records for `prepared`: a new photo id, its hash, size and media type.
    public static func reference(_ prepared: PhotoStore.PreparedPhoto) -> PhotoReference {
        PhotoReference(
            photoID: UUID(), sha256: Digest256(hex: prepared.description.sha256)!,
            size: prepared.description.size, mediaType: prepared.description.mediaType)
    }

    /// Records the capture of `prepared` for `target`: `recording` decides
    /// and records the command, calling `keep` after each decision and
    /// before its append.
    public func record(
        _ prepared: PhotoStore.PreparedPhoto, for target: PhotoTarget,
        recording: (InspectionCommand, _ keep: () throws -> Void) throws -> InspectionLedger.Recorded
    ) throws -> InspectionLedger.Recorded {
        var added = false
        do {
            return try recording(.capturePhoto(Self.reference(prepared), for: target)) {
                // A retried decision keeps it again: the file was added if any attempt added it.
                added = try photos.keep(prepared) || added
            }
        } catch {
            // The event did not commit: the file it would have named goes too.
            if added { photos.discard(prepared) }
            throw error
        }
    }
}
