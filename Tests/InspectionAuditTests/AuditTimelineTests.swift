import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore
import Testing

@Suite struct AuditTimelineTests {
    let records = AuditSamples.records(AuditSamples.everyEvent())

    @Test func everyEventTypeIsInTheTimelineInOrder() {
        // The samples, and a dismissal of a photo that failed for good (kept
        // out of `AuditSamples`, whose positions other suites count on).
        let samples = AuditSamples.everyEvent()
        let photo = SyncItem(kind: .photo, id: AuditSamples.photo(1).photoID)
        let records = AuditSamples.records(
            samples + [
                (.syncGaveUp(SyncGaveUp(item: photo, error: "gone")), samples[0].1),
                (.syncDismissed(SyncDismissed(item: photo, reason: "lost with the phone")), samples[0].1),
            ])
        let timeline = AuditTimeline(inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(records))
        #expect(timeline.entries.map(\.position) == Array(1...UInt64(records.count)))
        let types = Set(timeline.entries.compactMap { $0.event?.eventType })
        // Every type but `inspection.discarded`, which cannot follow a submit, the handover's
        // two (HandoverCommandTests audits a received inspection) and `inspection.send_adopted`,
        // which needs another device's submission (AdoptSendingEndToEndTests audits one).
        #expect(
            types == Set(InspectionEventType.allCases).subtracting([.discarded, .handedOver, .received, .sendAdopted]))
        #expect(timeline.problems.isEmpty)
        #expect(timeline.state.status == .completed)
        #expect(timeline.state.values["2"] == .rating(4))
    }

    @Test func eachFieldChangeReadsOldToNew() {
        let timeline = AuditTimeline(inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(records))
        let summaries = timeline.entries.map(\.summary)
        #expect(summaries[2] == "set Floors (2): (unanswered) → 3")
        #expect(summaries[3] == "set Floors (2): 3 → 4")
        #expect(summaries[4] == #"set Notes (9): (unanswered) → "Tap drips\nall day""#)
        #expect(summaries[5] == #"cleared Notes (9): "Tap drips\nall day" → (unanswered)"#)
        let change = timeline.entries[3].changes
        #expect(
            change == [FieldChange(fieldID: "2", label: "Floors", fieldType: .rating, old: .rating(3), new: .rating(4))]
        )
        #expect(timeline.entries[5].changes.first?.new == nil)
    }

    @Test func eventsThatChangedNothingAreMarked() {
        let timeline = AuditTimeline(inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(records))
        let afterSubmit = timeline.entries[11]
        #expect(afterSubmit.summary == "set Floors (2): 4 → 1")
        #expect(afterSubmit.hadNoEffect)
        #expect(afterSubmit.changes.isEmpty)
        #expect(!timeline.entries[3].hadNoEffect)
        // A sync outcome changes the sync facts, so it had an effect.
        #expect(!timeline.entries[15].hadNoEffect)
        #expect(timeline.entries.filter(\.isSyncOutcome).count == 6)
    }

    @Test func asOfAPositionFoldsOnlyUpToIt() {
        let timeline = AuditTimeline(
            inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(records), through: 4)
        #expect(timeline.entries.count == 4)
        #expect(timeline.state.status == .draft)
        #expect(timeline.state.values["2"] == .rating(4))
        #expect(timeline.lastPosition == 4)
    }

    @Test func theMomentOfATimeIsTheLastEventRecordedAtOrBeforeIt() throws {
        let entries = AuditSamples.entries(records)
        let third = records[2].recordedAt
        let (position, time) = try #require(AuditReport.position(of: .time(third, wholeDay: false), in: entries))
        #expect(position == 3 && time == third)
        let justBefore = Timestamp(microsecondsSinceEpoch: third.microsecondsSinceEpoch - 1)
        #expect(AuditReport.position(of: .time(justBefore, wholeDay: false), in: entries)?.0 == 2)
        #expect(AuditReport.position(of: .position(7), in: entries)?.0 == 7)
        let before = Timestamp(microsecondsSinceEpoch: AuditSamples.start.microsecondsSinceEpoch - 1)
        #expect(AuditReport.position(of: .time(before, wholeDay: false), in: entries) == nil)
        #expect(AuditReport.position(of: .position(0), in: entries) == nil)
    }

    @Test func holesInTheStreamAreEntriesWithTheirReason() {
        var entries = AuditSamples.entries(records)
        entries[4] = .missing(streamVersion: 5, position: 5)
        entries[6] = .unreadable(streamVersion: 7, position: 7, reason: "malformed record: trailing bytes")
        entries.remove(at: 9)  // the index entry itself is gone: version 10 is skipped
        let timeline = AuditTimeline(inspectionID: AuditSamples.inspection, entries: entries)
        #expect(
            timeline.entries.filter { !$0.problems.isEmpty }.map(\.problems) == [
                [.recordRemoved(position: 5, version: 5)],
                [.notARecord(position: 7, reason: "malformed record: trailing bytes")],
                [.versionsMissing(first: 10, last: 10)],
            ])
        // Each named by its position, when it has one.
        #expect(
            timeline.problems.map { $0.prefix(11) } == ["position 5:", "position 7:", "stream vers"])
        #expect(timeline.entries.count == records.count)
    }

    @Test func aRecordOfAnotherStreamIsFlagged() {
        var stray = records
        stray[3].event.stream = UUID()
        let timeline = AuditTimeline(inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(stray))
        #expect(timeline.entries[3].problems == [.ofAnotherInspection(stray[3].event.stream)])
    }

    @Test func anUndecodableEventIsKeptWithItsReason() {
        var broken = records
        broken[2].event.payload = CBORValue.text("not a map").encoded()
        let timeline = AuditTimeline(inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(broken))
        #expect(timeline.entries[2].event == nil)
        #expect(timeline.entries[2].summary == "(undecodable inspection.field_set event)")
        guard case .undecodable(InspectionEventType.fieldSet.rawValue, _, _)? = timeline.entries[2].problems.first
        else {
            Issue.record("not undecodable: \(timeline.entries[2].problems)")
            return
        }
        #expect(timeline.state.values["2"] == .rating(4))
    }

    @Test func aTemplatePinnedElsewhereIsUsedWhenGiven() {
        let withoutPin = AuditSamples.records(Array(AuditSamples.everyEvent().dropFirst()))
        let bare = AuditTimeline(inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(withoutPin))
        #expect(bare.state.template == nil)
        #expect(bare.entries[1].summary == "set field 2: (unanswered) → 3")
        let hash = AuditSamples.template.contentHash
        #expect(AuditTimeline.templateHash(in: AuditSamples.entries(withoutPin)) == hash)
        let named = AuditTimeline(
            inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(withoutPin),
            templates: [hash: AuditSamples.template])
        #expect(named.entries[1].summary == "set Floors (2): (unanswered) → 3")
        #expect(AuditTimeline.pinnedTemplates(in: AuditSamples.entries(records))[hash]?.position == 1)
    }

    @Test func photosAreListedWithTheirPositions() {
        let timeline = AuditTimeline(inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(records))
        let photos = timeline.capturedPhotos
        #expect(photos.map(\.entry.position) == [7, 9])
        #expect(photos.map(\.captured.photo) == [AuditSamples.photo(1), AuditSamples.photo(2)])
    }

    @Test func aFollowUpIsClearedByTheReinspectionSubmittedFirst() {
        let timeline = AuditTimeline(inspectionID: AuditSamples.inspection, entries: AuditSamples.entries(records))
        func child(_ n: UInt8, submittedAt micros: Int64?) -> LinkedInspection {
            LinkedInspection(
                id: UUID(uuid: (n, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0)),
                status: micros == nil ? .draft : .completed, templateID: "11", facilityName: "x", startedAt: nil,
                startedPosition: 30, completedAt: micros.map { Timestamp(microsecondsSinceEpoch: $0) },
                submittedPosition: micros.map { UInt64($0) }, score: nil, followUpRequired: false)
        }
        let open = child(1, submittedAt: nil)
        #expect(AuditReport.form(of: timeline, children: [open]).followUpResolvedBy == nil)
        let (late, early, tied) = (child(2, submittedAt: 50), child(4, submittedAt: 40), child(3, submittedAt: 40))
        #expect(AuditReport.form(of: timeline, children: [open, late, early, tied]).followUpResolvedBy == tied.id)
    }
}
