import FoundationEssentials
import LedgerCore

/// A field named the way every message names it: id, label and type, e.g.
/// `field 2 "Floors" (rating)`, so a person can find it on the form.
public struct FieldDescription: Hashable, Sendable, CustomStringConvertible {
    public var id: FieldID
    public var label: String
    public var type: FieldType

    public init(id: FieldID, label: String, type: FieldType) {
        self.id = id
        self.label = label
        self.type = type
    }

    public var description: String { "field \(id) \"\(label)\" (\(type))" }

    /// The short form used in lists: `2 "Floors"`.
    var short: String { "\(id) \"\(label)\"" }
}

/// Why the domain refused input, a command or stored bytes.
///
/// Every message says what failed, why, and what to do, and names the field
/// (id and label) or the inspection it is about, because it is shown to an
/// inspector on a tablet or a terminal with no one to ask.
public enum DomainError: Error, Equatable, Sendable, CustomStringConvertible {
    // MARK: Input

    /// Text that should be JSON is not.
    case invalidJSON(reason: String)
    /// An id (field, template, facility, area, server record) cannot be normalised.
    case invalidID(what: String, raw: String, reason: String)

    // MARK: Templates

    /// A template from the server does not have the shape the contract gives.
    case invalidTemplate(template: String, reason: String)
    /// A template field has a type this program does not know.
    case unknownFieldType(template: String, field: FieldID, label: String, type: String)
    /// A template field is inconsistent (no options for a choice, a layout off the grid, …).
    case invalidTemplateField(template: String, field: FieldDescription, reason: String)

    // MARK: Fields and values

    /// No field has the id or label a person gave.
    case unknownField(reference: String, template: String, candidates: [FieldDescription])
    /// Several fields have the label a person gave.
    case ambiguousField(reference: String, template: String, candidates: [FieldDescription])
    /// A value does not fit its field.
    case valueRefused(field: FieldDescription, input: String, reason: String)
    /// Section and label fields never hold a value.
    case displayOnlyField(FieldDescription)
    /// Signature and image fields take a captured file, not typed text.
    case photoFieldNeedsCapture(FieldDescription)
    /// A photo was aimed at a field that does not hold photos.
    case notAPhotoField(FieldDescription)
    /// A photo reference is incomplete or malformed.
    case invalidPhoto(reason: String)

    // MARK: Lifecycle

    /// A command other than start was given for an inspection never started.
    case inspectionNotStarted(UUID)
    /// Start was given for an inspection that already has events.
    case inspectionAlreadyStarted(UUID)
    /// A submitted or discarded inspection cannot change.
    case inspectionNotEditable(UUID, status: InspectionStatus)
    /// Submit was refused because required fields are empty.
    case requiredFieldsEmpty(UUID, missing: [FieldDescription])
    /// Only drafts can be discarded.
    case discardNotDraft(UUID, status: InspectionStatus)
    /// The inspection was handed over to another device, which records it now.
    case handedOver(UUID, to: String, at: Timestamp)
    /// A handover file cannot be written for the inspection.
    case handoverRefused(UUID, reason: String)
    /// This device holds a read-only copy: the plain handover it received
    /// was bound to another device, which alone records on it.
    case readOnlyCopy(UUID, addressedTo: UUID)
    /// A handover file carries a record that breaks the pinned template's
    /// rules (a rating outside its scale): the file is refused whole.
    case carriedRecordRefused(inspection: UUID, CarriedRuleBreak)
    /// A sync outcome, retry or dismissal names an item the inspection does
    /// not have, or one in no state for it.
    case syncItemRefused(UUID, SyncItem, reason: String)
    /// A command on the device's own stream is refused (`DeviceState.decide`).
    case deviceStreamRefused(UUID, reason: String)
    /// This device cannot become the sender of the inspection's submission.
    case adoptionRefused(UUID, AdoptionRefusal)
    /// A re-inspection needs a submitted parent.
    case parentNotCompleted(parent: UUID, status: InspectionStatus)
    /// A re-inspection needs a parent whose follow-up is still open.
    case parentNeedsNoFollowUp(parent: UUID)
    /// A re-inspection of a server record needs that record's follow-up still open.
    case serverParentNeedsNoFollowUp(serverID: String)
    /// The inspection's template is not in the state (its `template.pinned` event was not applied).
    case templateNotPinned(inspection: UUID, templateHash: String)
    /// A start command named something empty or malformed (facility name, area, …).
    case invalidStart(reason: String)
    /// An issue severity that is not low, medium, high or critical.
    case unknownSeverity(String)
    /// An issue without a description.
    case emptyIssueDescription
    /// A command named an issue this inspection does not have.
    case unknownIssue(UUID)
    /// A command named a photo this inspection does not have.
    case unknownPhoto(UUID)
    /// An issue or photo id is already used in this inspection.
    case duplicateID(what: String, UUID)

