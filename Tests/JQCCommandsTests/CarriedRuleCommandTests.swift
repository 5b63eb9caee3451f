import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// A handover file whose records break the pinned template's rules, through
/// the built `jqc`: the sender's own log rewritten consistently (every chain
/// hash, back-link and the Merkle tree derived again, then signed over by its
/// key), so the file verifies, and only the template's rules can tell. The
/// receiver refuses it whole, naming the record, its device, the field and
/// the rule, and records nothing (`docs/domain.md` § Sharing and merging);
/// `Tools/verify-ledger --handover` refuses each alike (check 10).
@Suite struct CarriedRuleCommandTests {
    let directory = TemporaryDirectory(prefix: "carried-rule")

    /// Every event of the ledger's log as `jqc --json log` prints it.
    func events(_ jqc: JQCRunner) throws -> [[String: Any]] {
        try JQCRunner.succeeded(jqc("--json", "log")).stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    /// A forged answer: what the sender's `jqc set` recorded, then what the
    /// forger writes in its place, and what the refusal must name.
    struct Forgery: Sendable, CustomStringConvertible {
        var field: String
        var typed: String
        var forged: FieldAnswer
        var named: String
        var rule: String
        var description: String { "\(named) forged" }
    }

    static let forgeries: [Forgery] = [
        Forgery(
            field: "Floors", typed: "4", forged: FieldAnswer(fieldID: "2", fieldType: .rating, value: .rating(99)),
            named: #"field 2 "Floors" (rating)"#, rule: "refuses \"99\""),
        Forgery(
            field: "Odor", typed: "Good",
            forged: FieldAnswer(fieldID: "8", fieldType: .radio, value: .option("Terrible")),
            named: #"field 8 "Odor" (radio)"#, rule: "refuses \"Terrible\""),
        Forgery(
            field: "Floors", typed: "4", forged: FieldAnswer(fieldID: "1", fieldType: .rating, value: .rating(3)),
            named: #"field 1 "Restroom condition" (section)"#, rule: "rating answer for a section field"),
    ]

    @Test(arguments: forgeries)
    func aCarriedAnswerTheTemplateForbidsIsRefusedWhole(_ forgery: Forgery) throws {
        let x = try JQCRunner.pulled(in: directory, name: "x")
        let c = try JQCRunner.pulled(in: directory, name: "c")
        let inspection = try x.startInspection("Restroom QC")
        try JQCRunner.succeeded(x("--as", "Dana", "set", inspection, forgery.field, forgery.typed))
        let answer = try #require(try events(x).last { $0["type"] as? String == "inspection.field_set" })
        let position = try #require(answer["position"] as? Int)
        let record = try #require(answer["id"] as? String)
        let device = try #require(answer["device"] as? String)
        try LedgerForger.rewrite(store: x.ledger + "/store", from: UInt64(position)) {
            $0.event.payload = InspectionEvent.fieldSet(forgery.forged).payloadCBOR()
        }
        // The sender signs its forged log: the file is consistent.
        let file = directory.appending("forged.json")
        try JQCRunner.succeeded(x("--as", "Dana", "handover", inspection, "--share", "-o", file))
        #expect(try JQCRunner.succeeded(x("verify")).status == 0)

        let before = try events(c).count
        let refused = try c.reportingKinds("--as", "Cy", "receive", file)
        #expect(refused.status == 1, "\(refused.stdout)")
        for part in [record, device, "position \(position)", forgery.named, forgery.rule, "nothing was recorded"] {
            #expect(refused.stderr.contains(part), "\(part) not in \(refused.stderr)")
        }
        #expect(try events(c).count == before)
        #expect(try c("show", inspection).status != 0)

        // The outside verifier, given the receiver's device id, refuses it alike: the same class, the same record.
        let config = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: c.ledger + "/config.json")))
                as? [String: Any])
        let receiver = try #require(config["device_id"] as? String).lowercased()
        let checked = try ProcessRun.run(
            Products.python.executable,
            Products.python.arguments + [
                Products.repositoryFile("Tools/verify-ledger"), "--handover", file, "--receiver", receiver,
            ])
        #expect(checked.status == 1, "\(checked.stdout)\(checked.stderr)")
        #expect(refused.errorKind == "DomainError.carriedRecordRefused", "NOT RECEIVED: \(refused.stderr)")
        #expect(checked.stdout.hasPrefix("NOT RECEIVED: "), "\(checked.stdout)")
        #expect(checked.stdout.contains(record) && checked.stdout.contains("position \(position)"), "\(checked.stdout)")
    }
}
