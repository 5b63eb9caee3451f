import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// Capturing a photo without `jqc`: the file is kept and recorded by hash
/// when the decision accepts it, and nothing is left behind when it is
/// refused (on the draft of `AuditAssemblyTests.Audited`).
@Suite struct PhotoCaptureTests {
    /// A field of the draft's template (10 is an image field) or one it does not have.
    @Test(arguments: ["10", "no such field"])
    func aCaptureKeepsItsFileOnlyWhenRecorded(field: String) throws {
        let audited = try AuditAssemblyTests.Audited()
        let ledger = try InspectionLedger(
            storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .recording)
        defer { ledger.close() }
        // As 'jqc init' makes it.
        try FileManager.default.createDirectory(atPath: audited.directory.photosPath, withIntermediateDirectories: true)
        let photos = ledger.photos
        let prepared = try photos.prepare(data: SampleReference.png(), name: "photo.png")
        let before = try ledger.state(of: audited.inspection)?.eventCount
        let capture = PhotoCapture(photos: photos)
        let recording = { (command: InspectionCommand, keep: () throws -> Void) in
            try withoutActuallyEscaping(keep) { keep in
                try ledger.record(
                    [command], on: audited.inspection, by: audited.actor, device: audited.device,
                    clock: audited.clock, before: keep)
            }
        }
        if field == "10" {
            let (events, state) = try capture.record(prepared, for: .field(field), recording: recording)
            let captured = events.compactMap { event -> PhotoCaptured? in
                if case .photoCaptured(let captured) = event { captured } else { nil }
            }
            #expect(captured.map(\.photo.sha256.hex) == [prepared.description.sha256])
            #expect(state.eventCount == (before ?? 0) + events.count)
            #expect(try photos.storedNames() == [prepared.description.sha256])
            #expect(photos.check(sha256: prepared.description.sha256) == .matches)
        } else {
            let error = #expect(throws: DomainError.self) {
                try capture.record(prepared, for: .field(field), recording: recording)
            }
            guard case .unknownField(let reference, _, _)? = error else {
                Issue.record("\(String(describing: error)) is not an unknown field")
                return
            }
            #expect(reference == field)
            #expect(try photos.storedNames().isEmpty)
            #expect(try ledger.state(of: audited.inspection)?.eventCount == before)
        }
    }
}
