import Foundation
import InspectionDomain
import LedgerCore
import LedgerTestSupport
import Testing

/// A → B → A, then B → C → A, through the built `jqc`: A pinned B's key (B's
/// first file), and B's later records reach A only inside C's reception of
/// B's file. When C's log is rewritten consistently (`LedgerForger`: every
/// chain hash, back-link and the tree derived again, then signed by C's own
/// key) so that the checkpoint it carries for B's part is not one B signed,
/// that nested part is not proven against its own device's checkpoint: A's
/// audit names its entries unproven and its verdict is not INTACT, though C's
/// own part verifies (issue #35 item 6, `Schemas/ledger-format.md` § What a
/// nested reception must carry for its part to be proven).
@Suite struct ForgedNestedPartTests {
    let directory = TemporaryDirectory(prefix: "forged-nested")

    /// Every event of the ledger's log as `jqc --json log` prints it.
    func events(_ jqc: JQCRunner) throws -> [[String: Any]] {
        try JQCRunner.succeeded(jqc("--json", "log")).stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    func share(_ inspection: String, from: JQCRunner, to: JQCRunner, _ name: String, as actor: String) throws {
        let file = directory.appending(name)
        try JQCRunner.succeeded(from("--as", actor, "handover", inspection, "--share", "-o", file))
        try JQCRunner.succeeded(to("--as", actor, "receive", file))
    }

    /// `note` with one bit of its signature flipped: a checkpoint its
    /// device never signed, its text otherwise the same.
    static func unsigned(_ note: String) throws -> String {
        var lines = note.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let index = try #require(lines.lastIndex { $0.hasPrefix("\u{2014} ") })
        let parts = lines[index].split(separator: " ")
        let encoded = try #require(parts.last)
        var signature = try #require(Data(base64Encoded: String(encoded)))
        signature[8] ^= 0x01
        lines[index] = parts.dropLast().joined(separator: " ") + " " + signature.base64EncodedString()
        return lines.joined(separator: "\n")
    }

    @Test(arguments: [false, true])
    func aRelayedPartNotSignedByItsDeviceIsNamedUnproven(_ forged: Bool) throws {
        let (a, b, c) = (
            try JQCRunner.pulled(in: directory, name: "a"), try JQCRunner.pulled(in: directory, name: "b"),
            try JQCRunner.pulled(in: directory, name: "c")
        )
        let inspection = try a.startInspection("Restroom QC")
        try JQCRunner.succeeded(a("--as", "Al", "set", inspection, "Floors", "4"))
        try share(inspection, from: a, to: b, "a1.json", as: "Bea")
        try JQCRunner.succeeded(b("--as", "Bea", "set", inspection, "Sinks and counters", "3"))
        try share(inspection, from: b, to: a, "b1.json", as: "Al")
        // B's record A meets only inside C's reception.
        try JQCRunner.succeeded(b("--as", "Bea", "set", inspection, "Toilets and urinals", "2"))
        let relayed = try #require(try events(b).last { $0["type"] as? String == "inspection.field_set" })
        try share(inspection, from: b, to: c, "b2.json", as: "Cy")
        let (bID, cID) = (try b.deviceID, try c.deviceID)
        if forged {
            let reception = try #require(try events(c).last { $0["type"] as? String == "inspection.received" })
            let position = try #require((reception["position"] as? NSNumber)?.uint64Value)
            var failure: String?
            try LedgerForger.rewrite(store: c.ledger + "/store", from: position) { record in
                do {
                    guard case .received(var received) = try InspectionEvent.decode(record) else {
                        failure = "record \(position) is not a reception"
                        return
                    }
                    received.checkpoint = try Self.unsigned(received.checkpoint)
                    record.event.payload = InspectionEvent.received(received).payloadCBOR()
                } catch { failure = "\(error)" }
            }
            #expect(failure == nil, "\(failure ?? "")")
        }
        // A writing command opens C's store writable: the forged tree is derived.
        try JQCRunner.succeeded(c("--as", "Cy", "set", inspection, "Floors", "5"))
        try share(inspection, from: c, to: a, "c1.json", as: "Al")

        let audit = try a("audit", inspection)
        let verdict =
            ((try JSONSerialization.jsonObject(with: Data(try a("--json", "audit", inspection).stdout.utf8))
            as? [String: Any])?["result"] as? [String: Any])?["verdict"] as? String
        guard forged else {
            #expect(audit.status == 0 && verdict == "INTACT", "\(audit.stdout)\(audit.stderr)")
            return
        }
        #expect(audit.status == 1, "\(audit.stdout)\(audit.stderr)")
        #expect(verdict != "INTACT", "\(audit.stdout)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(try a("audit", "--format", "json", inspection).stdout.utf8))
                as? [String: Any])
        let result = try #require(report["result"] as? [String: Any])
        #expect(result["verdict"] as? String != "INTACT", "\(result)")
        let unproven = try #require(result["unproven"] as? [[String: Any]], "\(result)")
        let part = try #require(unproven.first { $0["device"] as? String == bID }, "\(unproven)")
        #expect(part["carried_by_device"] as? String == cID, "\(part)")
        let entries = try #require(part["entries"] as? [String])
        let relayedID = try #require(relayed["id"] as? String)
        #expect(entries.contains(relayedID), "\(entries)")
        // C's own part, which C did sign, is still proven.
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        #expect(timeline.contains { $0["chain"] as? String == "sender_checkpoint" && $0["device"] as? String == cID })
    }
}
