import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore
import Testing

@Suite struct EventWordingTests {
    static let stream = AuditSamples.inspection
    static let photo = AuditSamples.photo(1)
    static let later = Timestamp(iso8601: "2026-11-29T12:00:00.5Z")!

    static let cases: [(InspectionEvent, String)] = [
        (.fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(4))), "set Floors (2) = 4"),
        (.fieldSet(FieldAnswer(fieldID: "77", fieldType: .rating, value: .rating(4))), "set field 77 = 4"),
        (
            .fieldSet(FieldAnswer(fieldID: "9", fieldType: .textarea, value: .text("a \"b\"\n"))),
            #"set Notes (9) = "a \"b\"\n""#
        ),
        (
            .fieldSet(FieldAnswer(fieldID: "5", fieldType: .passFail, value: .passFail(.unanswered))),
            #"set Soap stocked (5) = "" (unanswered)"#
        ),
        (.fieldCleared(FieldCleared(fieldID: "2")), "cleared Floors (2)"),
        (
            .issueFlagged(IssueFlagged(issueID: AuditSamples.issue, severity: .high, description: "Leaking tap")),
            "flagged issue 02b566d5… high: Leaking tap"
        ),
        (
            .photoUploaded(PhotoUploaded(photoID: photo.photoID, serverPath: "/uploads/a1.png")),
            "uploaded photo 01000000… → /uploads/a1.png"
        ),
        (
            .syncAttemptFailed(
                SyncAttemptFailed(
                    item: SyncItem(kind: .inspection, id: stream), attempt: 2, error: "server busy", httpStatus: 503,
                    willRetry: true, nextAttemptAt: later)),
            "sync attempt 2 for the inspection failed (HTTP 503): server busy, retry at 2026-11-29T12:00:00.500000Z"
        ),
        (
            .syncAttemptFailed(
                SyncAttemptFailed(
                    item: SyncItem(kind: .photo, id: photo.photoID), attempt: 5, error: "timed out", willRetry: false)),
            "sync attempt 5 for photo 01000000… failed: timed out, no retry"
        ),
        (
            .syncGaveUp(SyncGaveUp(item: SyncItem(kind: .issue, id: AuditSamples.issue), error: "refused")),
            "sync gave up on issue 02b566d5…: refused"
        ),
        (
            .syncRetryRequested(SyncRetryRequested(item: SyncItem(kind: .issue, id: AuditSamples.issue))),
            "retry requested for issue 02b566d5…"
        ),
        (.inspectionAccepted(InspectionAccepted(serverID: "481")), "the server accepted the inspection as 481"),
        (
            .handedOver(InspectionHandedOver(mode: .handover, to: "Lee")),
            "handed over to Lee: this device records nothing more on it"
        ),
        (.handedOver(InspectionHandedOver(mode: .share, to: nil)), "shared a copy, keeping the right to record"),
        (
            .issueAccepted(IssueAccepted(issueID: AuditSamples.issue, serverID: "77")),
            "the server accepted issue 02b566d5… as 77"
        ),
        (
            .submitted(InspectionSubmitted(score: 83.33, followUpRequired: true)),
            "submitted the inspection: score 83.33, follow-up required"
        ),
        (
            .submitted(InspectionSubmitted(score: nil, followUpRequired: false)),
            "submitted the inspection: no score (nothing scoreable answered), follow-up not required"
        ),
        (.discarded(InspectionDiscarded(reason: "wrong facility")), "discarded the draft: wrong facility"),
        (.discarded(InspectionDiscarded()), "discarded the draft (no reason given)"),
        (
            .photoCaptured(PhotoCaptured(photo: photo, kind: .signature, fieldID: "11")),
            "captured signature 01000000… (image/png, 73 bytes, sha256 \(photo.sha256.hex.prefix(12))…) for Signature (11)"
        ),
        (
            .started(
                InspectionStarted(
                    templateID: "11", templateHash: AuditSamples.template.contentHash, facilityID: "101",
                    facilityName: "Riverside", parentInspectionID: AuditSamples.issue,
                    prefilled: [FieldAnswer(fieldID: "9", fieldType: .textarea, value: .text("x"))])),
            "started the inspection from template 11 \"Restroom QC\" version 3 at Riverside (101); "
                + "re-inspection of 02b566d5…, 1 answer copied from it"
        ),
        (
            .syncDismissed(
                SyncDismissed(item: SyncItem(kind: .photo, id: AuditSamples.issue), reason: "wrong room")),
            "dismissed photo 02b566d5…, failed for good, from the outbox: wrong room"
        ),
        (
            .sendAdopted(
                InspectionSendAdopted(submittedOnDevice: AuditSamples.issue, submitEvent: AuditSamples.issue)),
            "adopted the sending of the submission recorded on device \(AuditSamples.issue.lowercased) (submit "
                + "record 02b566d5…): this device sends it, looked up on the server first"
        ),
        (
            .unrecognized(StoredPayload(type: "inspection.renamed", schemaVersion: 4, payload: [0xA0])),
            "an event of a type this jqc does not know: inspection.renamed version 4 (1 payload bytes)"
        ),
    ]

    @Test(arguments: cases)
    func describesEachEventInWords(event: InspectionEvent, words: String) {
        #expect(EventWording.describe(event, stream: Self.stream, template: AuditSamples.template) == words)
    }

    @Test func aDescriptionWithALineBreakStaysOnOneLine() {
        let event = InspectionEvent.issueFlagged(
            IssueFlagged(issueID: AuditSamples.issue, severity: .low, description: "two\nlines"))
        let words = EventWording.describe(event, stream: Self.stream, template: nil)
        #expect(!words.contains("\n"))
        #expect(words.hasSuffix(#"low: "two\nlines""#))
    }
}
