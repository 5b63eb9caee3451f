import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// `jqc audit ID --witness` with C2SP witnesses (`CosignedCheckpointProbe`),
/// through the built `jqc` against both witnesses (`WitnessKind`: `Tools/witness`,
/// from the specs only, and the development server's at `/witness`):
/// each witness asked now what it last cosigned of this device, and whether
/// the stored cosigned checkpoint is still consistent with it, in each
/// format of the report.
@Suite struct AuditWitnessTests {
    typealias Device = StandardWitnessTests.Device

    /// The formats, and where each says the answer (`asked_now`, or the line).
    static let formats = ["text", "json", "html"]

    /// The answer as `format` carries it: the text's line, the JSON's
    /// `verification.witness.asked_now[0]` (answer, then line), the HTML's paragraph.
    static func answer(_ audit: ProcessResult, format: String) throws -> (answer: String?, text: String) {
        switch format {
        case "json":
            #expect(try JSONSchemaCheck.validate("audit", audit.stdout).status == 0)
            let report = try JSONValue(parsing: Array(audit.stdout.utf8))
            let asked = report["verification"]?["witness"]?["asked_now"]?.arrayValue?.first
            return (asked?["answer"]?.stringValue, asked?["line"]?.stringValue ?? "")
        case "html":
            let paragraph = audit.stdout.components(separatedBy: "<p class=\"witness-asked").dropFirst().first ?? ""
            return (paragraph.hasPrefix(" broken\"") ? "forked" : nil, paragraph)
        default:
            return (nil, audit.stdout)
        }
    }

    @Test(arguments: WitnessKind.allCases, formats)
    func aWitnessStillHoldingTheStoredCheckpointIsConsistent(_ kind: WitnessKind, format: String) throws {
        let device = try Device()
        let witness = try kind.start()
        try device.add(witness)
        let id = try device.record()
        try #require(try device.jqc("witness", "sync").status == 0)
        let held = try witness.heldSize(try device.origin())
        let audit = try device.jqc("audit", id, "--witness", "--format", format)
        #expect(audit.status == 0, "\(audit.stdout)\(audit.stderr)")
        let (answer, text) = try Self.answer(audit, format: format)
        #expect(text.contains("witness \(witness.name), asked now: still holds the stored cosigned checkpoint of "))
        if format == "json" { #expect(answer == "still_holds") }
        // Asking moved nothing: the witness holds the same size.
        #expect(try witness.heldSize(try device.origin()) == held)
    }

    @Test(arguments: WitnessKind.allCases, formats)
    func aWitnessThatCosignedAnotherCopysLongerHistoryIsAFork(_ kind: WitnessKind, format: String) throws {
        let device = try Device()
        let witness = try kind.start()
        try device.add(witness)
        let id = try device.record()
        try #require(try device.jqc("witness", "sync").status == 0)
        // A copy of the ledger (the same device id and key) records more and submits it.
        let copyPath = device.directory.appending("copy")
        try FileManager.default.copyItem(atPath: device.path, toPath: copyPath)
        let copy = JQCRunner(ledger: copyPath, environment: ["JQC_ACTOR": "Dana"])
        for _ in 0..<3 { try #require(try copy("start", "--template", "11", "--facility", "101").status == 0) }
        try #require(try copy("witness", "sync").status == 0)
        let audit = try device.jqc("audit", id, "--witness", "--format", format)
        #expect(audit.status == 1, "\(audit.stdout)\(audit.stderr)")
        let (answer, text) = try Self.answer(audit, format: format)
        #expect(text.contains("asked now: NOT consistent with the stored cosigned checkpoint"), "\(audit.stdout)")
        #expect(text.contains("more than this log&#39;s") || text.contains("more than this log's"), "\(text)")
        #expect(text.contains("a FORK of this device"), "\(text)")
        if format != "text" { #expect(answer == "forked", "\(audit.stdout)") }
        #expect(audit.stderr.contains("a witness asked now shows a fork of this device"), "\(audit.stderr)")
    }
}