    // MARK: Stored events

    /// A payload's bytes do not have the shape of its type and version.
    case malformedPayload(type: String, schemaVersion: Int, reason: String)
    /// A payload was written by a newer version of this program.
    case unsupportedSchemaVersion(type: String, schemaVersion: Int, newest: Int)
    /// An old payload could not be read as the current version.
    case upcastFailed(type: String, schemaVersion: Int, reason: String)
    /// An old payload was given to the plain decoder, which reads only current
    /// versions; `EventUpcaster.decode` reads every version.
    case upcastRequired(type: String, schemaVersion: Int)

    public var description: String {
        // Each family words its own cases; this switch is the one that must
        // name every case, so a new one cannot be left without words.
        switch self {
        case .invalidJSON, .invalidID, .invalidTemplate, .unknownFieldType, .invalidTemplateField:
            inputText
        case .unknownField, .ambiguousField, .valueRefused, .displayOnlyField, .photoFieldNeedsCapture, .notAPhotoField,
            .invalidPhoto:
            fieldText
        case .handedOver, .handoverRefused, .readOnlyCopy, .carriedRecordRefused, .deviceStreamRefused,
            .syncItemRefused, .adoptionRefused:
            custodyText
        case .inspectionNotStarted, .inspectionAlreadyStarted, .inspectionNotEditable, .requiredFieldsEmpty,
            .discardNotDraft, .parentNotCompleted, .parentNeedsNoFollowUp, .serverParentNeedsNoFollowUp,
            .templateNotPinned, .invalidStart, .unknownSeverity, .emptyIssueDescription, .unknownIssue, .unknownPhoto,
            .duplicateID:
            lifecycleText
        case .malformedPayload, .unsupportedSchemaVersion, .upcastFailed, .upcastRequired:
            storedEventText
        }
    }

    /// The input and template texts.
    private var inputText: String {
        switch self {
        case .invalidJSON(let reason):
            "The JSON could not be read: \(reason). Check the text is one complete JSON value."
        case .invalidID(let what, let raw, let reason):
            "The \(what) \"\(raw)\" is not usable: \(reason). Use a whole number such as 5."
        case .invalidTemplate(let template, let reason):
            "Template \(template) cannot be used: \(reason). Pull templates again; if it persists, the server's template is broken."
        case .unknownFieldType(let template, let field, let label, let type):
            "Template \(template) cannot be used: field \(field) \"\(label)\" has the type \"\(type)\", which this jqc does not know. Upgrade jqc."
        case .invalidTemplateField(let template, let field, let reason):
            "Template \(template) cannot be used: \(field) \(reason). Fix the template on the server and pull templates again."
        default:
            preconditionFailure("not an input or template error: `description` sends each case to its family")
        }
    }

