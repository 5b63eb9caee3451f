import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `jqc fill`'s walk without `jqc` or a terminal: the layout order, where a
/// sitting resumes, the headings shown before a field, the prompt's keys and
/// the image path typed for a photo field.
@Suite struct FormFillingTests {
    /// A form drawn out of template order: a section, a label and three
    /// inputs over two sections, `name` required.
    static let template = Template(
        id: "t", name: "Kitchen", version: 1,
        fields: [
            TemplateField(id: "notes", type: .text, label: "Notes", row: 5),
            TemplateField(id: "s1", type: .section, label: "Front", row: 1),
            TemplateField(id: "name", type: .text, label: "Name", required: true, col: 7, row: 2, colSpan: 6),
            TemplateField(id: "hint", type: .label, label: "Ask at the desk", row: 3),
            TemplateField(id: "date", type: .text, label: "Date", col: 1, row: 2, colSpan: 6),
            TemplateField(id: "s2", type: .section, label: "Back", row: 4),
        ])

    static func state(_ values: [FieldID: String]) -> InspectionState {
        var state = InspectionState(id: UUID())
        state.template = template
        state.values = values.mapValues { .text($0) }
        return state
    }

    @Test func theFieldsComeInLayoutOrderAndOnlyInputsAreAsked() {
        let walk = FormFilling(template: Self.template, state: Self.state([:]))
        #expect(walk.fields.map(\.id) == ["s1", "date", "name", "hint", "s2", "notes"])
        #expect(walk.inputs.map { walk.fields[$0].id } == ["date", "name", "notes"])
        #expect(walk.total == 3)
    }

    @Test(
        arguments: [
            ([:], "name"),  // the first required field still empty
            (["name": "Ann"], "date"),  // else the first without an answer
            (["name": "Ann", "date": "1 May"], "notes"),
            (["name": "Ann", "date": "1 May", "notes": "ok"], "date"),  // else the top
        ] as [([FieldID: String], FieldID)])
    func aSittingResumesWhereTheFormNeedsIt(_ values: [FieldID: String], _ first: FieldID) {
        #expect(FormFilling(template: Self.template, state: Self.state(values)).current?.id == first)
    }

    @Test func theContextShowsTheSectionOnceAndAgainAfterGoingBack() {
        var walk = FormFilling(template: Self.template, state: Self.state(["name": "Ann", "notes": "ok"]))
        #expect(walk.current?.id == "date")
        #expect(walk.context().map(\.id) == ["s1"])
        #expect(walk.context().isEmpty)  // the same field asked again
        walk.advance()
        #expect(walk.current?.id == "name")
        #expect(walk.context().isEmpty)
        walk.advance()
        #expect(walk.current?.id == "notes")
        #expect(walk.context().map(\.id) == ["hint", "s2"])
        walk.goBack()
        #expect(walk.current?.id == "name")
        #expect(walk.context().map(\.id) == ["s1"])
        walk.advance()
        walk.advance()
        #expect(walk.current == nil)
        #expect(walk.context().isEmpty)
        walk.advance()
        #expect(walk.position == walk.total)
    }

    @Test(arguments: [
        ("", FormFilling.Reply.keep), ("  ", .keep), ("q", .stop), ("Q", .stop), (" < ", .back), ("?", .help),
        ("-", .clear), ("\\-", .answer("-")), ("\\q", .answer("q")), (" yes ", .answer(" yes ")),
        ("quit", .answer("quit")),
    ])
    func aReplyIsAKeyOrAnAnswer(_ line: String, _ reply: FormFilling.Reply) {
        #expect(FormFilling.reply(line) == reply)
    }

    @Test(arguments: [
        (" /tmp/a.jpg ", "/tmp/a.jpg"), ("'/tmp/a b.jpg'", "/tmp/a b.jpg"), ("\"/tmp/c.png\"", "/tmp/c.png"),
        ("'/tmp/d.png", "'/tmp/d.png"), ("~/e.jpg", "/home/ann/e.jpg"), ("'~/f.jpg'", "/home/ann/f.jpg"),
    ])
    func anImagePathIsUnquotedAndHomeExpanded(_ typed: String, _ path: String) {
        #expect(FormFilling.imagePath(typed, home: "/home/ann") == path)
    }

    @Test func withoutAHomeTheTildeStays() {
        #expect(FormFilling.imagePath("~/e.jpg", home: nil) == "~/e.jpg")
    }

    @Test func suggestionsAreTheVisibleFilesThatStartSoUpToTheLimit() throws {
        let directory = TemporaryDirectory()
        for name in ["photo-b.jpg", "photo-a.jpg", ".photo-hidden.jpg", "plan.pdf", "photo-c.jpg"] {
            try Data().write(to: URL(fileURLWithPath: directory.appending(name)))
        }
        let base = directory.path
        let all = FormFilling.suggestions(for: base + "/photo")
        #expect(all.paths == ["photo-a.jpg", "photo-b.jpg", "photo-c.jpg"].map { base + "/" + $0 })
        #expect(!all.more)
        let two = FormFilling.suggestions(for: base + "/", limit: 2)
        #expect(two.paths == ["photo-a.jpg", "photo-b.jpg"].map { base + "/" + $0 })
        #expect(two.more)
        #expect(FormFilling.suggestions(for: base + "/none/x").paths.isEmpty)
    }

    @Test(arguments: [("y", true), (" YES ", true), ("Yes", true), ("n", false), ("", false), ("yep", false)])
    func yesIsYOrYes(_ reply: String, _ yes: Bool) {
        #expect(FormFilling.isYes(reply) == yes)
    }

    @Test func noReplyIsNo() {
        #expect(!FormFilling.isYes(nil))
    }
}
