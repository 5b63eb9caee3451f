import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

/// Photos travel with every record that names them, through any number of
/// hops, and one plain handover has one owner: through the built `jqc`,
/// three ledgers, the development server in both profiles.
@Suite struct PhotoHopsEndToEndTests {
    /// A ledger with no login, recording as a named actor (unverified).
    static func offlineLedger(_ serverURL: String) throws -> SampleLedger {
        let ledger = try SampleLedger(serverURL: serverURL)
        let named = try ledger.jqc("config", "set", "actor", "Dana")
        #expect(named.status == 0, "\(named.stderr)")
        return ledger
    }

    /// Shares `id` from `from` and receives the file on `to`: the file.
    @discardableResult
    static func share(_ id: UUID, from: SampleLedger, to: SampleLedger, name: String) throws -> String {
        let file = from.directory.appending("\(name).json")
        let shared = try from.jqc("handover", id.lowercased, "--share", "-o", file)
        #expect(shared.status == 0, "\(shared.stderr)")
        let received = try to.jqc("receive", file)
        #expect(received.status == 0, "\(received.stderr)")
        return file
    }

    /// A draft on `a` with a photo in the image field (10) and an issue with
    /// its photo: the two photo files' hashes.
    static func draftWithPhotos(_ a: SampleLedger) throws -> (id: UUID, photos: [String]) {
        let id = try a.draft()
        let fieldPhoto = try a.storedPhoto()
        try a.record(.capturePhoto(fieldPhoto, for: .field("10")), on: id)
        let issuePhoto = try a.storedPhoto()
        try a.record(
            .flagIssue(FlagIssue(issueID: UUID(), severity: "high", description: "Leaking tap", photo: issuePhoto)),
            on: id)
        return (id, [fieldPhoto.sha256.hex, issuePhoto.sha256.hex])
    }

    @Test(arguments: DevServer.Profile.allCases)
    func aThirdHopPhotoReachesTheServerWithItsIssuePhoto(profile: DevServer.Profile) throws {
        let server = try DevServer(profile: profile)
        let a = try Self.offlineLedger(server.baseURL)
        let b = try Self.offlineLedger(server.baseURL)
        let c = try SampleLedger(serverURL: server.baseURL)
        defer { withExtendedLifetime((a, b)) {} }
        try c.login()
        let (id, photos) = try Self.draftWithPhotos(a)
        try Self.share(id, from: a, to: b, name: "a1")
        let file = try Self.share(id, from: b, to: c, name: "b1")
        // B's file carries A's two photos, though B captured none.
        let json = try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        #expect(json["format"]?.stringValue == "jqc-handover/3")
        #expect(json["photo_files"]?.arrayValue?.isEmpty == true)
        #expect(json["carried_photo_files"]?.arrayValue?.compactMap { $0["sha256"]?.stringValue } == photos.sorted())
        for hash in photos { #expect(c.ledger.photos.check(sha256: hash) == .matches) }
        let check = try c.jqc("check", "--photos")
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")

        for answer in ["2=4", "3=5", "5=pass", "7=yes", "8=Good"] {
            let set = try c.jqc("set", id.lowercased, answer)
            #expect(set.status == 0, "\(set.stderr)")
        }
        #expect(try c.jqc("submit", id.lowercased).status == 0)
        let sync = try c.jqc("--json", "sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(!sync.stdout.contains("missing"), "\(sync.stdout)")
        let report = try JSONValue(parsing: sync.stdout)
        #expect(
            report["sent"] == .object(["photo": .integer(2), "inspection": .integer(1), "issue": .integer(1)]),
            "\(sync.stdout)")
        #expect(report["failed"]?.arrayValue?.isEmpty == true, "\(sync.stdout)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)
        #expect(try server.count("photos") == 2)
        // A second sync adds nothing (the reference profile has no
        // idempotency: only the outbox keeps it once).
        let again = try c.jqc("sync")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try server.count("inspections") == 1)
        #expect(try server.count("issues") == 1)
        #expect(try server.count("photos") == 2)
        let history = try JSONValue(parsing: try c.jqc("--json", "history").stdout)
        let record = try #require(history["inspections"]?.arrayValue?.first)
        #expect(record["form_data"]?["10"]?.stringValue?.hasPrefix("/uploads/") == true)
        let state = try #require(try c.ledger.state(of: id))
        #expect(state.issues.count == 1)
        #expect(state.sync.acceptedIssues.count == 1)
        #expect(state.photos.allSatisfy { state.sync.uploadedPhotos[$0.photo.photoID] != nil })
    }

