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

extension PhotoCapture {
    /// Why a capture of `type` (`jqc photo`: an image, `jqc sign`: a
    /// signature) may not go to the field `reference` of the draft in
    /// `state`, because that field holds the other kind, naming the command
    /// that captures it; nil when it may, or when the decision refuses it
    /// for another reason (a completed inspection, an unknown field).
    public static func otherKind(of reference: String, in state: InspectionState, capturing type: FieldType)
        -> String?
    {
        // An unknown field is the decision's to refuse, in its own words.
        guard state.isEditable, let template = state.template,
            let field = try? template.field(matching: reference), field.type != type, field.type.holdsPhoto
        else { return nil }
        let command = field.type == .signature ? "sign" : "photo"
        return "\(field.fieldDescription) is \(field.type == .signature ? "a signature" : "an image") field: "
            + "capture it with 'jqc \(command) \(state.id.lowercased.prefix(8)) \(field.id) FILE'."
    }
}
