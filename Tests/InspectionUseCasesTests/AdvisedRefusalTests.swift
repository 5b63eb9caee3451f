import Foundation
import InspectionDomain
import Testing

@testable import InspectionUseCases

/// A refusal advised with the `jqc` command that works, from the
/// inspection's state alone (no ledger, no `jqc`), and a capture sent to a
/// field of the other photo kind.
@Suite struct AdvisedRefusalTests {
    static let id = UUID(uuidString: "0A1B2C3D-1111-2222-3333-444444444444")!

    static func state(_ status: InspectionStatus, followUp: Bool = false, resolved: Bool = false, area: String? = nil)
        -> InspectionState
    {
        var state = InspectionState(id: id)
        state.status = status
        state.templateID = "11"
        state.facilityID = "101"
        state.areaID = area
        state.followUpRequired = followUp
        state.followUpResolvedBy = resolved ? UUID() : nil
        return state
    }

    /// The state, and the advice a refused change of it gets.
    @Test(arguments: [
        (state(.completed, followUp: true), "To record new findings, re-inspect it: 'jqc start --reinspect 0a1b2c3d'."),
        (
            state(.completed, followUp: true, resolved: true),
            "To inspect again, start a new inspection: 'jqc start --template 11 --facility 101'."
        ),
        (state(.completed), "To inspect again, start a new inspection: 'jqc start --template 11 --facility 101'."),
        (
            state(.discarded, area: "7"),
            "To record it after all, start a new inspection: 'jqc start --template 11 --facility 101 --area 7'."
        ),
    ])
    func aClosedInspectionIsAdvisedTheCommandThatWorks(state: InspectionState, next: String) throws {
        let refusal = DomainError.inspectionNotEditable(Self.id, status: state.status)
        let advised = try #require(AdvisedRefusal.advising(refusal, state) as? AdvisedRefusal)
        #expect(advised.next == next)
        #expect(advised.description == "\(refusal) \(next)")
    }

    @Test func emptyRequiredFieldsAreAdvisedSetAndFill() throws {
        let refusal = DomainError.requiredFieldsEmpty(Self.id, missing: [])
        let advised = try #require(AdvisedRefusal.advising(refusal, Self.state(.draft)) as? AdvisedRefusal)
        #expect(
            advised.next
                == "Answer them with 'jqc set 0a1b2c3d FIELD=VALUE …', or field by field with 'jqc fill 0a1b2c3d'.")
    }

    @Test func anotherRefusalIsLeftAsItIs() {
        let refusal = DomainError.unknownField(reference: "x", template: "11", candidates: [])
        let error = AdvisedRefusal.advising(refusal, Self.state(.draft))
        #expect(!(error is AdvisedRefusal))
        #expect("\(error)" == "\(refusal)")
    }

    /// The field aimed at, what the command captures, and the refusal (nil: left to the decision).
    @Test(
        arguments: [
            (
                "Sign here", FieldType.image,
                "field sig \"Sign here\" (signature) is a signature field: capture it with 'jqc sign 0a1b2c3d sig FILE'."
            ),
            (
                "pic", .signature,
                "field pic \"Picture\" (image) is an image field: capture it with 'jqc photo 0a1b2c3d pic FILE'."
            ),
            ("pic", .image, nil), ("sig", .signature, nil), ("notes", .image, nil), ("nothing", .image, nil),
        ] as [(String, FieldType, String?)])
    func aCaptureForTheOtherKindOfFieldNamesItsCommand(field: String, type: FieldType, refusal: String?) {
        var state = Self.state(.draft)
        state.template = Template(
            id: "11", name: "Kitchen", version: 1,
            fields: [
                TemplateField(id: "pic", type: .image, label: "Picture"),
                TemplateField(id: "sig", type: .signature, label: "Sign here"),
                TemplateField(id: "notes", type: .text, label: "Notes"),
            ])
        let found = PhotoCapture.otherKind(of: field, in: state, capturing: type)
        #expect(found?.description == refusal)
        #expect(found?.holds == (refusal == nil ? nil : type == .image ? FieldType.signature : .image))
        state.status = .completed
        #expect(PhotoCapture.otherKind(of: field, in: state, capturing: type) == nil)
    }
}
