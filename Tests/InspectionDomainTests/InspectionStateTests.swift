import Foundation
import InspectionDomain
import LedgerCore
import Testing

@Suite struct InspectionStateTests {
    // MARK: - Start

    @Test func startPinsTheTemplateFirst() throws {
        let template = try Samples.restroom()
        let state = InspectionState(id: Samples.uuid(1))
        let events = try state.decide(
            .start(
                StartInspection(
                    template: template, templateAlreadyPinned: false, facilityID: " 003 ", facilityName: "Harbor Tower")
            ))
        #expect(
            events == [
                .templatePinned(TemplatePinned(template: template)),
                .started(
                    InspectionStarted(
                        templateID: "11", templateHash: template.contentHash, facilityID: "3",
                        facilityName: "Harbor Tower")),
            ])
    }

    @Test func startDoesNotPinTwice() throws {
        let template = try Samples.restroom()
        let events = try InspectionState(id: Samples.uuid(1)).decide(
            .start(StartInspection(template: template, templateAlreadyPinned: true, facilityID: "3", facilityName: "H"))
        )
        #expect(events.map(\.typeName) == ["inspection.started"])
    }

    @Test func aStartedInspectionIsADraftWithItsTemplate() throws {
        let inspection = try Inspection.started(try Samples.restroom())
        let state = inspection.state
        #expect(state.status == .draft)
        #expect(state.template == (try Samples.restroom()))
        #expect(state.templateID == "11")
        #expect(state.facilityID == "3")
        #expect(state.areaID == "12")
        #expect(state.areaName == "Level 2 restrooms")
        #expect(state.startedBy == Samples.actor)
        #expect(state.eventCount == 2)
    }

    @Test func aTemplatePinnedInAnotherStreamIsFoundByHash() throws {
        let template = try Samples.restroom()
        var state = InspectionState(id: Samples.uuid(2))
        state.apply(
            .started(
                InspectionStarted(
                    templateID: "11", templateHash: template.contentHash, facilityID: "3", facilityName: "H")),
            recordedAt: Samples.time(1), actor: Samples.actor, pinnedTemplates: [template.contentHash: template])
        #expect(state.template == template)
    }

    @Test func startingTwiceIsRefused() throws {
        let inspection = try Inspection.started(try Samples.restroom())
        #expect(throws: DomainError.inspectionAlreadyStarted(Samples.uuid(1))) {
            try inspection.state.decide(
                .start(
                    StartInspection(
                        template: try Samples.restroom(), templateAlreadyPinned: true, facilityID: "3",
                        facilityName: "H")))
        }
    }

    @Test func commandsBeforeTheStartAreRefused() {
        let state = InspectionState(id: Samples.uuid(1))
        #expect(throws: DomainError.inspectionNotStarted(Samples.uuid(1))) {
            try state.decide(.setField(field: "2", to: .text("4")))
        }
        #expect(throws: DomainError.inspectionNotStarted(Samples.uuid(1))) { try state.decide(.discard(reason: nil)) }
    }

    @Test func aStartNeedsAFacility() throws {
        let error = #expect(throws: DomainError.self) {
            try InspectionState(id: Samples.uuid(1)).decide(
                .start(
                    StartInspection(
                        template: try Samples.restroom(), templateAlreadyPinned: true, facilityID: "", facilityName: "H"
                    )))
        }
        #expect({ if case .invalidID(what: "facility id", _, _)? = error { true } else { false } }())
    }

    // MARK: - Fields

    @Test func setsAFieldByLabelWithATypedValue() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        let events = try inspection.run(.setField(field: "floors", to: .text("4")))
        #expect(events == [.fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(4)))])
        #expect(inspection.state.values["2"] == .rating(4))
        #expect(
            try inspection.run(.setField(field: "2", to: .json(.integer(4)))) == [], "same value: nothing to record")
        try inspection.run(.setField(field: "Odor", to: .value(.option("poor"))))
        #expect(inspection.state.values["8"] == .option("Poor"))
    }

    @Test func refusesAValueThatDoesNotFitAndRecordsNothing() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        let before = inspection.state
        let error = #expect(throws: DomainError.self) { try inspection.run(.setField(field: "Floors", to: .text("7"))) }
        #expect(
            error?.description
                == #"field 2 "Floors" (rating) refuses "7": a rating is a whole number from 0 to 5 (0 means unanswered)."#
        )
        #expect(inspection.state == before)
    }

    @Test func refusesAFieldTheTemplateLacks() throws {
        let inspection = try Inspection.started(try Samples.restroom())
        let error = #expect(throws: DomainError.self) {
            try inspection.state.decide(.setField(field: "99", to: .text("x")))
        }
        guard case .unknownField(let reference, let template, _)? = error else {
            Issue.record("expected unknownField, got \(String(describing: error))")
            return
        }
        #expect(reference == "99")
        #expect(template == #"11 "Restroom QC""#)
    }

    @Test func displayOnlyFieldsHoldNothing() throws {
        let inspection = try Inspection.started(try Samples.restroom())
        let section = FieldDescription(id: "1", label: "Restroom condition", type: .section)
        #expect(throws: DomainError.displayOnlyField(section)) {
            try inspection.state.decide(.setField(field: "Restroom condition", to: .text("x")))
        }
        #expect(throws: DomainError.displayOnlyField(section)) { try inspection.state.decide(.clearField(field: "1")) }
    }

    @Test func clearsAField() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        try inspection.run(.setField(field: "Notes", to: .text("Sticky floor")))
        #expect(try inspection.run(.clearField(field: "notes")) == [.fieldCleared(FieldCleared(fieldID: "9"))])
        #expect(inspection.state.values["9"] == nil)
        #expect(try inspection.run(.clearField(field: "9")) == [], "already empty: nothing to record")
    }

    @Test func aPhotoFieldValueMustBeACaptureOfThisInspection() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        #expect(throws: DomainError.unknownPhoto(Samples.photo(1).photoID)) {
            try inspection.state.decide(.setField(field: "10", to: .value(.photo(Samples.photo(1)))))
        }
        try inspection.run(.capturePhoto(Samples.photo(1), for: .inspection))
        #expect(
            try inspection.run(.setField(field: "10", to: .value(.photo(Samples.photo(1)))))
                == [.fieldSet(FieldAnswer(fieldID: "10", fieldType: .image, value: .photo(Samples.photo(1))))])
    }

    // MARK: - Photos and issues

    @Test func capturingForAFieldRecordsTheFileAndTheAnswer() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        let photo = Samples.photo(1)
        let events = try inspection.run(.capturePhoto(photo, for: .field("Photo of problem area")))
        #expect(
            events == [
                .photoCaptured(PhotoCaptured(photo: photo, kind: .photo, fieldID: "10")),
                .fieldSet(FieldAnswer(fieldID: "10", fieldType: .image, value: .photo(photo))),
            ])
        let signature = Samples.photo(2, mediaType: "image/png")
        try inspection.run(.capturePhoto(signature, for: .field("11")))
        #expect(inspection.state.photos.map(\.kind) == [.photo, .signature])
        #expect(inspection.state.values["11"] == .photo(signature))
    }

    @Test func refusesPhotosThatCannotBeRecorded() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        let floors = FieldDescription(id: "2", label: "Floors", type: .rating)
        #expect(throws: DomainError.notAPhotoField(floors)) {
            try inspection.state.decide(.capturePhoto(Samples.photo(1), for: .field("Floors")))
        }
        #expect(throws: DomainError.unknownIssue(Samples.uuid(77))) {
            try inspection.state.decide(.capturePhoto(Samples.photo(1), for: .issue(Samples.uuid(77))))
        }
        #expect(throws: DomainError.self) {
            try inspection.state.decide(.capturePhoto(Samples.photo(1, size: 0), for: .inspection))
        }
        try inspection.run(.capturePhoto(Samples.photo(1), for: .inspection))
        #expect(throws: DomainError.duplicateID(what: "photo", Samples.photo(1).photoID)) {
            try inspection.state.decide(.capturePhoto(Samples.photo(1), for: .inspection))
        }
    }

    @Test func flagsIssuesWithAnOptionalPhoto() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        let photo = Samples.photo(5)
        let events = try inspection.run(
            .flagIssue(
                FlagIssue(issueID: Samples.uuid(50), severity: " HIGH ", description: " Leak under sink ", photo: photo)
            ))
        #expect(
            events == [
                .photoCaptured(PhotoCaptured(photo: photo, kind: .photo, issueID: Samples.uuid(50))),
                .issueFlagged(
                    IssueFlagged(
                        issueID: Samples.uuid(50), severity: .high, description: "Leak under sink",
                        photoID: photo.photoID)),
            ])
        try inspection.run(
            .flagIssue(FlagIssue(issueID: Samples.uuid(51), severity: "low", description: "Scuffed door")))
        #expect(inspection.state.issues.map(\.severity) == [.high, .low])
        #expect(inspection.state.issues[0].photoID == photo.photoID)
        // A later photo for the second issue is linked to it.
        try inspection.run(.capturePhoto(Samples.photo(6), for: .issue(Samples.uuid(51))))
        #expect(inspection.state.issue(id: Samples.uuid(51))?.photoID == Samples.photo(6).photoID)
    }

    static let badIssues: [(String, String, DomainError)] = [
        ("urgent", "Leak", .unknownSeverity("urgent")),
        ("", "Leak", .unknownSeverity("")),
        ("low", "   ", .emptyIssueDescription),
    ]

    @Test(arguments: badIssues)
    func refusesIssuesWithoutSeverityOrDescription(severity: String, description: String, expected: DomainError) throws
    {
        let inspection = try Inspection.started(try Samples.restroom())
        #expect(throws: expected) {
            try inspection.state.decide(
                .flagIssue(FlagIssue(issueID: Samples.uuid(50), severity: severity, description: description)))
        }
    }

    // MARK: - Submit

    @Test func submitListsEveryEmptyRequiredField() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        let error = #expect(throws: DomainError.self) { try inspection.run(.submit(followUpRequired: false)) }
        #expect(
            error
                == .requiredFieldsEmpty(
                    Samples.uuid(1),
                    missing: [
                        FieldDescription(id: "2", label: "Floors", type: .rating),
                        FieldDescription(id: "3", label: "Toilets and urinals", type: .rating),
                        FieldDescription(id: "5", label: "Soap dispensers stocked", type: .passFail),
                    ]))
        #expect(
            error?.description.contains(
                #"required fields are empty: field 2 "Floors" (rating), field 3 "Toilets and urinals" (rating), field 5 "Soap dispensers stocked" (pass_fail). Fill them in"#
            )
                == true)
        // Unanswered values are empty too.
        try inspection.run(.setField(field: "2", to: .text("0")))
        try inspection.run(.setField(field: "3", to: .text("4")))
        try inspection.run(.setField(field: "5", to: .text("")))
        let again = #expect(throws: DomainError.self) { try inspection.run(.submit(followUpRequired: false)) }
        guard case .requiredFieldsEmpty(_, let missing)? = again else {
            Issue.record("expected requiredFieldsEmpty")
            return
        }
        #expect(missing.map(\.id) == ["2", "5"])
    }

    @Test func submitRecordsTheScore() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        try inspection.run(.setField(field: "2", to: .text("4")))
        try inspection.run(.setField(field: "3", to: .text("5")))
        try inspection.run(.setField(field: "5", to: .text("pass")))
        try inspection.run(.setField(field: "6", to: .text("fail")))
        let events = try inspection.run(.submit(followUpRequired: true))
        #expect(events == [.submitted(InspectionSubmitted(score: 70, followUpRequired: true))])
        #expect(inspection.state.status == .completed)
        #expect(inspection.state.score == 70)
        #expect(inspection.state.followUpRequired)
        #expect(inspection.state.completedAt != nil)
    }

    static func submitted() throws -> Inspection {
        var inspection = try Inspection.started(try Samples.restroom())
        for (field, value) in [("2", "4"), ("3", "5"), ("5", "pass")] {
            try inspection.run(.setField(field: field, to: .text(value)))
        }
        try inspection.run(.submit(followUpRequired: true))
        return inspection
    }

    static let edits: [InspectionCommand] = [
        .setField(field: "2", to: .text("1")),
        .clearField(field: "2"),
        .capturePhoto(Samples.photo(1), for: .field("10")),
        .flagIssue(FlagIssue(issueID: Samples.uuid(50), severity: "low", description: "Late find")),
        .submit(followUpRequired: false),
    ]

    @Test(arguments: edits)
    func aSubmittedInspectionCannotChange(command: InspectionCommand) throws {
        let inspection = try Self.submitted()
        let error = #expect(throws: DomainError.self) { try inspection.state.decide(command) }
        #expect(error == .inspectionNotEditable(Samples.uuid(1), status: .completed))
        #expect(error?.description.contains("only a draft can be edited") == true)
    }

    @Test(arguments: edits)
    func aDiscardedInspectionCannotChange(command: InspectionCommand) throws {
        var inspection = try Inspection.started(try Samples.restroom())
        try inspection.run(.discard(reason: nil))
        #expect(throws: DomainError.inspectionNotEditable(Samples.uuid(1), status: .discarded)) {
            try inspection.state.decide(command)
        }
    }

    // MARK: - Discard

    @Test func discardsADraft() throws {
        var inspection = try Inspection.started(try Samples.restroom())
        #expect(
            try inspection.run(.discard(reason: "  Wrong facility ")) == [
                .discarded(InspectionDiscarded(reason: "Wrong facility"))
            ])
        #expect(inspection.state.status == .discarded)
        #expect(inspection.state.discardReason == "Wrong facility")
    }

    @Test func aBlankReasonIsNoReason() throws {
        let inspection = try Inspection.started(try Samples.restroom())
        #expect(try inspection.state.decide(.discard(reason: " ")) == [.discarded(InspectionDiscarded(reason: nil))])
    }

    @Test func onlyADraftCanBeDiscarded() throws {
        let completed = try Self.submitted()
        #expect(throws: DomainError.discardNotDraft(Samples.uuid(1), status: .completed)) {
            try completed.state.decide(.discard(reason: nil))
        }
        var discarded = try Inspection.started(try Samples.restroom())
        try discarded.run(.discard(reason: nil))
        #expect(throws: DomainError.discardNotDraft(Samples.uuid(1), status: .discarded)) {
            try discarded.state.decide(.discard(reason: nil))
        }
    }

    // MARK: - Re-inspection

    /// A completed inspection of template 22 with every answerable field set.
    static func officeParent(followUp: Bool = true) throws -> Inspection {
        let office = try Samples.office()
        var parent = try Inspection.started(office, id: Samples.uuid(9))
        let answers: [(String, String)] = [
            ("2", "Ann Lee"), ("3", "ann@example.com"), ("4", "2026-01-05"), ("5", "12.50"), ("6", "Night"),
            ("7", "Desks, Lobby"), ("8", "4"), ("9", "2"), ("10", "fail"), ("11", "Pass"), ("12", "Soap,4,no"),
            ("13", "yes"),
        ]
        for (field, value) in answers { try parent.run(.setField(field: field, to: .text(value))) }
        try parent.run(.capturePhoto(Samples.photo(8), for: .field("14")))
        try parent.run(.submit(followUpRequired: followUp))
        return parent
    }

    @Test func aReinspectionCopiesOnlyNonScoringFields() throws {
        let parent = try Self.officeParent()
        var child = Inspection(id: Samples.uuid(10))
        let events = try child.run(.start(try StartInspection.reinspection(of: parent.state)))
        #expect(events.map(\.typeName) == ["inspection.started"], "the parent's template is already pinned")
        guard case .started(let started) = events[0] else { return }
        #expect(started.parentInspectionID == Samples.uuid(9))
        #expect(started.templateHash == parent.state.templateHash)
        #expect(started.facilityID == "3")
        #expect(started.areaID == "12")
        // text, email, date, number, select, checkbox_group, table — never
        // rating, pass_fail, radio, checkbox, signature or image.
        #expect(started.prefilled.map(\.fieldID) == ["2", "3", "4", "5", "6", "7", "12"])
        #expect(
            child.state.values == parent.state.values.filter { ["2", "3", "4", "5", "6", "7", "12"].contains($0.key) })
        #expect(child.state.values["5"] == .number(try ExactDecimal(parsing: "12.5")))
        #expect(child.state.parentInspectionID == Samples.uuid(9))
        #expect(child.state.status == .draft)
    }

    @Test func aReinspectionKeepsAPinnedTemplateThatTodaysRulesRefuse() throws {
        var parent = try Self.officeParent()
        parent.state.template?.fields[5].options = []
        #expect(throws: DomainError.self) { try parent.state.template?.validate() }
        let events = try InspectionState(id: Samples.uuid(10)).decide(
            .start(try StartInspection.reinspection(of: parent.state)))
        #expect(events.map(\.typeName) == ["inspection.started"])
    }

    @Test func aNewInspectionRefusesABrokenTemplate() throws {
        var template = try Samples.office()
        template.fields[5].options = nil
        #expect(throws: DomainError.self) {
            try InspectionState(id: Samples.uuid(1)).decide(
                .start(
                    StartInspection(
                        template: template, templateAlreadyPinned: false, facilityID: "3", facilityName: "H")))
        }
    }

    @Test func theCopyRuleIsStatedOnTheType() {
        let copied = FieldType.allCases.filter(\.copiesToReinspection)
        #expect(copied == [.text, .email, .textarea, .number, .date, .checkboxGroup, .select, .table])
    }

    @Test func aReinspectionNeedsACompletedParent() throws {
        let draft = try Inspection.started(try Samples.office(), id: Samples.uuid(9))
        #expect(throws: DomainError.parentNotCompleted(parent: Samples.uuid(9), status: .draft)) {
            try InspectionState(id: Samples.uuid(10)).decide(.start(try StartInspection.reinspection(of: draft.state)))
        }
    }

    @Test func aReinspectionNeedsAnOpenFollowUp() throws {
        let settled = try Self.officeParent(followUp: false)
        let error = #expect(throws: DomainError.self) {
            try InspectionState(id: Samples.uuid(10)).decide(
                .start(try StartInspection.reinspection(of: settled.state)))
        }
        #expect(error == .parentNeedsNoFollowUp(parent: Samples.uuid(9)))
        #expect(error?.description.contains("does not need a follow-up") == true)

        var resolved = try Self.officeParent()
        resolved.state.resolveFollowUp(by: Samples.uuid(10))
        #expect(!resolved.state.followUpOutstanding)
        #expect(throws: DomainError.parentNeedsNoFollowUp(parent: Samples.uuid(9))) {
            try InspectionState(id: Samples.uuid(11)).decide(
                .start(try StartInspection.reinspection(of: resolved.state)))
        }
    }

    // MARK: - Apply

    @Test func unknownEventsChangeNothingButTheCount() throws {
        let inspection = try Inspection.started(try Samples.restroom())
        let next = inspection.state.applying(
            .unrecognized(StoredPayload(type: "test.noted", schemaVersion: 1, payload: [0xA0])),
            recordedAt: Samples.time(50), actor: Samples.actor)
        var expected = inspection.state
        expected.eventCount += 1
        #expect(next == expected)
    }

    @Test func editsAfterSubmitInTheLogDoNotChangeTheRecord() throws {
        var inspection = try Self.submitted()
        let before = inspection.state
        inspection.state.apply(
            .fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(1))), recordedAt: Samples.time(60),
            actor: Samples.actor)
        inspection.state.apply(.discarded(InspectionDiscarded()), recordedAt: Samples.time(61), actor: Samples.actor)
        #expect(inspection.state.values == before.values)
        #expect(inspection.state.status == .completed)
    }

    @Test func syncFactsFollowTheirEvents() throws {
        var inspection = try Self.submitted()
        let photoItem = SyncItem(kind: .photo, id: Samples.photo(1).photoID)
        let inspectionItem = SyncItem(kind: .inspection, id: Samples.uuid(1))
        func apply(_ event: InspectionEvent) {
            inspection.state.apply(event, recordedAt: Samples.time(70), actor: Samples.actor)
        }
        #expect(inspection.state.sync.status(of: inspectionItem) == .pending)
        apply(
            .syncAttemptFailed(
                SyncAttemptFailed(
                    item: inspectionItem, attempt: 1, error: "timed out", willRetry: true,
                    nextAttemptAt: Samples.time(80))))
        guard case .retrying(let failure) = inspection.state.sync.status(of: inspectionItem) else {
            Issue.record("expected retrying")
            return
        }
        #expect(failure.attempts == 1)
        #expect(failure.nextAttemptAt == Samples.time(80))
        apply(.syncGaveUp(SyncGaveUp(item: inspectionItem, error: "HTTP 422: form_data.2: out of range")))
        guard case .failed(let gaveUp) = inspection.state.sync.status(of: inspectionItem) else {
            Issue.record("expected failed")
            return
        }
        #expect(gaveUp.lastError == "HTTP 422: form_data.2: out of range")
        apply(.syncRetryRequested(SyncRetryRequested(item: inspectionItem)))
        #expect(inspection.state.sync.status(of: inspectionItem) == .pending)
        apply(.inspectionAccepted(InspectionAccepted(serverID: "481")))
        #expect(inspection.state.sync.status(of: inspectionItem) == .synced)
        #expect(inspection.state.sync.serverID == "481")
        apply(.photoUploaded(PhotoUploaded(photoID: photoItem.id, serverPath: "/uploads/x.jpg")))
        #expect(inspection.state.sync.status(of: photoItem) == .synced)
        apply(.issueAccepted(IssueAccepted(issueID: Samples.uuid(50), serverID: "7")))
        #expect(inspection.state.sync.acceptedIssues[Samples.uuid(50)] == "7")
        // The inspector's record is untouched by sync.
        #expect(inspection.state.status == .completed)
        #expect(inspection.state.score == 93.33)
    }
}
