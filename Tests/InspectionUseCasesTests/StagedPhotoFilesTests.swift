import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// How a reception stages its photo files (`Reception.stage`) and what it
/// takes back when its record fails (`Reception.removeUnnamed`): every file
/// checked before any is stored, and only the files it added that no event
/// names are removed.
@Suite struct StagedPhotoFilesTests {
    typealias Device = HandoverUseCaseTests.Device

    static func prepared(_ device: Device, red: UInt8) throws -> PhotoStore.PreparedPhoto {
        try device.ledger.photos.prepare(data: SampleReference.png(width: 3, height: 3, red: red), name: "photo \(red)")
    }

    @Test func aFailedReceptionRemovesOnlyTheFilesItAddedThatNoEventNames() throws {
        let device = try Device(actor: "Ben")
        let id = try device.startInspection()
        // Named: captured by an event (as another command's capture of the
        // same bytes would be, between the files and the failed record).
        let named = try Self.prepared(device, red: 10)
        let unnamed = try Self.prepared(device, red: 20)
        for added in [named, unnamed] { #expect(try device.ledger.photos.keep(added)) }
        let photo = PhotoReference(
            photoID: UUID(), sha256: try #require(Digest256(hex: named.description.sha256)),
            size: named.description.size, mediaType: named.description.mediaType)
        try device.record([.capturePhoto(photo, for: .field("10"))], on: id)
        // There before the reception: not among what it added.
        let before = try Self.prepared(device, red: 30)
        #expect(try device.ledger.photos.keep(before))

        Reception.removeUnnamed([named.description, unnamed.description], ledger: device.ledger)
        #expect(
            try device.ledger.photos.storedNames()
                == [named.description.sha256, before.description.sha256].sorted())
    }

    @Test func stagingChecksEveryFileBeforeAnyIsStored() throws {
        let (sender, id, path) = try HandoverUseCaseTests.handedOver()
        _ = (sender, id)
        var file = try HandoverFile(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let good = try #require(file.photoFiles.first)
        let bad = Data("not an image".utf8)
        let cases:
            [(
                files: [(sha256: Digest256, data: HandoverFile.PhotoBytes)],
                carried: [(sha256: Digest256, data: HandoverFile.PhotoBytes)], says: String
            )] =
                [
                    ([good, (SHA256Hasher().digest(Array(bad)), .inMemory(bad))], [], "photo_files[1]"),
                    ([good], [(SHA256Hasher().digest(Array(bad)), .inMemory(bad))], "carried_photo_files[0]"),
                    ([good, (SHA256Hasher().digest([]), .inMemory(Data()))], [], "photo_files[1] (file"),
                ]
        let receiver = try Device(actor: "Ben")
        for (files, carried, says) in cases {
            file.photoFiles = files
            file.carriedPhotoFiles = carried
            #expect {
                _ = try Reception.stage(file, photos: receiver.ledger.photos)
            } throws: { error in
                "\(error)".contains(says) && "\(error)".contains("nothing was recorded")
            }
            #expect(try receiver.ledger.photos.storedNames().isEmpty)
        }
        file.photoFiles = [good]
        file.carriedPhotoFiles = []
        #expect(try Reception.stage(file, photos: receiver.ledger.photos).count == 1)
        #expect(try receiver.ledger.photos.storedNames().isEmpty)
    }
}
