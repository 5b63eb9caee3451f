import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// What `jqc fill` says, without `jqc` or a terminal: the opening, a
/// field's context and question, what an answer recorded, a path that names
/// no file, and how a sitting ends; person-written parts on one line.
@Suite struct FormFillingWordingTests {
    static let template = Template(
        id: "t", name: "Kitchen\nQC", version: 1,
        fields: [
            TemplateField(id: "s1", type: .section, label: "Front", row: 1),
            TemplateField(id: "hint", type: .label, label: "Ask\tat the desk", row: 2),
            TemplateField(id: "grade", type: .rating, label: "Floors", required: true, row: 3),
            TemplateField(id: "odor", type: .radio, label: "Odor", options: ["Good", "Poor\u{1B}[2J"], row: 4),
            TemplateField(id: "stock", type: .table, label: "Stock", columns: ["Item", "Count"], row: 5),
            TemplateField(id: "photo", type: .image, label: "Photo", row: 6),
        ])

    static func state(_ values: [FieldID: FieldValue] = [:]) -> InspectionState {
        var state = InspectionState(id: UUID(uuidString: "0a1b2c3d-0000-4000-8000-000000000001")!)
        state.template = template
        state.facilityName = "Cafe"
        state.values = values
        return state
    }

    @Test func theOpeningNamesTheInspectionAndTheKeys() {
        #expect(
            FormFilling.opening(Self.state(), template: Self.template) == [
                "Inspection 0a1b2c3d-0000-4000-8000-000000000001: Kitchen\\nQC at Cafe", FormFilling.keys,
            ])
    }

    @Test func aSectionComesAfterABlankLineALabelIndented() {
        #expect(
            FormFilling.contextLines(Array(Self.template.fields[0...1])) == [
                "", "== Front", "   Ask\tat the desk",
            ])
    }

    /// Each kind of field's question, and its answer now.
    @Test(arguments: [
        (2, nil as FieldValue?, ["[3/4] Floors (rating, required)", "  now: —"]),
        (3, .text("Good"), ["[3/4] Odor (radio)", "  options: Good, Poor\\u{1B}[2J", "  now: Good"]),
        (
            4, .table([["Soap", "3"]]),
            ["[3/4] Stock (table)", "  columns: Item, Count (rows ';', cells ',')", "  now: Soap,3"]
        ),
        (5, nil, ["[3/4] Photo (image)", "  give the path of an image file", "  now: —"]),
    ])
    func eachFieldIsAsked(index: Int, current: FieldValue?, lines: [String]) {
        #expect(
            FormFilling.question(Self.template.fields[index], number: 3, of: 4, current: current) == [""] + lines)
    }

    @Test func whatAnAnswerRecordedIsSaid() throws {
        let grade = Self.template.fields[2]
        #expect(FormFilling.recorded([]) == ["  unchanged"])
        #expect(
            FormFilling.recorded([.fieldSet(FieldAnswer(field: grade, value: .text("4\n5")))])
                == ["  recorded: 4\n5"])
        #expect(FormFilling.recorded([.fieldCleared(FieldCleared(fieldID: grade.id))]) == ["  cleared"])
    }

    @Test func aPathThatNamesNoFileOffersTheFilesThatStartSo() throws {
        let temporary = TemporaryDirectory(prefix: "fill-wording")
        for name in ["shot-1.png", "shot-2.png", ".shot-hidden.png", "other.png"] {
            try Data().write(to: URL(fileURLWithPath: temporary.appending(name)))
        }
        #expect(
            FormFilling.noFile(temporary.appending("shot"))
                == "  refused: no file \(temporary.appending("shot")). Files there that start so: "
                + "\(temporary.appending("shot-1.png")), \(temporary.appending("shot-2.png"))")
        #expect(
            FormFilling.noFile(temporary.appending("none")) == "  refused: no file \(temporary.appending("none")).")
    }

    /// How a sitting ends: what is missing, the score, and whether the submit question follows.
    @Test(arguments: [
        (false, [FieldID: FieldValue](), false, ["", "Still required: Floors", "Score so far: none"]),
        (true, ["grade": .rating(4)], false, ["", "Score so far: 80.00"]),
        (false, ["grade": .rating(4)], true, ["", "Score so far: 80.00"]),
    ])
    func aSittingEnds(stopped: Bool, values: [FieldID: FieldValue], canSubmit: Bool, lines: [String]) {
        let closing = FormFilling.closing(
            Self.state(values), template: Self.template, stopped: stopped, reference: "0a1b")
        let goOn = "Every answer given is recorded. Continue with 'jqc fill 0a1b'."
        #expect(closing.lines == lines + (canSubmit ? [] : [goOn]))
        #expect(closing.canSubmit == canSubmit)
    }

    @Test func aSubmitSaysTheScoreAndHowToReinspect() {
        var state = Self.state()
        #expect(
            FormFilling.submitted(state, followUp: false, reference: "0a1b") == [
                "Submitted 0a1b2c3d-0000-4000-8000-000000000001: score none (nothing scoreable answered)"
            ])
        state.score = 87.5
        #expect(
            FormFilling.submitted(state, followUp: true, reference: "0a1b") == [
                "Submitted 0a1b2c3d-0000-4000-8000-000000000001: score 87.50",
                "Follow-up required: re-inspect with 'jqc start --reinspect 0a1b'",
            ])
        #expect(FormFilling.notSubmitted(reference: "0a1b") == "Not submitted. Submit later with 'jqc submit 0a1b'.")
    }
}
