import Foundation
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

/// Who a handover file may claim to be, through the built `jqc`: a sender's
/// key pinned on first sight, a fork of one device refused and recorded, and
/// a forged copy of an inspection held here refused (`SenderTrust`). Every
/// forgery is consistent: its signatures and proofs verify, so only what the
/// receiver already holds can tell.
@Suite struct SenderTrustCommandTests {
    let directory = TemporaryDirectory(prefix: "sender-trust")

    /// The key `jqc key` shows in force.
    func keyInForce(_ jqc: JQCRunner) throws -> String {
        let shown = try #require(
            try JSONSerialization.jsonObject(with: Data(JQCRunner.succeeded(jqc("--json", "key")).stdout.utf8))
                as? [String: Any])
        return try #require(shown["in_force"] as? String)
    }

    func keyID(_ key: String) -> String { String(key.split(separator: "+")[1]) }

    /// Shares `inspection` from `jqc` into a new file named `name`.
    func share(_ jqc: JQCRunner, _ inspection: String, _ name: String) throws -> String {
        let file = directory.appending(name)
        try JQCRunner.succeeded(jqc("--as", "Dana", "handover", inspection, "--share", "-o", file))
        return file
    }

    /// The types of every event in the ledger's log, in order.
    func eventTypes(_ jqc: JQCRunner) throws -> [String] {
        try JQCRunner.succeeded(jqc("--json", "log")).stdout.split(separator: "\n").map { line in
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return try #require(event["type"] as? String)
        }
    }

    /// Device X with a shared draft, received by C: X's key is pinned on C.
    func senderPinnedOnReceiver() throws -> (x: JQCRunner, c: JQCRunner, inspection: String) {
        let x = try JQCRunner.pulled(in: directory, name: "x")
        let c = try JQCRunner.pulled(in: directory, name: "c")
        let inspection = try x.startInspection("Restroom QC")
        try JQCRunner.succeeded(x("--as", "Dana", "set", inspection, "Floors", "4"))
        try JQCRunner.succeeded(c("--as", "Cy", "receive", try share(x, inspection, "x1.json")))
        return (x, c.reportingKinds, inspection)
    }

    /// `jqc --json devices`: one object per device `jqc` received files from.
    func receivedFrom(_ jqc: JQCRunner) throws -> [[String: Any]] {
        let listed = try JQCRunner.succeeded(jqc("--json", "devices")).stdout
        return try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
    }

    // MARK: - Pinned keys

    @Test func aFileUnderAKnownDeviceIDSignedByAnotherKeyIsRefusedNamingBothKeys() throws {
        let (x, c, _) = try senderPinnedOnReceiver()
        let pinned = try keyInForce(x)
        // The forger takes X's device id before its ledger records or signs
        // anything: its own key is named jqc/X and signs a consistent file.
        let forger = JQCRunner(ledger: directory.appending("forger"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(forger("init"))
        let configPath = forger.ledger + "/config.json"
        let config = try String(contentsOfFile: configPath, encoding: .utf8)
        let forgerID = try #require(config.range(of: #"[0-9A-F]{8}-[0-9A-F-]{27}"#, options: .regularExpression))
        try config.replacingCharacters(in: forgerID, with: try x.deviceID.uppercased())
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: forger.ledger + "/device.key")
        try JQCRunner.succeeded(forger("pull", "--from", SampleReference.path))
        let forged = try forger.startInspection("Restroom QC")
        let file = try share(forger, forged, "forged.json")
        let forgedKey = try keyInForce(forger)
        #expect(forgedKey.hasPrefix("jqc/\(try x.deviceID)+") && forgedKey != pinned)

        let before = try eventTypes(c)
        let refused = try c("--as", "Cy", "receive", file)
        #expect(refused.status == 1)
        #expect(refused.errorKind == "SenderTrust.Distrust.otherKey", "\(refused.stderr)")
        let detail = try #require(refused.errorDetail, "\(refused.stderr)")
        #expect(detail["device"] as? String == (try x.deviceID))
        #expect(detail["file_key_id"] as? String == keyID(forgedKey))
        #expect(detail["pinned_key_ids"] as? [String] == [keyID(pinned)])
        #expect(refused.stderr.contains("nothing was recorded") && refused.stderr.contains("--key VKEY"))
        #expect(try eventTypes(c) == before)
        #expect(try c("show", forged).status != 0)
    }

    @Test func theFirstFileRecordsThePinAndDevicesListsIt() throws {
        let (x, c, inspection) = try senderPinnedOnReceiver()
        #expect(try eventTypes(c).filter { $0 == "device.key_pinned" }.count == 1)
        let listed = try receivedFrom(c)
        #expect(listed.first?["device"] as? String == (try x.deviceID))
        #expect(listed.first?["key_id"] as? String == keyID(try keyInForce(x)))
        #expect(listed.first?["first_seen"] is String && listed.first?["files"] as? Int == 1)
        let json = try JQCRunner.succeeded(c("--json", "devices"))
        let check = try JSONSchemaCheck.validate("devices", json.stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(devices.count == 1)
        #expect(devices.first?["key_id"] as? String == keyID(try keyInForce(x)))
        #expect((devices.first?["keys"] as? [[String: Any]])?.first?["source"] as? String == "pinned")
        #expect(devices.first?["forked"] as? Bool == false)
        // The audit names the pin the sender's part was checked against.
        let audit = try JQCRunner.succeeded(c("audit", inspection)).stdout
        #expect(audit.contains("is the key pinned for that device (device.key_pinned at position"), "\(audit)")
        #expect(try receivedFrom(x).isEmpty, "X received no file")
    }

    func inspectionOf(_ jqc: JQCRunner) throws -> String {
        let listed = try #require(
            try JSONSerialization.jsonObject(with: Data(JQCRunner.succeeded(jqc("--json", "drafts")).stdout.utf8))
                as? [[String: Any]])
        return try #require(listed.first?["id"] as? String)
    }

    /// After `jqc key rotate` (the old key endorses the new), the next file is
    /// taken and pins the new key; after `--old-key-lost` nothing endorses it:
    /// refused, until the person gives the new key with `--key`.
    @Test func aRotationEndorsedByThePinnedKeyIsAcceptedAndALostKeyNeedsKey() throws {
        let (x, c, inspection) = try senderPinnedOnReceiver()
        let first = try keyInForce(x)
        try JQCRunner.succeeded(x("key", "rotate"))
        try JQCRunner.succeeded(x("--as", "Dana", "set", inspection, "Floors", "3"))
        try JQCRunner.succeeded(c("--as", "Cy", "receive", try share(x, inspection, "x2.json")))
        let second = try keyInForce(x)
        #expect(second != first)
        let rotated = try receivedFrom(c).first
        #expect(rotated?["key_id"] as? String == keyID(second))
        #expect(
            (rotated?["keys"] as? [[String: Any]])?.map { $0["key_id"] as? String } == [keyID(first), keyID(second)])

        try JQCRunner.succeeded(x("key", "rotate", "--old-key-lost"))
        try JQCRunner.succeeded(x("--as", "Dana", "set", inspection, "Floors", "2"))
        let lost = try share(x, inspection, "x3.json")
        let third = try keyInForce(x)
        let refused = try c("--as", "Cy", "receive", lost)
        #expect(refused.status == 1)
        #expect(refused.errorKind == "SenderTrust.Distrust.otherKey", "\(refused.stderr)")
        #expect(refused.errorDetail?["file_key_id"] as? String == keyID(third), "\(refused.stderr)")
        try JQCRunner.succeeded(c("--as", "Cy", "receive", lost, "--key", third))
        let pinned = try receivedFrom(c).first
        #expect(pinned?["key_id"] as? String == keyID(third))
        #expect((pinned?["keys"] as? [Any])?.count == 3, "the third key and 2 earlier")
    }

    @Test(arguments: [true, false])
    func keyPinsExplicitlyAndRefusesAFileSignedByAnother(matching: Bool) throws {
        let x = try JQCRunner.pulled(in: directory, name: "x")
        let c = try JQCRunner.pulled(in: directory, name: "c").reportingKinds
        let inspection = try x.startInspection("Restroom QC")
        let file = try share(x, inspection, "x1.json")
        let other = try JQCRunner.pulled(in: directory, name: "other")
        // Signing makes and publishes the other ledger's key.
        try JQCRunner.succeeded(other("checkpoint"))
        let given = matching ? try keyInForce(x) : try keyInForce(other)
        let result = try c("--as", "Cy", "receive", file, "--key", given)
        if matching {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try eventTypes(c).contains("device.key_pinned"))
        } else {
            #expect(result.status == 1)
            #expect(result.errorKind == "SenderTrust.Distrust.notTheGivenKey", "\(result.stderr)")
            #expect(result.errorDetail?["file_key_id"] as? String == keyID(try keyInForce(x)), "\(result.stderr)")
            #expect(result.errorDetail?["given_key_id"] as? String == keyID(given), "\(result.stderr)")
            #expect(!(try eventTypes(c)).contains("inspection.received"))
        }
    }

    // MARK: - Forks

    /// A backup of X used as a second device: X itself refuses its file (two
    /// ledgers share an id); C, which merged X's file, refuses the backup's,
    /// records the fork as evidence, and its audit says FORKED.
    @Test func aBackupUsedAsASecondDeviceIsAForkAThirdDeviceRefusesAndRecords() throws {
        let (x, c, inspection) = try senderPinnedOnReceiver()
        let backup = JQCRunner(ledger: directory.appending("x-backup"), environment: ["JQC_AS_TEST": "1"])
        try JQCRunner.succeeded(x("backup", backup.ledger))
        try JQCRunner.succeeded(x("--as", "Dana", "set", inspection, "Floors", "3"))
        try JQCRunner.succeeded(backup("--as", "Mal", "set", inspection, "Floors", "1"))
        let genuine = try share(x, inspection, "x2.json")
        let copied = try share(backup, inspection, "backup.json")
        let ownID = try x.reportingKinds("--as", "Dana", "receive", copied)
        #expect(
            ownID.errorKind == "Reception.Conflict.sharedDeviceID", "two ledgers share a device id: \(ownID.stderr)")

        try JQCRunner.succeeded(c("--as", "Cy", "receive", genuine))
        let refused = try c("--as", "Cy", "receive", copied)
        #expect(refused.status == 1)
        #expect(refused.errorKind == "SenderTrust.Distrust.fork", "\(refused.stderr)")
        let fork = try #require(refused.errorDetail, "\(refused.stderr)")
        #expect(fork["device"] as? String == (try x.deviceID))
        let held = try #require(fork["held"] as? [String: Any])
        let theirs = try #require(fork["theirs"] as? [String: Any])
        #expect(held["size"] as? Int == theirs["size"] as? Int, "one size")
        #expect(held["root"] as? String != theirs["root"] as? String, "two roots")
        #expect(fork["fork_recorded_now"] as? Bool == true)
        let types = try eventTypes(c)
        #expect(types.filter { $0 == "device.fork_seen" }.count == 1)
        #expect(types.filter { $0 == "inspection.received" }.count == 2)
        let log = try JQCRunner.succeeded(c("--json", "log")).stdout
        let events = try JSONSchemaCheck.validate("log_line", log, lines: true)
        #expect(events.status == 0, "\(events.stderr)")

        // The same file again: refused, the fork not recorded twice.
        let again = try c("--as", "Cy", "receive", copied)
        #expect(again.status == 1 && again.errorKind == "SenderTrust.Distrust.fork", "\(again.stderr)")
        #expect(again.errorDetail?["fork_recorded_now"] as? Bool == false, "recorded before")
        #expect(try eventTypes(c).filter { $0 == "device.fork_seen" }.count == 1)

        let audit = try c("audit", inspection, "--format", "json")
        #expect(audit.status == 1)
        let check = try JSONSchemaCheck.validate("audit", audit.stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(audit.stdout.utf8)) as? [String: Any])
        let result = try #require(report["result"] as? [String: Any])
        #expect(result["verdict"] as? String == "FORKED")
        #expect((result["headline"] as? String)?.hasPrefix("FORKED") == true)
        let text = try c("audit", inspection)
        #expect(text.stdout.contains("RESULT: FORKED"), "\(text.stdout)")
        #expect(!text.stdout.contains("RESULT: INTACT"))
        #expect(try receivedFrom(c).first?["forked"] as? Bool == true)
    }

    // MARK: - A copy is a copy

    /// A new device's file of the receiver's own, never-shared inspection:
    /// its `inspection.started` has the same event id, but other bytes
    /// (facility "Forged Facility"). Refused, the receiver's form unchanged.
    @Test func aForgedCopyOfTheReceiversOwnInspectionIsRefused() throws {
        let r = try JQCRunner.pulled(in: directory, name: "r")
        let inspection = try r.startInspection("Restroom QC")
        try JQCRunner.succeeded(r("--as", "Dana", "set", inspection, "Floors", "4"))
        let id = try #require(UUID(uuidString: try inspectionOf(r)))
        let shown = try JQCRunner.succeeded(r("--json", "show", inspection)).stdout

        let held = try InspectionLedger(storePath: r.ledger + "/store", photosPath: r.ledger + "/photos")
        let start = try #require(try held.log.records(inStream: id).first { $0.type == "inspection.started" })
        held.close()
        guard case .started(var started) = try InspectionEvent.decode(start) else {
            Issue.record("the first record is no inspection.started")
            return
        }
        started.facilityName = "Forged Facility"

        let forger = try JQCRunner.pulled(in: directory, name: "forger")
        // A draft of its own pins the template in the forger's log, as the file needs.
        _ = try forger.startInspection("Restroom QC")
        let forgerDevice = try #require(UUID(uuidString: try forger.deviceID))
        let log = try InspectionLedger(storePath: forger.ledger + "/store", photosPath: forger.ledger + "/photos")
        try log.append([
            InspectionEvent.started(started).pending(
                stream: id, actor: start.actor, device: forgerDevice, recordedAt: start.recordedAt, id: start.id)
        ])
        log.close()
        let file = try share(forger, inspection, "forged-copy.json")

        let refused = try r.reportingKinds("--as", "Dana", "receive", file)
        #expect(refused.status == 1)
        #expect(refused.errorKind == "SenderTrust.Distrust.otherStart", "\(refused.stderr)")
        #expect(refused.errorDetail?["their_start"] as? String == start.id.lowercased, "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was recorded"))
        #expect(try JQCRunner.succeeded(r("--json", "show", inspection)).stdout == shown)
        #expect(!(try eventTypes(r)).contains("inspection.received"))
    }

    /// A device that received R's copy answers with a record of its own that
    /// reuses the id of R's answer (other bytes): refused, naming the id.
    @Test func aRecordReusingTheIdOfOneHeldHereWithOtherBytesIsRefusedNamingIt() throws {
        let r = try JQCRunner.pulled(in: directory, name: "r")
        let f = try JQCRunner.pulled(in: directory, name: "f")
        let inspection = try r.startInspection("Restroom QC")
        try JQCRunner.succeeded(r("--as", "Dana", "set", inspection, "Floors", "4"))
        let id = try #require(UUID(uuidString: try inspectionOf(r)))
        try JQCRunner.succeeded(f("--as", "Fay", "receive", try share(r, inspection, "r1.json")))

        let held = try InspectionLedger(storePath: r.ledger + "/store", photosPath: r.ledger + "/photos")
        let answer = try #require(try held.log.records(inStream: id).first { $0.type == "inspection.field_set" })
        held.close()
        let fDevice = try #require(UUID(uuidString: try f.deviceID))
        let log = try InspectionLedger(storePath: f.ledger + "/store", photosPath: f.ledger + "/photos")
        try log.append([
            try InspectionEvent.decode(answer).pending(
                stream: id, actor: answer.actor, device: fDevice, recordedAt: answer.recordedAt, id: answer.id)
        ])
        log.close()
        let file = directory.appending("f1.json")
        try JQCRunner.succeeded(f("--as", "Fay", "handover", inspection, "--share", "-o", file))

        let refused = try r.reportingKinds("--as", "Dana", "receive", file)
        #expect(refused.status == 1)
        #expect(refused.errorKind == "SenderTrust.Distrust.otherBytes", "\(refused.stderr)")
        #expect(refused.errorDetail?["event"] as? String == answer.id.lowercased, "\(refused.stderr)")
        #expect(!(try eventTypes(r)).contains("inspection.received"))
    }
}
