import Foundation
import LedgerCore
import LedgerTestSupport
import Testing

/// What this ledger can vouch for across devices, through the built `jqc`:
/// another device's actor is that device's claim (`show`, `log`, `audit`),
/// and every carried part of a history, at any depth, is proven against its
/// own device's checkpoint under a key pinned here, or the audit names it
/// unproven and says PARTLY PROVEN (`CarriedProof`).
@Suite struct ClaimsAndProofTests {
    let directory = TemporaryDirectory(prefix: "claims")

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// `result.verdict` of `jqc audit ID --json` on `jqc`'s ledger.
    func verdict(_ jqc: JQCRunner, _ inspection: String) throws -> String? {
        (try object(jqc("--json", "audit", inspection).stdout)["result"] as? [String: Any])?["verdict"] as? String
    }

    /// Shares `inspection` from `from` and receives the file on `to`.
    func share(_ inspection: String, from: JQCRunner, to: JQCRunner, _ name: String, as actor: String) throws {
        let file = directory.appending(name)
        try JQCRunner.succeeded(from("--as", actor, "handover", inspection, "--share", "-o", file))
        try JQCRunner.succeeded(to("--as", actor, "receive", file))
    }

    /// The position of the first record of `type` in the ledger's log.
    func position(of type: String, in jqc: JQCRunner) throws -> UInt64 {
        for line in try JQCRunner.succeeded(jqc("--json", "log")).stdout.split(separator: "\n") {
            let event = try object(String(line))
            if event["type"] as? String == type { return try #require((event["position"] as? NSNumber)?.uint64Value) }
        }
        Issue.record("no \(type) in the log")
        return 0
    }

    // MARK: - Claims

    /// B's start claims a logged-in "Supervisor" (its log rewritten
    /// consistently, so its handover verifies); A receives B's share.
    @Test func anotherDevicesActorIsAClaimInShowAndAudit() throws {
        let b = try JQCRunner.pulled(in: directory, name: "b")
        let a = try JQCRunner.pulled(in: directory, name: "a")
        let inspection = try b.startInspection("Restroom QC")
        let start = try position(of: "inspection.started", in: b)
        try LedgerForger.rewrite(store: b.ledger + "/store", from: start) {
            $0.event.actor = Actor(id: "user:7", name: "Supervisor", verified: true)
        }
        try JQCRunner.succeeded(b("--as", "Bea", "set", inspection, "Floors", "4"))
        // On B its own record reads as today.
        let onB = try object(JQCRunner.succeeded(b("--json", "show", inspection)).stdout)
        #expect(onB["started_by"] as? String == "Supervisor", "\(onB)")
        #expect(onB["started_by_claim"] is NSNull)
        try share(inspection, from: b, to: a, "b1.json", as: "Al")
        let bID = try b.deviceID
        let claim = "Supervisor (as recorded by device jqc/\(bID.prefix(8)), not verified here)"

        let shown = try JQCRunner.succeeded(a("show", inspection)).stdout
        #expect(shown.contains(" by \(claim)\n"), "\(shown)")
        let json = try JQCRunner.succeeded(a("--json", "show", inspection)).stdout
        #expect(try JSONSchemaCheck.validate("show", json).status == 0)
        let started = try #require(try object(json)["started_by_claim"] as? [String: Any])
        #expect(started["recorded_by_device"] as? String == bID)
        #expect(started["actor_verified"] as? Bool == false)

        let audit = try a("audit", inspection)
        #expect(audit.stdout.contains("by \(claim)"), "\(audit.stdout)")
        let reportText = try JQCRunner.succeeded(a("audit", "--format", "json", inspection)).stdout
        #expect(try JSONSchemaCheck.validate("audit", reportText).status == 0)
        let report = try object(reportText)
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        let actors = timeline.compactMap { $0["actor"] as? [String: Any] }
        let carried = actors.filter { $0["name"] as? String == "Supervisor" }
        #expect(carried.count == 1)
        #expect(carried.first?["verified"] as? Bool == true)
        #expect(carried.first?["actor_verified"] as? Bool == false)
        #expect(carried.first?["recorded_by_device"] as? String == bID)
        // A's own records keep their actor as recorded, with no claim.
        let aID = try a.deviceID
        let own = timeline.filter { $0["device"] as? String == aID }.compactMap { $0["actor"] as? [String: Any] }
        #expect(!own.isEmpty && own.allSatisfy { $0["actor_verified"] == nil && $0["recorded_by_device"] == nil })
        let form = try #require((report["inspection"] as? [String: Any])?["started_by"] as? [String: Any])
        #expect(form["recorded_by_device"] as? String == bID)
        let html = try JQCRunner.succeeded(a("audit", "--format", "html", inspection)).stdout
        #expect(html.contains("Supervisor (as recorded by device jqc/\(bID.prefix(8)), not verified here)"))
    }

    /// A log whose records another device id wrote (a ledger that took a
    /// new identity) lists their actors as claims, in text and JSON.
    @Test func aRecordOfAnotherDeviceIDInTheLogIsAClaim() throws {
        let x = try JQCRunner.pulled(in: directory, name: "x")
        let inspection = try x.startInspection("Restroom QC")
        let before = try x.deviceID
        let ownLines = try JQCRunner.succeeded(x("log")).stdout
        #expect(!ownLines.contains("as recorded by device"), "\(ownLines)")
        let path = x.ledger + "/config.json"
        let config = try String(contentsOfFile: path, encoding: .utf8)
        let range = try #require(config.range(of: before, options: .caseInsensitive))
        try config.replacingCharacters(in: range, with: UUID().lowercased).write(
            toFile: path, atomically: true, encoding: .utf8)
        let text = try JQCRunner.succeeded(x("log", "--inspection", inspection)).stdout
        #expect(text.contains("Dana (unverified, as recorded by device jqc/\(before.prefix(8))): started"), "\(text)")
        let json = try JQCRunner.succeeded(x("--json", "log", "--inspection", inspection)).stdout
        #expect(try JSONSchemaCheck.validate("log_line", json, lines: true).status == 0)
        for line in json.split(separator: "\n") {
            let actor = try #require(try object(String(line))["actor"] as? [String: Any])
            #expect(actor["actor_verified"] as? Bool == false)
            #expect(actor["recorded_by_device"] as? String == before)
        }
    }

    // MARK: - Every part proven, or said unproven

    /// Growth (#30 item 7): shares back and forth record version-3
    /// receptions, each after the first of a sender continuing it (only the
    /// records new to the receiver), and both audits stay INTACT, every
    /// part proven through the continuations; a third device's relay of
    /// them (nested version-3 receptions, its sender pinned here) too.
    @Test func receptionsThatContinueEarlierOnesAuditIntactOnBothDevices() throws {
        let a = try JQCRunner.pulled(in: directory, name: "a")
        let b = try JQCRunner.pulled(in: directory, name: "b")
        let inspection = try a.startInspection("Restroom QC")
        for trip in 1...3 {
            try JQCRunner.succeeded(a("--as", "Al", "set", inspection, "Floors", "\(trip)"))
            try share(inspection, from: a, to: b, "a\(trip).json", as: "Bea")
            try JQCRunner.succeeded(b("--as", "Bea", "set", inspection, "Sinks and counters", "\(trip + 1)"))
            try share(inspection, from: b, to: a, "b\(trip).json", as: "Al")
        }
        for jqc in [a, b] {
            var continued = 0
            let log = try JQCRunner.succeeded(jqc("--json", "log", "--inspection", inspection)).stdout
            for line in log.split(separator: "\n") {
                let event = try object(String(line))
                guard event["type"] as? String == "inspection.received" else { continue }
                #expect(event["schema_version"] as? Int == 3, "\(event)")
                let payload = try #require(event["payload"] as? [String: Any])
                if let continues = payload["continues"] as? [String: Any] {
                    continued += 1
                    let version = try #require(continues["stream_version"] as? Int)
                    let records = try #require(payload["records"] as? [Any])
                    // Only what the earlier receptions did not reference.
                    #expect(version >= 2 && records.count < version, "\(payload)")
                }
            }
            #expect(continued == 2, "\(log)")
            let audit = try jqc("audit", inspection)
            #expect(audit.status == 0, "\(audit.stdout)\(audit.stderr)")
            #expect(try verdict(jqc, inspection) == "INTACT", "\(audit.stdout)")
            #expect(audit.stdout.contains("continuing version"), "\(audit.stdout)")
        }
        let c = try JQCRunner.pulled(in: directory, name: "c")
        try share(inspection, from: b, to: c, "b4.json", as: "Cy")
        try JQCRunner.succeeded(c("--as", "Cy", "set", inspection, "Floors", "5"))
        try share(inspection, from: c, to: a, "c1.json", as: "Al")
        let audit = try a("audit", inspection)
        let verdict = try verdict(a, inspection)
        #expect(audit.status == 0 && verdict == "INTACT", "\(audit.stdout)")
    }

    /// A → B → C → A: on A, B's records arrive only inside C's reception,
    /// proven against a checkpoint under a key only C vouches for.
    @Test func aThreeDeviceCycleNamesTheEntriesMetOnlyInsideAnothersReception() throws {
        let a = try JQCRunner.pulled(in: directory, name: "a")
        let b = try JQCRunner.pulled(in: directory, name: "b")
        let c = try JQCRunner.pulled(in: directory, name: "c")
        let inspection = try a.startInspection("Restroom QC")
        try JQCRunner.succeeded(a("--as", "Al", "set", inspection, "Floors", "4"))
        try share(inspection, from: a, to: b, "a1.json", as: "Bea")
        try JQCRunner.succeeded(b("--as", "Bea", "set", inspection, "Sinks and counters", "3"))
        try share(inspection, from: b, to: c, "b1.json", as: "Cy")
        try JQCRunner.succeeded(c("--as", "Cy", "set", inspection, "Toilets and urinals", "5"))
        try share(inspection, from: c, to: a, "c1.json", as: "Al")
        let (bID, cID) = (try b.deviceID, try c.deviceID)

        let audit = try a("audit", inspection)
        #expect(audit.status == 1)
        #expect(audit.stdout.contains("RESULT: PARTLY PROVEN: "), "\(audit.stdout)")
        #expect(
            audit.stdout.contains("entries of device \(bID) met only inside device \(cID)'s reception"),
            "\(audit.stdout)")
        #expect(audit.stdout.contains("pinned no key of device \(bID)"), "\(audit.stdout)")
        let reportText = try a("audit", "--format", "json", inspection).stdout
        #expect(try JSONSchemaCheck.validate("audit", reportText).status == 0)
        let report = try object(reportText)
        let result = try #require(report["result"] as? [String: Any])
        #expect(result["verdict"] as? String == "PARTLY PROVEN")
        let unproven = try #require(result["unproven"] as? [[String: Any]])
        #expect(unproven.count == 1)
        #expect(unproven.first?["device"] as? String == bID)
        #expect(unproven.first?["carried_by_device"] as? String == cID)
        let entries = try #require(unproven.first?["entries"] as? [String])
        let timeline = try #require(report["timeline"] as? [[String: Any]])
        let marked = timeline.filter { $0["chain"] as? String == "unproven" }
        #expect(marked.map { ($0["event"] as? [String: Any])?["id"] as? String } == entries.map { $0 })
        #expect(marked.allSatisfy { $0["device"] as? String == bID })
        // C's own part, carried by A's reception, is proven as before.
        #expect(timeline.contains { $0["chain"] as? String == "sender_checkpoint" && $0["device"] as? String == cID })

        // Once A pins B's key (a file of B received here), the same parts are proven.
        try share(inspection, from: b, to: a, "b2.json", as: "Al")
        let proven = try a("audit", inspection)
        #expect(proven.status == 0, "\(proven.stdout)\(proven.stderr)")
        #expect(try verdict(a, inspection) == "INTACT", "\(proven.stdout)")
    }
}
