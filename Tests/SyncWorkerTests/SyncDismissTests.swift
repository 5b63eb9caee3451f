import Foundation
import InspectionDomain
import LedgerTestSupport
import Testing

/// `jqc sync dismiss ITEM --reason TEXT`: a photo that failed for good no
/// longer keeps the outbox from ever being empty; the acknowledgement is an
/// event, worded in `jqc log` and `jqc audit`.
@Suite struct SyncDismissTests {
    @Test func aPhotoFailedForGoodIsDismissedAndTheOutboxIsEmpty() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 1, issues: 0)
        let photo = try #require(try sample.ledger.state(of: id)?.photos.first).photo
        try FileManager.default.removeItem(atPath: sample.ledger.photos.directory + "/" + photo.sha256.hex)
        let prefix = String(photo.photoID.lowercased.prefix(8))
        let inspection = String(id.lowercased.prefix(8))
        #expect(try sample.jqc("sync").status == 1, "the photo failed for good")

        // Not without a reason, and not an item still on its way.
        let bare = try sample.jqc("sync", "dismiss", prefix)
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("--reason"), "\(bare.stderr)")
        let blank = try sample.jqc.reportingKinds("sync", "dismiss", prefix, "--reason", "  ")
        #expect(blank.status == 1)
        #expect(blank.errorKind == "SyncDismissal.Refusal.noReason", "\(blank.stderr)")

        let dismissed = try sample.jqc("sync", "dismiss", prefix, "--reason", "the file was lost with the old phone")

        #expect(dismissed.status == 0, "\(dismissed.stderr)")
        #expect(
            dismissed.stdout
                == "Dismissed photo \(prefix) of inspection \(inspection) from the outbox: it will not be sent. "
                + "The reason is recorded ('jqc log --inspection \(inspection)'); 'jqc sync retry \(prefix)' queues "
                + "it again.\n")
        #expect(try sample.ledger.outbox().isEmpty)
        let outbox = try sample.jqc("--json", "outbox")
        #expect(try JSONValue(parsing: outbox.stdout).arrayValue == [])
        let said = "dismissed photo \(prefix)…, failed for good, from the outbox: the file was lost with the old phone"
        let log = try sample.jqc("log", "--inspection", inspection)
        #expect(log.stdout.contains(said), "\(log.stdout)")
        let audit = try sample.jqc("audit", inspection)
        #expect(audit.stdout.contains(said), "\(audit.stdout)")
        let later = try sample.jqc("--json", "sync")
        #expect(later.status == 0)
        let report = try JSONValue(parsing: later.stdout)
        #expect(report["left_out"] == .array([]) && report["failed_earlier"] == .array([]), "\(later.stdout)")

        // Gone from the outbox, it cannot be dismissed twice.
        let twice = try sample.jqc.reportingKinds("sync", "dismiss", prefix, "--reason", "again")
        #expect(twice.status == 1)
        #expect(twice.errorKind == "SyncDismissal.Refusal.noSuchItem", "\(twice.stderr)")
        #expect(twice.errorMessage?.contains("'\(prefix)'") == true, "\(twice.stderr)")
    }

    @Test func theJSONOfADismissalMatchesItsSchema() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        try sample.login()
        let id = try sample.completedInspection(photos: 1, issues: 0)
        let photo = try #require(try sample.ledger.state(of: id)?.photos.first).photo
        try FileManager.default.removeItem(atPath: sample.ledger.photos.directory + "/" + photo.sha256.hex)
        #expect(try sample.jqc("sync").status == 1, "the photo failed for good")
        let dismissed = try sample.jqc(
            "--json", "sync", "dismiss", String(photo.photoID.lowercased.prefix(8)), "--reason", "lost")
        #expect(dismissed.status == 0, "\(dismissed.stderr)")
        let check = try JSONSchemaCheck.validate("dismissed", dismissed.stdout)
        #expect(check.status == 0, "\(check.stderr)")
        let json = try JSONValue(parsing: dismissed.stdout)
        #expect(json["id"]?.stringValue == photo.photoID.lowercased)
        #expect(json["kind"]?.stringValue == "photo")
    }

    @Test func anItemStillOnItsWayIsNotDismissed() throws {
        let server = try DevServer()
        let sample = try SampleLedger(serverURL: server.baseURL)
        let id = try sample.completedInspection(photos: 0, issues: 0)
        let refused = try sample.jqc.reportingKinds(
            "sync", "dismiss", String(id.lowercased.prefix(8)), "--reason", "not needed")
        #expect(refused.status == 1)
        #expect(refused.errorKind == "SyncDismissal.Refusal.notFailedForGood", "\(refused.stderr)")
        #expect(try sample.ledger.outbox().count == 1)
    }
}
