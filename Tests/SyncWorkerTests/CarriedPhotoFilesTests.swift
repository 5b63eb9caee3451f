import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

/// `carried_photo_files` of `jqc-handover/3` through the built `jqc`, no
/// server: a photo reaches every device the records naming it reach, the
/// photo store is checked against every photo an event names at any depth,
/// a tampered list is refused with nothing recorded, and a refused file
/// leaves `photos/` as it was.
@Suite struct CarriedPhotoFilesTests {
    /// No server is asked: nothing here syncs.
    static let noServer = "http://127.0.0.1:9/api/v1"

    /// The photo files in a ledger's store, by name.
    static func storedPhotos(_ ledger: SampleLedger) throws -> [String] {
        try ledger.ledger.photos.storedNames()
    }

    /// How many records a ledger's log holds.
    static func logCount(_ ledger: SampleLedger) throws -> Int { try ledger.eventTypes().count }

    /// A (a field photo and an issue photo) shares to B; B shares to a new
    /// ledger: B's file, which carries A's two photos, and its receiver.
    static func secondHop() throws -> (a: SampleLedger, b: SampleLedger, id: UUID, photos: [String], file: String) {
        let a = try PhotoHopsEndToEndTests.offlineLedger(noServer)
        let b = try PhotoHopsEndToEndTests.offlineLedger(noServer)
        let (id, photos) = try PhotoHopsEndToEndTests.draftWithPhotos(a)
        try PhotoHopsEndToEndTests.share(id, from: a, to: b, name: "a1")
        let file = b.directory.appending("b1.json")
        let shared = try b.jqc("--json", "handover", id.lowercased, "--share", "-o", file)
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(try JSONValue(parsing: shared.stdout)["photos"] == .integer(2), "\(shared.stdout)")
        return (a, b, id, photos, file)
    }

    @Test func checkPhotosNamesAPhotoACarriedRecordNamesAndTheStoreLacks() throws {
        let (a, b, id, photos, file) = try Self.secondHop()
        defer { withExtendedLifetime((a, b)) {} }
        let c = try PhotoHopsEndToEndTests.offlineLedger(Self.noServer)
        let received = try c.jqc("receive", file)
        #expect(received.status == 0, "\(received.stderr)")
        #expect(try c.jqc("check", "--photos").status == 0)
        // The issue photo lost from C's store: named, though no event of C's
        // stream captured it (A's, carried inside B's reception).
        let lost = c.path + "/photos/" + photos[1]
        #expect(FileManager.default.fileExists(atPath: lost))
        if FileManager.default.fileExists(atPath: lost) { try FileManager.default.removeItem(atPath: lost) }
        let check = try c.jqc("--json", "check", "--photos")
        #expect(check.status == 1)
        let findings = try #require(try JSONValue(parsing: check.stdout)["findings"]?.arrayValue, "\(check.stdout)")
        let named = findings.filter { $0["subject"]?.stringValue?.contains(photos[1]) == true }
        #expect(named.map { $0["kind"]?.stringValue } == ["missing"], "\(check.stdout)")
        // And C refuses to hand on a file without it, before recording.
        let before = try Self.logCount(c)
        let onward = try c.jqc.reportingKinds(
            "handover", id.lowercased, "--share", "-o", c.directory.appending("c1.json"))
        #expect(onward.status == 1)
        #expect(onward.errorKind == "Handover.Failure.carriedPhotoMissing", "\(onward.stderr)")
        #expect(onward.errorMessage?.contains(photos[1]) == true, "\(onward.stderr)")
        #expect(try Self.logCount(c) == before)
        #expect(!FileManager.default.fileExists(atPath: c.directory.appending("c1.json")))
    }

