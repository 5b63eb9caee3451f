import FoundationEssentials
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
    /// A capture refused because its field holds the other kind of picture:
    /// a photo aimed at a signature field, or a signature at an image field.
    public struct FieldHoldsOtherKind: Error, CustomStringConvertible, Equatable {
        /// The field's id.
        public let field: String
        /// What the field holds: `.signature` or `.image`.
        public let holds: FieldType
        /// The command that captures it, `sign` or `photo`.
        public var command: String { holds == .signature ? "sign" : "photo" }
        let fieldDescription: String
        let inspectionPrefix: String

        public var description: String {
            "\(fieldDescription) is \(holds == .signature ? "a signature" : "an image") field: "
                + "capture it with 'jqc \(command) \(inspectionPrefix) \(field) FILE'."
        }
    }

    /// Why a capture of `type` (`jqc photo`: an image, `jqc sign`: a
    /// signature) may not go to the field `reference` of the draft in
    /// `state`, because that field holds the other kind, naming the command
    /// that captures it; nil when it may, or when the decision refuses it
    /// for another reason (a completed inspection, an unknown field).
    public static func otherKind(of reference: String, in state: InspectionState, capturing type: FieldType)
        -> FieldHoldsOtherKind?
    {
        // An unknown field is the decision's to refuse, in its own words.
        guard state.isEditable, let template = state.template,
            let field = try? template.field(matching: reference), field.type != type, field.type.holdsPhoto
        else { return nil }
        return FieldHoldsOtherKind(
            field: "\(field.id)", holds: field.type, fieldDescription: "\(field.fieldDescription)",
            inspectionPrefix: String(state.id.lowercased.prefix(8)))
    }
}
