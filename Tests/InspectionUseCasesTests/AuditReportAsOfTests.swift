import Foundation
import InspectionAudit
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `jqc audit`'s text as of a moment and why an audit fails, without `jqc`:
/// the verdict, the form as `jqc show` printed it then, the timeline up to
/// it; the failure naming the inspection, the headline and a single problem.
@Suite struct AuditReportAsOfTests {
    static func report(
        _ audited: AuditAssemblyTests.Audited, asOf: LogMoment?, text: String? = nil,
        verification: AuditAssembly.Verification = .proofs(.madeNow)
    ) throws -> AuditReport {
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        return try AuditAssembly(asOf: asOf, asOfText: text, verification: verification, embedPhotos: false)
            .report(audited.inspection, auditor: auditor, now: audited.clock.now())
    }

    /// Each moment of the inspection's three commands, and the Notes answer the form had then.
    @Test(arguments: [(2, "—"), (3, "first"), (4, "second")])
    func theFormIsAsItStoodThen(position: UInt64, notes: String) throws {
        let audited = try AuditAssemblyTests.Audited()
        let report = try Self.report(audited, asOf: .position(position), text: "\(position)")
        let lines = report.asOfText.components(separatedBy: "\n")
        #expect(lines[0] == "AUDIT of inspection \(audited.inspection.lowercased)")
        #expect(lines[1] == "RESULT: INTACT")
        let asOf = try #require(lines.first { $0.hasPrefix("AS OF: ") })
        #expect(asOf.hasPrefix("AS OF: \(position) → after position \(position), recorded "))
        // The form is the one `jqc show` printed then, between blank lines.
        #expect(report.asOfText.contains("\n\n" + FormReport(state: report.form).text + "\n\n"))
        #expect(lines.contains { $0.hasSuffix("Notes (textarea): \(notes)") }, "\(report.asOfText)")
        #expect(report.asOfText.hasSuffix(report.timelineTextLines.joined(separator: "\n")))
        #expect(report.failure == nil)
    }

    @Test func aMissingPhotoFailsTheAuditNamingIt() throws {
        let audited = try AuditAssemblyTests.Audited()
        let ledger = try InspectionLedger(
            storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .recording)
        let photo = PhotoReference(
            photoID: UUID(), sha256: Digest256(bytes: Array(repeating: 7, count: 32))!, size: 10,
            mediaType: "image/png")
        try ledger.record(
            [.capturePhoto(photo, for: .field("10"))], on: audited.inspection, by: audited.actor,
            device: audited.device, clock: audited.clock)
        ledger.close()
        let report = try Self.report(audited, asOf: nil)
        let failure = try #require(report.failure)
        #expect(
            failure.description
                == "audit of \(audited.inspection.lowercased): INTACT chain, but 1 problem found: photo "
                + "\(photo.photoID.lowercased) (sha256 \(photo.sha256.hex)) is missing from the photo store")
        #expect(report.asOfText.contains("  ! photo \(photo.photoID.lowercased)"))
        // Unverified, the problem is still a failure; the headline says both.
        let skipped = try Self.report(audited, asOf: nil, verification: .skipped)
        #expect(
            skipped.failure?.description
                == "audit of \(audited.inspection.lowercased): NOT VERIFIED (--no-verify); 1 problem(s) found")
    }
}
