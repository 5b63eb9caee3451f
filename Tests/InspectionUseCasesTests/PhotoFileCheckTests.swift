import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `jqc check --photos` without `jqc`: the photo files against the photos
/// the log names, each kind of finding from a file put there by hand.
@Suite struct PhotoFileCheckTests {
    /// The inspection of `Audited` with a photo of `bytes` captured for field 10 (its file not stored).
    static func captured(_ bytes: [UInt8], in audited: AuditAssemblyTests.Audited) throws -> String {
        let hash = SHA256Hasher().digest(bytes)
        let ledger = try InspectionLedger(
            storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .recording)
        defer { ledger.close() }
        let photo = PhotoReference(photoID: UUID(), sha256: hash, size: bytes.count, mediaType: "image/png")
        try ledger.record(
            [.capturePhoto(photo, for: .field("10"))], on: audited.inspection, by: audited.actor,
            device: audited.device, clock: audited.clock)
        return hash.hex
    }

    static func store(_ bytes: [UInt8], as name: String, in audited: AuditAssemblyTests.Audited) throws {
        try FileManager.default.createDirectory(atPath: audited.directory.photosPath, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: audited.directory.photosPath + "/" + name))
    }

    enum Stored: CaseIterable {
        case intact, absent, altered
    }

    @Test(arguments: Stored.allCases)
    func aCapturedPhotoIsFoundIntactMissingOrAltered(stored: Stored) throws {
        let audited = try AuditAssemblyTests.Audited()
        let bytes: [UInt8] = Array("a photo".utf8)
        let hash = try Self.captured(bytes, in: audited)
        switch stored {
        case .intact: try Self.store(bytes, as: hash, in: audited)
        case .absent: break
        case .altered: try Self.store(Array("another".utf8), as: hash, in: audited)
        }
        let auditor = try AuditorLedger.open(audited.directory, views: false)
        defer { auditor.close() }
        let findings = try PhotoFileCheck.findings(auditor)
        switch stored {
        case .intact: #expect(findings.isEmpty)
        case .absent:
            #expect(findings.map(\.kind) == [.missing])
            #expect(findings.first?.message.hasSuffix("is missing. Restore it from a backup.") == true)
        case .altered:
            #expect(findings.map(\.kind) == [.altered])
            #expect(findings.first?.sha256 == hash)
        }
    }

    @Test func aFileNoEventNamesIsUnreferenced() throws {
        let audited = try AuditAssemblyTests.Audited()
        let bytes: [UInt8] = Array("left by a capture that did not commit".utf8)
        let name = SHA256Hasher().digest(bytes).hex
        try Self.store(bytes, as: name, in: audited)
        // Not a photo's name: an unfinished capture's temporary file is no finding.
        try Self.store(bytes, as: "capture.tmp", in: audited)
        let auditor = try AuditorLedger.open(audited.directory, views: false)
        defer { auditor.close() }
        let findings = try PhotoFileCheck.findings(auditor)
        #expect(findings.map(\.kind) == [.unreferenced])
        #expect(findings.map(\.sha256) == [name])
    }
}
