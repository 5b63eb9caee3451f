import Foundation
import InspectionAudit
import InspectionDomain
import LedgerCore

/// A small template and a stream of records built in memory, as the store
/// would hand them over, for tests of the pure audit code.
enum AuditSamples {
    static let template = Template(
        id: "11", name: "Restroom QC", version: 3,
        fields: [
            TemplateField(id: "1", type: .section, label: "Condition", col: 1, row: 1, colSpan: 12),
            TemplateField(id: "2", type: .rating, label: "Floors", required: true, col: 1, row: 2, colSpan: 4),
            TemplateField(id: "5", type: .passFail, label: "Soap stocked", col: 5, row: 2, colSpan: 8),
            TemplateField(id: "9", type: .textarea, label: "Notes", col: 1, row: 3, colSpan: 12),
            TemplateField(id: "10", type: .image, label: "Photo of problem area", col: 1, row: 4, colSpan: 6),
            TemplateField(id: "11", type: .signature, label: "Signature", col: 7, row: 4, colSpan: 6, rowSpan: 2),
        ])

    static let inspection = UUID(uuidString: "2b566894-99e1-46aa-ac44-e0042c7bd9af")!
    static let issue = UUID(uuidString: "02b566d5-851a-49f6-bdd5-b6f22c73d0a1")!
    static let device = UUID(uuidString: "dd747fdc-3a72-4567-b1af-f6ded5b73a2b")!
    static let dana = Actor(id: "local:dana", name: "dana", verified: false)
    static let sync = Actor(id: "7", name: "Dana Park", verified: true)
    static let start = Timestamp(microsecondsSinceEpoch: 1_795_000_000_123_456)

    static func photo(_ n: UInt8, size: Int = 73) -> PhotoReference {
        PhotoReference(
            photoID: UUID(uuid: (n, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, n)),
            sha256: SHA256Hasher().digest([n]), size: size, mediaType: "image/png")
    }

    /// One event of every type the domain writes, in an order a real
    /// inspection could have produced them (sync outcomes after submit).
    static func everyEvent() -> [(InspectionEvent, Actor)] {
        let item = SyncItem(kind: .photo, id: photo(1).photoID)
        return [
            (.templatePinned(TemplatePinned(template: template)), dana),
            (
                .started(
                    InspectionStarted(
                        templateID: "11", templateHash: template.contentHash, facilityID: "101",
                        facilityName: "Riverside Medical Center", areaID: "1001", areaName: "Lobby restrooms")),
                dana
            ),
            (.fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(3))), dana),
            (.fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(4))), dana),
            (.fieldSet(FieldAnswer(fieldID: "9", fieldType: .textarea, value: .text("Tap drips\nall day"))), dana),
            (.fieldCleared(FieldCleared(fieldID: "9")), dana),
            (.photoCaptured(PhotoCaptured(photo: photo(1), kind: .photo, fieldID: "10")), dana),
            (.fieldSet(FieldAnswer(fieldID: "10", fieldType: .image, value: .photo(photo(1)))), dana),
            (.photoCaptured(PhotoCaptured(photo: photo(2), kind: .photo, issueID: issue)), dana),
            (
                .issueFlagged(
                    IssueFlagged(issueID: issue, severity: .high, description: "Leaking tap", photoID: photo(2).photoID)
                ),
                dana
            ),
            (.submitted(InspectionSubmitted(score: 80, followUpRequired: true)), dana),
            // An edit after submit: recorded, but it changes nothing.
            (.fieldSet(FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(1))), dana),
            (
                .syncAttemptFailed(
                    SyncAttemptFailed(
                        item: item, attempt: 2, error: "server busy", httpStatus: 503, willRetry: true,
                        nextAttemptAt: Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + 60_000_000))),
                sync
            ),
            (.syncGaveUp(SyncGaveUp(item: item, error: "server busy")), sync),
            (.syncRetryRequested(SyncRetryRequested(item: item)), sync),
            (.photoUploaded(PhotoUploaded(photoID: photo(1).photoID, serverPath: "/uploads/a1.png")), sync),
            (.inspectionAccepted(InspectionAccepted(serverID: "481")), sync),
            (.issueAccepted(IssueAccepted(issueID: issue, serverID: "77")), sync),
        ]
    }

    /// The events as stored records of one stream, positions from `first`,
    /// a millisecond apart.
    static func records(
        _ events: [(InspectionEvent, Actor)], stream: UUID = inspection, first: UInt64 = 1
    ) -> [EventRecord] {
        events.enumerated().map { index, pair in
            let time = Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + Int64(index) * 1000)
            let pending = pair.0.pending(stream: stream, actor: pair.1, device: device, recordedAt: time)
            return EventRecord(position: first + UInt64(index), streamVersion: UInt64(index + 1), event: pending)
        }
    }

    static func entries(_ records: [EventRecord]) -> [StreamEntry] { records.map(StreamEntry.record) }

    static let intact = ChainCheck(
        result: .intact, checked: 18, head: LedgerDigest(position: 18, head: .zero), digest: nil, verifiedThrough: 18,
        seconds: 0.002)

    /// A report over `records` with every photo file matching.
    static func report(
        _ records: [EventRecord], chain: ChainCheck = intact, files: [String: PhotoFile]? = nil
    ) -> AuditReport {
        let timeline = AuditTimeline(inspectionID: inspection, entries: entries(records))
        var photoFiles: [String: PhotoFile] = [:]
        for (_, captured) in timeline.capturedPhotos {
            photoFiles[captured.photo.sha256.hex] = PhotoFile(status: .matches, contents: [0x89, 0x50, 0x4E, 0x47])
        }
        return AuditReport(
            inspectionID: inspection, generatedAt: start, ledgerPath: "/tmp/ledger", chain: chain, asOf: nil,
            timeline: timeline, form: AuditReport.form(of: timeline, children: []),
            template: TemplateEvidence(
                hash: template.contentHash, template: template, pinnedAt: 1,
                source: "in this inspection's stream at position 1"),
            parent: nil, children: [], photoFiles: files ?? photoFiles, syncState: "synced")
    }
}