    @Test(arguments: DevServer.Profile.allCases)
    func theSecondReceiverOfABoundHandoverCannotSubmitAndTheServerHoldsOneRecord(profile: DevServer.Profile)
        throws
    {
        let server = try DevServer(profile: profile)
        let a = try Self.offlineLedger(server.baseURL)
        let b = try SampleLedger(serverURL: server.baseURL)
        let c = try SampleLedger(serverURL: server.baseURL)
        defer { withExtendedLifetime(a) {} }
        try b.login()
        try c.login()
        let id = try a.draft()
        try a.record(.setField(field: "2", to: .text("4")), on: id)
        // B's id as its `jqc status` shows it.
        let status = try JSONValue(parsing: try b.jqc("--json", "status").stdout)
        let bDevice = try #require(status["device"]?.stringValue, "\(status)")
        #expect(bDevice == b.device.lowercased)
        let file = a.directory.appending("handover.json")
        let handed = try a.jqc("--json", "handover", id.lowercased, "-o", file, "--to", bDevice)
        #expect(handed.status == 0, "\(handed.stderr)")
        #expect(try JSONValue(parsing: handed.stdout)["to_device"] == .string(bDevice), "\(handed.stdout)")

        let onB = try b.jqc("receive", file)
        #expect(onB.status == 0, "\(onB.stderr)")
        #expect(!onB.stdout.contains("Read-only"), "\(onB.stdout)")
        let onC = try c.jqc("--json", "receive", file)
        #expect(onC.status == 0, "\(onC.stderr)")
        let copy = try JSONValue(parsing: onC.stdout)
        #expect(copy["read_only_copy_of"] == .string(bDevice) && copy["addressed_to"] == .string(bDevice), "\(copy)")
        // C shows and audits it; it records nothing.
        #expect(try c.jqc("show", id.lowercased).status == 0)
        #expect(try c.jqc("audit", id.lowercased).status == 0)
        // A copy C can never record on is not among its drafts (rebuilt or not).
        for rebuilt in [false, true] {
            if rebuilt { #expect(try c.jqc("rebuild").status == 0) }
            let drafts = try c.jqc("--json", "drafts")
            #expect(drafts.status == 0, "\(drafts.stderr)")
            #expect(!drafts.stdout.contains(id.lowercased), "\(drafts.stdout)")
        }
        #expect(try b.jqc("--json", "drafts").stdout.contains(id.lowercased))
        for answer in ["3=5", "5=pass", "7=yes", "8=Good"] {
            let refused = try c.jqc.reportingKinds("set", id.lowercased, answer)
            #expect(refused.status == 1)
            #expect(refused.errorKind == "DomainError.readOnlyCopy", "\(refused.stderr)")
            #expect(refused.errorMessage?.contains(bDevice) == true, "\(refused.stderr)")
            #expect(try b.jqc("set", id.lowercased, answer).status == 0)
        }
        let refusedSubmit = try c.jqc.reportingKinds("submit", id.lowercased)
        #expect(refusedSubmit.status == 1)
        #expect(refusedSubmit.errorKind == "DomainError.readOnlyCopy", "\(refusedSubmit.stderr)")
        #expect(refusedSubmit.errorMessage?.contains(bDevice) == true, "\(refusedSubmit.stderr)")
        #expect(try b.jqc("submit", id.lowercased).status == 0)
        for ledger in [c, b, c] {
            let sync = try ledger.jqc("sync")
            #expect(sync.status == 0, "\(sync.stderr)")
        }
        #expect(try server.count("inspections") == 1)
    }
}