    @Test func aWipedDeviceThatGetsTheWorkBackGetsThePhotosToo() throws {
        let a = try PhotoHopsEndToEndTests.offlineLedger(Self.noServer)
        let b = try PhotoHopsEndToEndTests.offlineLedger(Self.noServer)
        let (id, photos) = try PhotoHopsEndToEndTests.draftWithPhotos(a)
        try PhotoHopsEndToEndTests.share(id, from: a, to: b, name: "a1")
        // A is wiped: a new ledger gets the work back from B.
        let wiped = try PhotoHopsEndToEndTests.offlineLedger(Self.noServer)
        defer { withExtendedLifetime((a, b)) {} }
        try PhotoHopsEndToEndTests.share(id, from: b, to: wiped, name: "b1")
        #expect(try Self.storedPhotos(wiped) == photos.sorted())
        let check = try wiped.jqc("check", "--photos")
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    /// One way of spoiling `carried_photo_files`, and what the refusal says.
    struct Tampering: CustomStringConvertible, Sendable {
        var description: String
        var says: String
        var change: @Sendable (inout [String: Any], _ spare: String) -> Void
    }

    static let tamperings: [Tampering] = [
        Tampering(description: "changed", says: "carried_photo_files[0].data does not hash to its sha256") {
            file, spare in
            var list = file["carried_photo_files"] as! [[String: Any]]
            list[0]["data"] = spare
            file["carried_photo_files"] = list
        },
        Tampering(description: "missing", says: "carried_photo_files lacks the file of photo") { file, _ in
            var list = file["carried_photo_files"] as! [[String: Any]]
            list.removeFirst()
            file["carried_photo_files"] = list
        },
        Tampering(description: "unreferenced", says: "is the file of no photo a carried record names") {
            file, spare in
            var list = file["carried_photo_files"] as! [[String: Any]]
            let bytes = Data(base64Encoded: spare)!
            list.append(["sha256": SHA256Hasher().digest(Array(bytes)).hex, "data": spare])
            list.sort { ($0["sha256"] as! String) < ($1["sha256"] as! String) }
            file["carried_photo_files"] = list
        },
        Tampering(description: "repeated", says: "carried_photo_files[1] repeats the photo file") { file, _ in
            var list = file["carried_photo_files"] as! [[String: Any]]
            list.insert(list[0], at: 1)
            file["carried_photo_files"] = list
        },
        Tampering(description: "out of order", says: "carried_photo_files[1] is out of order") { file, _ in
            file["carried_photo_files"] = Array((file["carried_photo_files"] as! [[String: Any]]).reversed())
        },
        Tampering(description: "a photo moved to photo_files", says: "photo_files has 1 files for 0 photos") {
            file, _ in
            var list = file["carried_photo_files"] as! [[String: Any]]
            file["photo_files"] = [list.removeFirst()]
            file["carried_photo_files"] = list
        },
        Tampering(description: "to_device changed", says: "to_device") { file, _ in
            file["to_device"] = UUID().lowercased
        },
    ]

    @Test(arguments: tamperings)
    func aTamperedFileIsRefusedWithNothingRecorded(_ tampering: Tampering) throws {
        let (a, b, _, _, file) = try Self.secondHop()
        defer { withExtendedLifetime((a, b)) {} }
        var json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        #expect((json["carried_photo_files"] as? [Any])?.count == 2)
        let spare = SampleReference.png(width: 3, height: 3, red: 201).base64EncodedString()
        tampering.change(&json, spare)
        let tampered = file + ".tampered.json"
        try JSONSerialization.data(withJSONObject: json, options: .withoutEscapingSlashes).write(
            to: URL(fileURLWithPath: tampered))
        let c = try PhotoHopsEndToEndTests.offlineLedger(Self.noServer)
        let before = try Self.logCount(c)
        let refused = try c.jqc("receive", tampered)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains(tampering.says), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was recorded"), "\(refused.stderr)")
        #expect(try Self.logCount(c) == before)
        #expect(try Self.storedPhotos(c).isEmpty)
        // The file as written is taken.
        #expect(try c.jqc("receive", file).status == 0)
    }

    @Test func aFileRefusedForItsSecondPhotoLeavesThePhotoStoreAsItWas() throws {
        let a = try PhotoHopsEndToEndTests.offlineLedger(Self.noServer)
        let id = try a.draft()
        try a.record(.capturePhoto(try a.storedPhoto(), for: .field("10")), on: id)
        // A second "photo" that is no image, kept in A's store under its
        // hash: its capture is signed with the rest, so the file is
        // consistent, and only the photo store's check refuses it.
        let bytes = Array("not an image, but signed as a photo".utf8)
        let hash = SHA256Hasher().digest(bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: a.path + "/photos/" + hash.hex))
        try a.record(
            .capturePhoto(
                PhotoReference(photoID: UUID(), sha256: hash, size: bytes.count, mediaType: "image/png"),
                for: .inspection), on: id)
        let file = a.directory.appending("a1.json")
        let shared = try a.jqc("handover", id.lowercased, "--share", "-o", file)
        #expect(shared.status == 0, "\(shared.stderr)")

        let b = try PhotoHopsEndToEndTests.offlineLedger(Self.noServer)
        defer { withExtendedLifetime(a) {} }
        // B holds a photo of its own, unlike any of A's (so the store is
        // not empty, and A's first photo would be new to it).
        let own = try b.ledger.photos.prepare(
            data: SampleReference.png(width: 5, height: 5, red: 77), name: "B's own photo")
        try b.ledger.photos.keep(own)
        let before = try Self.storedPhotos(b)
        #expect(before == [own.description.sha256])
        let logBefore = try Self.logCount(b)
        let refused = try b.jqc.reportingKinds("receive", file)
        #expect(refused.status == 1)
        #expect(refused.errorKind == "Reception.Refusal.photoFileRefused", "\(refused.stderr)")
        #expect(refused.errorMessage?.contains("photo_files[1]") == true, "\(refused.stderr)")
        #expect(refused.stderr.contains("is not a JPEG, PNG, GIF, WebP or HEIC image"), "\(refused.stderr)")
        #expect(try Self.storedPhotos(b) == before)
        #expect(try Self.logCount(b) == logBefore)
        let staging = b.path + "/photos/.incoming"
        if FileManager.default.fileExists(atPath: staging) {
            #expect(try FileManager.default.contentsOfDirectory(atPath: staging).isEmpty)
        }
    }
}
