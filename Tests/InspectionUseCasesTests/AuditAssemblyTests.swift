import Foundation
import InspectionAudit
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
@_spi(RawAppend) import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// The audit assembled without `jqc`: an inspection recorded through the
/// ledger, then audited read-only the way `jqc audit` does, by each way of
/// checking its records.
@Suite struct AuditAssemblyTests {
    /// A ledger directory holding one inspection with a changed answer.
    struct Audited {
        let temporary = TemporaryDirectory(prefix: "audit-assembly")
        let directory: LedgerDirectory
        let clock = ManualClock()
        let actor = Actor(id: "u-1", name: "Dana Inspector", verified: true)
        let device = UUID()
        var inspection = UUID()

        init() throws {
            directory = LedgerDirectory(path: temporary.path)
            try LedgerConfig(deviceID: device, serverURL: nil, createdAt: clock.now()).save(directory)
            let ledger = try InspectionLedger(
                storePath: directory.storePath, photosPath: directory.photosPath, access: .creating)
            defer { ledger.close() }
            let snapshot = try ReferenceCache.Snapshot(
                json: try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path)))))
            try ledger.reference.replace(with: snapshot, at: clock.now())
            let template = try #require(try ledger.reference.template(id: "11"))
            let facility = try #require(try ledger.reference.facility(id: "101"))
            let commands: [InspectionCommand] = [
                .start(
                    StartInspection(
                        template: template, templateAlreadyPinned: false, facilityID: facility.id,
                        facilityName: facility.name)),
                .setField(field: "Notes", to: .text("first")),
                .setField(field: "Notes", to: .text("second")),
            ]
            for command in commands {
                clock.advance(microseconds: 1_000)
                let state = try ledger.state(of: inspection) ?? InspectionState(id: inspection)
                try ledger.record(
                    try state.decide(command), stream: inspection, expectedVersion: UInt64(state.eventCount),
                    actor: actor, device: device, at: clock.now())
            }
        }

        func records() throws -> UInt64 {
            let log = try EventLog(directory: directory.storePath, access: StoreAccess.reading)
            defer { log.close() }
            return try log.head().position
        }
    }

    /// Each way of checking the records, named as the report's `method`.
    enum Check: String, CaseIterable {
        case proofs
        case fullWalk = "full_walk"
        case skipped
    }

    @Test(arguments: Check.allCases)
    func anIntactInspectionIsAssembledWithoutAppendingAnything(check: Check) throws {
        let audited = try Audited()
        let before = try audited.records()
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let verification: AuditAssembly.Verification =
            switch check {
            case .proofs: .proofs(.madeNow)
            case .fullWalk: .fullWalk(digest: nil)
            case .skipped: .skipped
            }
        var walked = false
        let report = try AuditAssembly(asOf: nil, asOfText: nil, verification: verification, embedPhotos: false)
            .report(
                try auditor.resolveInspection(String(audited.inspection.lowercased.prefix(8))), auditor: auditor,
                now: audited.clock.now(), walked: { walked = true })
        #expect(report.inspectionID == audited.inspection)
        #expect(report.timeline.entries.count == 4)  // started, template pinned, two answers
        #expect(report.chain.isIntact == (check != .skipped))
        #expect(report.chain.method.rawValue == check.rawValue)
        #expect(walked == (check == .fullWalk))
        #expect(report.template.template != nil)
        for entry in report.timeline.entries {
            #expect(report.chain.standing(ofEntryAt: entry.position) == (check == .skipped ? .notVerified : .verified))
        }
        if check == .proofs {
            // Unsigned: the directory holds no device key, and none is made.
            #expect(report.chain.proof?.signer == nil)
            #expect(!FileManager.default.fileExists(atPath: audited.directory.deviceKeyPath))
        }
        #expect(try audited.records() == before)
    }

    @Test func withoutAKeyOrALastCheckpointTheProofsAnchorToTheWitnessedCheckpointTheLogRecords() throws {
        let audited = try Audited()
        let ledger = try InspectionLedger(
            storePath: audited.directory.storePath, photosPath: audited.directory.photosPath, access: .recording)
        let (size, root) = try ledger.log.read { reader in
            let size = try reader.treeSize()
            return (size, try reader.treeRoot(size: size))
        }
        let payload = CBORValue.textMap([
            ("server", .text("https://witness.invalid/api/v1")), ("outcome", .text("acknowledged")),
            ("size", .unsigned(size)), ("root", .text(Data(root.bytes).base64EncodedString())),
        ])
        try ledger.append([
            PendingEvent(
                stream: audited.device, type: "sync.checkpoint_witnessed", schemaVersion: 1,
                actor: Actor(id: "device:\(audited.device.lowercased)", name: "sync-worker", verified: true),
                device: audited.device, recordedAt: audited.clock.now(), payload: payload.encoded())
        ])
        ledger.close()
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let report = try AuditAssembly(asOf: nil, asOfText: nil, verification: .proofs(.madeNow), embedPhotos: false)
            .report(audited.inspection, auditor: auditor, now: audited.clock.now())
        #expect(report.chain.isIntact)
        let proof = try #require(report.chain.proof)
        #expect(proof.anchor == .witnessedInLog)
        #expect(proof.checkpointSize == size)
        #expect(proof.anchorPhrase.contains("the witness acknowledged, as this log records it"))
    }

    @Test func aMomentBeforeTheInspectionIsRefusedNamingItsFirstEvent() throws {
        let audited = try Audited()
        let auditor = try AuditorLedger.open(audited.directory, views: true)
        defer { auditor.close() }
        let assembly = AuditAssembly(
            asOf: .position(0), asOfText: "0", verification: .proofs(.madeNow), embedPhotos: false)
        let error = #expect(throws: AuditAssemblyError.self) {
            try assembly.report(audited.inspection, auditor: auditor, now: audited.clock.now())
        }
        guard case .nothingAsOf(let inspection, _, let first)? = error else {
            Issue.record("not refused as before its first event: \(String(describing: error))")
            return
        }
        #expect(inspection == audited.inspection)
        #expect(first?.stream == audited.inspection)
    }

    @Test func anUnknownInspectionIsNamedAsNoStreamOfTheLog() throws {
        let audited = try Audited()
        let auditor = try AuditorLedger.open(audited.directory, views: false)
        defer { auditor.close() }
        let error = #expect(throws: LookupError.self) { try auditor.resolveInspection("ffffffff") }
        guard case .noInspection("ffffffff")? = error else {
            Issue.record("not refused as no inspection: \(String(describing: error))")
            return
        }
    }
}