    /// The texts of a field and the value given for it.
    private var fieldText: String {
        switch self {
        case .unknownField(let reference, let template, let candidates):
            "No field \"\(reference)\" in template \(template): no field has that id or label."
                + (Self.likely(reference, among: candidates).map { " Did you mean \"\($0.label)\" (\($0.id))?" } ?? "")
                + " Use one of: \(Self.list(candidates))."
        case .ambiguousField(let reference, let template, let candidates):
            "Field \"\(reference)\" is ambiguous in template \(template): \(candidates.count) fields have that label (\(Self.list(candidates))). Name the field by its id."
        case .valueRefused(let field, let input, let reason):
            "\(field) refuses \"\(input)\": \(reason)"
        case .displayOnlyField(let field):
            "\(field) cannot hold a value: section and label fields are only text on the form. Set an input field instead."
        case .photoFieldNeedsCapture(let field):
            field.type == .signature
                ? "\(field) takes a captured signature, not typed text: capture an image of it with 'jqc sign ID \(field.id) FILE'."
                : "\(field) takes a captured file, not typed text: attach a photo with 'jqc photo ID \(field.id) FILE'."
        case .notAPhotoField(let field):
            "\(field) does not hold photos: only image and signature fields do. Attach the photo to an image field, an issue or the inspection itself."
        case .invalidPhoto(let reason):
            "The photo cannot be recorded: \(reason). Capture it again."
        default:
            preconditionFailure("not a field error: `description` sends each case to its family")
        }
    }

    /// The texts of who records an inspection: a handover, a copy, the sync outcomes, the device stream, an adoption.
    private var custodyText: String {
        switch self {
        case .handedOver(let id, let to, let at):
            "Inspection \(id.lowercased) was handed over to \(to) at \(at.iso8601) and is recorded there now: "
                + "nothing more is recorded on it here. Continue it on that device."
        case .handoverRefused(let id, let reason):
            "Inspection \(id.lowercased) cannot be handed over: \(reason). Nothing was recorded."
        case .readOnlyCopy(let id, let device):
            "Inspection \(id.lowercased) is a read-only copy on this device: the handover file it came in was "
                + "addressed to device \(device.lowercased), which alone records and submits it; nothing was "
                + "recorded. Show or audit it here; to record on it here, ask that device to share it with this one "
                + "('jqc handover ID --share -o FILE' there, then 'jqc receive FILE' here)."
        case .carriedRecordRefused(let id, let broken):
            "NOT RECEIVED: the handover file of inspection \(id.lowercased) carries \(broken). This device would "
                + "refuse to record it, so it may not reach the form or the score through a file either; nothing "
                + "was recorded. Ask the sender's owner how that device recorded it (an older or altered jqc), and "
                + "for a file without it."
        case .deviceStreamRefused(let device, let reason):
            "Nothing was recorded on the stream of device \(device.lowercased): \(reason)."
        case .syncItemRefused(let id, let item, let reason):
            "Nothing was recorded for \(item) of inspection \(id.lowercased): \(reason). 'jqc outbox' lists the "
                + "items and their states."
        case .adoptionRefused(let id, let refusal):
            "Inspection \(id.lowercased) cannot be adopted for sending: \(refusal.reason(id))."
        default:
            preconditionFailure("not a custody error: `description` sends each case to its family")
        }
    }

