import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// `jqc audit ID --witness` with C2SP witnesses (`CosignedCheckpointProbe`),
/// through the built `jqc` against `Tools/witness` (from the specs only):
/// each witness asked now what it last cosigned of this device, and whether
/// the stored cosigned checkpoint is still consistent with it.
@Suite struct AuditWitnessTests {
    typealias Device = StandardWitnessTests.Device

    @Test func aWitnessStillHoldingTheStoredCheckpointIsConsistent() throws {
        let device = try Device()
        let witness = try SpecWitness()
        try device.add(witness)
        let id = try device.record()
        try #require(try device.jqc("witness", "sync").status == 0)
        let held = try witness.heldSize(try device.origin())
        let audit = try device.jqc("audit", id, "--witness")
        #expect(audit.status == 0, "\(audit.stdout)\(audit.stderr)")
        #expect(
            audit.stderr.contains("witness \(witness.name), asked now: still holds the stored cosigned checkpoint of "),
            "\(audit.stderr)")
        // Asking moved nothing: the witness holds the same size.
        #expect(try witness.heldSize(try device.origin()) == held)
    }

    @Test func aWitnessThatCosignedAnotherCopysLongerHistoryIsAFork() throws {
        let device = try Device()
        let witness = try SpecWitness()
        try device.add(witness)
        let id = try device.record()
        try #require(try device.jqc("witness", "sync").status == 0)
        // A copy of the ledger (the same device id and key) records more and submits it.
        let copyPath = device.directory.appending("copy")
        try FileManager.default.copyItem(atPath: device.path, toPath: copyPath)
        let copy = JQCRunner(ledger: copyPath, environment: ["JQC_ACTOR": "Dana"])
        for _ in 0..<3 { try #require(try copy("start", "--template", "11", "--facility", "101").status == 0) }
        try #require(try copy("witness", "sync").status == 0)
        let audit = try device.jqc("audit", id, "--witness")
        #expect(audit.status == 1, "\(audit.stdout)\(audit.stderr)")
        #expect(
            audit.stderr.contains("asked now: NOT consistent with the stored cosigned checkpoint"), "\(audit.stderr)")
        #expect(audit.stderr.contains("more than this log's"), "\(audit.stderr)")
        #expect(audit.stderr.contains("a FORK of this device"), "\(audit.stderr)")
    }
}
