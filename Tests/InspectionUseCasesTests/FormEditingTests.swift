import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `jqc edit`'s round trip without `jqc` or an editor: the form as text,
/// the changed lines as commands, refusals put back on top until the
/// answers are accepted or the person gives up.
@Suite struct FormEditingTests {
    struct Editing {
        let audited: AuditAssemblyTests.Audited
        let ledger: InspectionLedger
        let document: FormDocument
        let notes: TemplateField

        init() throws {
            audited = try AuditAssemblyTests.Audited()
            ledger = try InspectionLedger(
                storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .recording)
            let state = try #require(try ledger.state(of: audited.inspection))
            let template = try #require(state.template)
            document = FormDocument(template: template, state: state)
            notes = try template.field(matching: "Notes")
        }

        var notesLine: String { "[\(notes.id)] \(notes.label) = second" }

        func record(_ commands: [InspectionCommand]) throws -> InspectionLedger.Recorded {
            try ledger.record(
                commands, on: audited.inspection, by: audited.actor, device: audited.device, clock: audited.clock)
        }
    }

    @Test func theFormReadsBackToNoChange() throws {
        let editing = try Editing()
        defer { editing.ledger.close() }
        #expect(editing.document.text.contains(editing.notesLine + "\n"))
        #expect(try editing.document.commands(from: editing.document.text).isEmpty)
        let outcome = try FormEditing(document: editing.document).edit(
            in: { $0 },
            record: { _ in
                Issue.record("nothing to record"); throw EditError.abandoned(.savedUnchangedAfterRefusal)
            },
            refused: { Issue.record("nothing to refuse") })
        guard case .unchanged = outcome else {
            Issue.record("expected no change: \(outcome)")
            return
        }
    }

    @Test func aMalformedLineIsPutBackOnTopThenTheFixIsRecorded() throws {
        let editing = try Editing()
        defer { editing.ledger.close() }
        var shown: [String] = []
        var refusals = 0
        let outcome = try FormEditing(document: editing.document).edit(
            in: { text in
                shown.append(text)
                let changed = text.replacingOccurrences(
                    of: editing.notesLine, with: "[\(editing.notes.id)] \(editing.notes.label) = third")
                return shown.count == 1
                    ? changed + "no brackets here\n" : changed.replacingOccurrences(of: "no brackets here\n", with: "")
            },
            record: editing.record, refused: { refusals += 1 })
        #expect(refusals == 1)
        #expect(shown.count == 2)
        #expect(shown[1].hasPrefix(FormDocument.refusalMarker + "line "))
        #expect(shown[1].contains("is not '[ID] LABEL = VALUE'"))
        guard case .recorded(let events, let after) = outcome else {
            Issue.record("not recorded: \(outcome)")
            return
        }
        #expect(events.count == 1)
        #expect(after.values[editing.notes.id] == .text("third"))
        #expect(try editing.ledger.state(of: editing.audited.inspection)?.values[editing.notes.id] == .text("third"))
    }

    /// How a person answers a refusal, and why editing then stops.
    static let givingUp:
        [(name: String, editor: @Sendable (String) -> String, reason: EditError.Abandonment, words: String)] = [
            (
                "saved unchanged after the refusal",
                { $0.contains(FormDocument.refusalMarker) ? $0 : $0 + "no brackets here\n" },
                .savedUnchangedAfterRefusal,
                "the document was saved unchanged after the refusal; nothing was recorded."
            ),
            (
                "another malformed line each time", { $0 + "no brackets \($0.count)\n" },
                .refusedInARow(times: FormEditing.mostRefusals), "refused 20 times in a row; nothing was recorded."
            ),
        ]

    @Test(arguments: givingUp.indices)
    func refusedUntilThePersonGivesUpRecordsNothing(_ index: Int) throws {
        let (_, editor, reason, words) = Self.givingUp[index]
        let editing = try Editing()
        defer { editing.ledger.close() }
        let before = try editing.ledger.state(of: editing.audited.inspection)?.eventCount
        var refusals = 0
        let error = #expect(throws: EditError.self) {
            try FormEditing(document: editing.document).edit(
                in: editor, record: editing.record, refused: { refusals += 1 })
        }
        #expect(error == .abandoned(reason))
        #expect(error?.description == words)
        #expect(refusals == (index == 0 ? 1 : FormEditing.mostRefusals))
        #expect(try editing.ledger.state(of: editing.audited.inspection)?.eventCount == before)
    }

    @Test func aClearedLineClearsAndAJSONStringKeepsLineBreaks() throws {
        let editing = try Editing()
        defer { editing.ledger.close() }
        let cleared = editing.document.text.replacingOccurrences(
            of: editing.notesLine, with: "[\(editing.notes.id)] \(editing.notes.label) =")
        #expect(try editing.document.commands(from: cleared) == [.clearField(field: editing.notes.id.rawValue)])
        let json = editing.document.text.replacingOccurrences(
            of: editing.notesLine, with: "[\(editing.notes.id)] \(editing.notes.label) = \"two\\nlines\"")
        #expect(
            try editing.document.commands(from: json) == [
                .setField(field: editing.notes.id.rawValue, to: .json(.string("two\nlines")))
            ])
    }
}