    /// The texts of an inspection's lifecycle: start, edits, submit, discard, re-inspections, issues and photos.
    private var lifecycleText: String {
        switch self {
        case .inspectionNotStarted(let id):
            "Inspection \(id.lowercased) has not been started. Start it first with 'jqc start'."
        case .inspectionAlreadyStarted(let id):
            "Inspection \(id.lowercased) was already started. Continue it instead of starting it again."
        case .inspectionNotEditable(let id, let status):
            "Inspection \(id.lowercased) cannot change: it is \(status), and only a draft can be edited: a submitted inspection stays as it was recorded."
        case .requiredFieldsEmpty(let id, let missing):
            "Inspection \(id.lowercased) cannot be submitted: required fields are empty: \(missing.map(\.description).joined(separator: ", ")). Fill them in, then submit again."
        case .discardNotDraft(let id, let status):
            status == .discarded
                ? "Inspection \(id.lowercased) is already discarded; nothing changed."
                : "Inspection \(id.lowercased) cannot be discarded: it is \(status), and only a draft can be discarded. A submitted inspection stays on record."
        case .parentNotCompleted(let parent, let status):
            "Cannot start a re-inspection of \(parent.lowercased): it is \(status), not completed. Submit it first."
        case .parentNeedsNoFollowUp(let parent):
            "Cannot start a re-inspection of \(parent.lowercased): it does not need a follow-up (none was asked for, or a re-inspection already resolved it)."
        case .serverParentNeedsNoFollowUp(let serverID):
            "Cannot start a re-inspection of the server's record \(serverID): it does not need a follow-up (none was asked for, or a re-inspection already resolved it). 'jqc history show \(serverID)' shows it."
        case .templateNotPinned(let id, let hash):
            "Inspection \(id.lowercased) cannot be changed: its template \(hash) is not known here. Rebuild the views; if it persists, the ledger lacks the template.pinned event."
        case .invalidStart(let reason):
            "The inspection cannot be started: \(reason)."
        case .unknownSeverity(let severity):
            "The severity \"\(severity)\" is not known: an issue is low, medium, high or critical. Choose one of those."
        case .emptyIssueDescription:
            "The issue has no description: an issue needs one so someone can act on it. Describe what is wrong."
        case .unknownIssue(let id):
            "No issue \(id.lowercased) in this inspection. 'jqc issues' lists the issues and their ids."
        case .unknownPhoto(let id):
            "No photo \(id.lowercased) in this inspection. Capture it first with 'jqc photo'."
        case .duplicateID(let what, let id):
            "The \(what) id \(id.lowercased) is already used in this inspection. Use a new id."
        default:
            preconditionFailure("not a lifecycle error: `description` sends each case to its family")
        }
    }

    /// The texts of stored events that cannot be read.
    private var storedEventText: String {
        switch self {
        case .malformedPayload(let type, let version, let reason):
            "A stored \(type) event (schema version \(version)) cannot be read: \(reason). Run 'jqc verify'; the record may be damaged."
        case .unsupportedSchemaVersion(let type, let version, let newest):
            "A stored \(type) event has schema version \(version), newer than this jqc reads (\(newest)). Upgrade jqc."
        case .upcastFailed(let type, let version, let reason):
            "A stored \(type) event of schema version \(version) cannot be read as the current version: \(reason). Report it; the log is unchanged."
        case .upcastRequired(let type, let version):
            "A stored \(type) event has the old schema version \(version), which only EventUpcaster.decode reads (it needs the inspection's template). Decode through EventUpcaster."
        default:
            preconditionFailure("not a stored-event error: `description` sends each case to its family")
        }
    }
    /// The one field a person most likely meant by a label that matched
    /// none: the only label holding `reference`'s words, whole and next to
    /// each other ("Trash" or "emptied" for "Trash emptied"), ignoring case
    /// and punctuation; nil when none or several do, or it is under three
    /// letters.
    static func likely(_ reference: String, among fields: [FieldDescription]) -> FieldDescription? {
        let wanted = reference.trimmingWhiteSpace.lowercased()
        guard wanted.count >= 3 else { return nil }
        let matching = fields.filter { field in
            let words = field.label.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber })
            let wantedWords = wanted.split(whereSeparator: { !$0.isLetter && !$0.isNumber })
            guard !wantedWords.isEmpty, wantedWords.count <= words.count else { return false }
            // The typed words appear in order, next to each other, in the label.
            return (0...(words.count - wantedWords.count)).contains { start in
                Array(words[start..<(start + wantedWords.count)]) == wantedWords
            }
        }
        return matching.count == 1 ? matching[0] : nil
    }

    static func list(_ fields: [FieldDescription]) -> String {
        fields.isEmpty ? "(the template has no fields)" : fields.map(\.short).joined(separator: ", ")
    }
}
