import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `jqc prove`'s bundle without `jqc`: signed now with the device key, or on
/// a copy without it proven against the checkpoint the device signed last,
/// each checked as `jqc verify --bundle` checks it.
@Suite struct InspectionProvingTests {
    /// The inspection of `Audited`, with the device's key made and published.
    struct Proving {
        let audited: AuditAssemblyTests.Audited
        let key: NoteKey

        init() throws {
            audited = try AuditAssemblyTests.Audited()
            let ledger = try InspectionLedger(
                storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .recording)
            defer { ledger.close() }
            key = try DeviceIdentity(directory: audited.directory, device: audited.device).signingKey(
                ledger: ledger, at: audited.clock.now())
        }

        func prove(key: NoteKey?) throws -> InspectionProving.Proven {
            let auditor = try AuditorLedger.open(audited.directory, views: false)
            defer { auditor.close() }
            return try InspectionProving(home: audited.directory, device: audited.device, key: key, trustedFile: nil)
                .prove(String(audited.inspection.lowercased.prefix(8)), auditor: auditor)
        }

        /// `jqc verify --bundle`'s outcome for `bundle`.
        func check(_ bundle: JSONValue) throws -> BundleCheck.Outcome {
            let file = audited.temporary.appending("bundle-\(UUID()).json")
            try Data(bundle.serialized().utf8).write(to: URL(fileURLWithPath: file))
            return BundleCheck.check(file: file, key: nil, trustedFile: nil)
        }

        func answer(_ text: String) throws {
            let ledger = try InspectionLedger(
                storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .recording)
            defer { ledger.close() }
            try ledger.record(
                [.setField(field: "Notes", to: .text(text))], on: audited.inspection, by: audited.actor,
                device: audited.device, clock: audited.clock)
        }
    }

    @Test func withTheKeyTheBundleIsSignedNowAndVerifies() throws {
        let proving = try Proving()
        let proven = try proving.prove(key: proving.key)
        #expect(proven.held == nil)
        #expect(proven.recordsLeftOut == 0)
        #expect(try proving.check(proven.bundle).status == 0)
    }

    @Test func aCopyWithoutTheKeyOrACheckpointHasNothingToProveAgainst() throws {
        let proving = try Proving()
        let error = #expect(throws: ProvingError.self) { try proving.prove(key: nil) }
        #expect(error == .nothingToProveAgainst(path: SignedCheckpoint.path(proving.audited.directory)))
    }

    @Test(arguments: [0, 2])
    func aCopyWithoutTheKeyProvesAgainstTheLastCheckpoint(laterAnswers: Int) throws {
        let proving = try Proving()
        let signed = try proving.prove(key: proving.key)
        try SignedCheckpoint.remember(signed.note, home: proving.audited.directory)
        for index in 0..<laterAnswers { try proving.answer("later \(index)") }
        let proven = try proving.prove(key: nil)
        let held = try #require(proven.held)
        #expect(held.note == signed.note)
        #expect(held.source.contains("the last checkpoint the device signed"))
        #expect(proven.recordsLeftOut == laterAnswers)
        #expect(try proving.check(proven.bundle).status == 0)
    }
}
