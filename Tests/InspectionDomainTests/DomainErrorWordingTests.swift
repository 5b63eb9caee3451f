import Foundation
import LedgerCore
import Testing

@testable import InspectionDomain

/// `DomainError.description` sends each case to the words of its family
/// (input, fields, custody, lifecycle, stored events), and each family
/// asserts it was given one of its own: every case, worded, proves the
/// dispatch sends none to another family.
@Suite struct DomainErrorWordingTests {
    static let id = Samples.uuid(1)
    static let other = Samples.uuid(2)
    static let field = FieldDescription(id: "2", label: "Floors", type: .rating)
    static let signature = FieldDescription(id: "3", label: "Signature", type: .signature)
    static let at = Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
    static let ruleBreak = CarriedRuleBreak(record: id, device: other, position: 7, field: field, rule: "out of scale")

    /// Every case, with the inspection (or field, or type) its words name.
    static let cases: [(DomainError, named: String)] = [
        (.invalidJSON(reason: "r"), "JSON"), (.invalidID(what: "facility id", raw: "x", reason: "r"), "facility id"),
        (.invalidTemplate(template: "T9", reason: "r"), "T9"),
        (.unknownFieldType(template: "T9", field: "2", label: "L", type: "dial"), "dial"),
        (.invalidTemplateField(template: "T9", field: field, reason: "r"), "Floors"),
        (.unknownField(reference: "Flo", template: "T9", candidates: [field]), "Flo"),
        (.ambiguousField(reference: "Floors", template: "T9", candidates: [field, field]), "Floors"),
        (.valueRefused(field: field, input: "eleven", reason: "r"), "eleven"), (.displayOnlyField(field), "Floors"),
        (.photoFieldNeedsCapture(signature), "jqc sign"), (.notAPhotoField(field), "Floors"),
        (.invalidPhoto(reason: "no size"), "no size"), (.inspectionNotStarted(id), id.lowercased),
        (.inspectionAlreadyStarted(id), id.lowercased), (.inspectionNotEditable(id, status: .completed), id.lowercased),
        (.requiredFieldsEmpty(id, missing: [field]), "Floors"),
        (.discardNotDraft(id, status: .discarded), id.lowercased),
        (.handedOver(id, to: "device b", at: at), "device b"), (.handoverRefused(id, reason: "r"), id.lowercased),
        (.readOnlyCopy(id, addressedTo: other), other.lowercased),
        (.carriedRecordRefused(inspection: id, ruleBreak), "out of scale"),
        (.syncItemRefused(id, SyncItem(kind: .photo, id: other), reason: "r"), id.lowercased),
        (.deviceStreamRefused(other, reason: "r"), other.lowercased),
        (.adoptionRefused(id, .submittedHere), id.lowercased),
        (.parentNotCompleted(parent: id, status: .draft), id.lowercased),
        (.parentNeedsNoFollowUp(parent: id), id.lowercased), (.serverParentNeedsNoFollowUp(serverID: "S-12"), "S-12"),
        (.templateNotPinned(inspection: id, templateHash: "abc123"), "abc123"),
        (.invalidStart(reason: "no facility name"), "no facility name"), (.unknownSeverity("dire"), "dire"),
        (.emptyIssueDescription, "issue"), (.unknownIssue(other), other.lowercased),
        (.unknownPhoto(other), other.lowercased), (.duplicateID(what: "issue", other), other.lowercased),
        (.malformedPayload(type: "inspection.field_set", schemaVersion: 2, reason: "r"), "inspection.field_set"),
        (.unsupportedSchemaVersion(type: "inspection.field_set", schemaVersion: 9, newest: 2), "inspection.field_set"),
        (.upcastFailed(type: "inspection.field_set", schemaVersion: 1, reason: "r"), "inspection.field_set"),
        (.upcastRequired(type: "inspection.field_set", schemaVersion: 1), "inspection.field_set"),
    ]

    @Test(arguments: cases.indices)
    func everyCaseIsWordedByItsFamily(index: Int) {
        let (error, named) = Self.cases[index]
        #expect(error.description.contains(named), "\(error.description)")
    }
}
