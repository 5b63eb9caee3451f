import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `Handover`, `Reception` and `ReceivedProof` on two in-process ledgers:
/// the sender stops, the receiver verifies before it records and goes on,
/// and the sender's part stays provable from the receiver's log.
@Suite struct HandoverUseCaseTests {
    /// One device: a ledger directory, its store, the sample reference data.
    struct Device {
        let temporary = TemporaryDirectory(prefix: "handover-device")
        let directory: LedgerDirectory
        let device = UUID()
        let ledger: InspectionLedger
        let clock = ManualClock()
        let actor: Actor
        var identity: DeviceIdentity { DeviceIdentity(directory: directory, device: device) }

        init(actor name: String) throws {
            actor = Actor(id: "local:\(name)", name: name, verified: false)
            directory = LedgerDirectory(path: temporary.appending("ledger"))
            try FileManager.default.createDirectory(atPath: directory.photosPath, withIntermediateDirectories: true)
            try LedgerConfig(deviceID: device, serverURL: nil, createdAt: clock.now()).save(directory)
            ledger = try InspectionLedger(
                storePath: directory.storePath, photosPath: directory.photosPath, access: .creating)
            let json = try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleReference.path))))
            try ledger.reference.replace(with: try ReferenceCache.Snapshot(json: json), at: clock.now())
        }

        @discardableResult
        func record(_ commands: [InspectionCommand], on id: UUID) throws -> InspectionState {
            clock.advance(microseconds: 1_000)
            return try ledger.record(commands, on: id, by: actor, device: device, clock: clock).state
        }

        func recordCount() throws -> Int { try ledger.log.read { try $0.count() } }

        /// Starts a "Restroom QC" (template 11) at facility 101: the draft the handover tests move.
        func startInspection() throws -> UUID {
            let template = try #require(try ledger.reference.template(id: "11"))
            let id = UUID()
            try record(
                [
                    .start(
                        StartInspection(
                            template: template, templateAlreadyPinned: false, facilityID: "101",
                            facilityName: "Riverside Medical Center"))
                ], on: id)
            return id
        }
    }

    /// A sender's draft with an answer, a photo and an issue, handed over.
    static func handedOver() throws -> (sender: Device, id: UUID, file: String) {
        let sender = try Device(actor: "Ana")
        let id = try sender.startInspection()
        try sender.record([.setField(field: "Floors", to: .text("4"))], on: id)
        let png = try SampleReference.writePNG(in: sender.temporary.path, name: "p.png", red: 77)
        let prepared = try sender.ledger.photos.prepare(fileAt: png)
        try sender.ledger.photos.keep(prepared)
        let photo = PhotoReference(
            photoID: UUID(), sha256: try #require(Digest256(hex: prepared.description.sha256)),
            size: prepared.description.size, mediaType: prepared.description.mediaType)
        try sender.record([.capturePhoto(photo, for: .field("10"))], on: id)
        try sender.record(
            [.flagIssue(FlagIssue(issueID: UUID(), severity: "high", description: "Leaking tap"))], on: id)
        let file = sender.temporary.appending("handover.json")
        let written = try Handover(ledger: sender.ledger, identity: sender.identity).write(
            inspection: id, to: "Ben", mode: .handover, output: file, actor: sender.actor, clock: sender.clock)
        #expect(written.recorded && written.photos == 1 && written.mode == .handover)
        return (sender, id, file)
    }

    @Test func theReceiverTakesItOverAndTheSenderStops() throws {
        let (sender, id, file) = try Self.handedOver()
        #expect(throws: DomainError.self) { try sender.record([.setField(field: "Floors", to: .text("5"))], on: id) }
        let receiver = try Device(actor: "Ben")
        let received = try Reception(ledger: receiver.ledger, device: receiver.device).receive(
            file: file, actor: receiver.actor, clock: receiver.clock)
        #expect(received.recorded && received.photos == 1 && received.pinnedTemplate)
        let state = try #require(try receiver.ledger.state(of: id))
        #expect(state.status == .draft && state.values["2"] == .rating(4) && state.issues.count == 1)
        #expect(state.startedBy?.name == "Ana")
        #expect(state.eventCount == 2, "template.pinned and inspection.received")
        let after = try receiver.record([.setField(field: "Floors", to: .text("5"))], on: id)
        #expect(after.values["2"] == .rating(5))
        #expect(receiver.ledger.photos.contents(sha256: state.photos[0].photo.sha256.hex) != nil)
    }

    @Test func aMissingPhotoFileRecordsNoHandover() throws {
        let sender = try Device(actor: "Ana")
        let id = try sender.startInspection()
        let photo = PhotoReference(
            photoID: UUID(), sha256: SHA256Hasher().digest([1, 2, 3]), size: 3, mediaType: "image/png")
        try sender.record([.capturePhoto(photo, for: .inspection)], on: id)
        let count = try sender.recordCount()
        #expect(throws: Handover.Failure.self) {
            try Handover(ledger: sender.ledger, identity: sender.identity).write(
                inspection: id, to: nil, mode: .handover, output: sender.temporary.appending("h.json"),
                actor: sender.actor, clock: sender.clock)
        }
        #expect(try sender.recordCount() == count)
        #expect(try sender.ledger.state(of: id)?.isHandedAway == false)
    }

    @Test func theSameFileTwiceRecordsNothing() throws {
        let (sender, _, file) = try Self.handedOver()
        defer { withExtendedLifetime(sender) {} }
        let receiver = try Device(actor: "Ben")
        let reception = Reception(ledger: receiver.ledger, device: receiver.device)
        _ = try reception.receive(file: file, actor: receiver.actor, clock: receiver.clock)
        let count = try receiver.recordCount()
        let again = try reception.receive(file: file, actor: receiver.actor, clock: receiver.clock)
        #expect(!again.recorded)
        #expect(try receiver.recordCount() == count)
    }

    /// Byte offsets into the decoded first record, the photo and a proof hash.
    static let damages: [(member: String, offset: Int)] = [
        ("record", 0), ("record", 30), ("record", 90), ("photo", 10), ("photo", 40), ("inclusion", 0),
        ("inclusion", 31),
    ]

    /// The check that refuses each damage: a changed record or proof hash
    /// is the bundle's (check 1), a changed photo its file's (check 2).
    static func refusesByItsCheck(_ member: String, _ refusal: Reception.Refusal) -> Bool {
        switch (member, refusal) {
        case ("record", .bundle), ("inclusion", .bundle), ("photo", .photoFileNotItsPhoto(index: 0, _)): true
        default: false
        }
    }

    @Test(arguments: damages.indices)
    func aChangedByteIsRefusedWithNothingRecordedOrStored(index: Int) throws {
        let (member, offset) = Self.damages[index]
        let (sender, _, file) = try Self.handedOver()
        var json = try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        func flip(_ text: String) throws -> JSONValue {
            var bytes = [UInt8](try #require(Data(base64Encoded: text)))
            bytes[min(offset, bytes.count - 1)] ^= 0x80
            return .string(Data(bytes).base64EncodedString())
        }
        guard case .object(var top) = json, let b = top.firstIndex(where: { $0.key == "bundle" }),
            let p = top.firstIndex(where: { $0.key == "photo_files" }), case .object(var bundle) = top[b].value,
            let r = bundle.firstIndex(where: { $0.key == "records" }), case .array(var records) = bundle[r].value,
            case .object(var first) = records[1], case .array(var photos) = top[p].value,
            case .object(var photoFile) = photos[0]
        else { throw CocoaError(.coderReadCorrupt) }
        switch member {
        case "record":
            let i = try #require(first.firstIndex { $0.key == "record" })
            guard case .string(let text) = first[i].value else { throw CocoaError(.coderReadCorrupt) }
            first[i].value = try flip(text)
        case "inclusion":
            let i = try #require(first.firstIndex { $0.key == "inclusion" })
            guard case .array(let hashes) = first[i].value, case .string(let text) = hashes[0] else {
                throw CocoaError(.coderReadCorrupt)
            }
            first[i].value = .array([try flip(text)] + hashes.dropFirst())
        default:
            let i = try #require(photoFile.firstIndex { $0.key == "data" })
            guard case .string(let text) = photoFile[i].value else { throw CocoaError(.coderReadCorrupt) }
            photoFile[i].value = try flip(text)
        }
        records[1] = .object(first)
        bundle[r].value = .array(records)
        top[b].value = .object(bundle)
        photos[0] = .object(photoFile)
        top[p].value = .array(photos)
        json = .object(top)
        let damaged = sender.temporary.appending("damaged.json")
        try Data(json.prettyPrinted().utf8).write(to: URL(fileURLWithPath: damaged))

        let receiver = try Device(actor: "Ben")
        let before = try receiver.recordCount()
        let refusal = #expect(throws: Reception.Refusal.self) {
            try Reception(ledger: receiver.ledger, device: receiver.device).receive(
                file: damaged, actor: receiver.actor, clock: receiver.clock)
        }
        #expect(refusal.map { Self.refusesByItsCheck(member, $0) } == true, "\(String(describing: refusal))")
        #expect(try receiver.recordCount() == before)
        #expect(try receiver.ledger.photos.storedNames().isEmpty)
    }

    @Test func theSendersPartIsProvenAgainFromTheReceptionAndAChangeIsFound() throws {
        let (sender, id, file) = try Self.handedOver()
        defer { withExtendedLifetime(sender) {} }
        let receiver = try Device(actor: "Ben")
        _ = try Reception(ledger: receiver.ledger, device: receiver.device).receive(
            file: file, actor: receiver.actor, clock: receiver.clock)
        let record = try #require(
            try receiver.ledger.log.records(inStream: id).first { $0.type == InspectionEventType.received.rawValue })
        guard
            case .received(let received) = try receiver.ledger.log.read({
                try CarriedClosure.event(of: record, reader: $0)
            })
        else {
            throw CocoaError(.coderReadCorrupt)
        }
        #expect(try ReceivedProof.verify(received, inspection: id) >= UInt64(received.records.count))
        var changed = received
        var bytes = try #require(received.carried.record(received.records[2].leaf))
        bytes[40] ^= 0x01
        changed.records[2].leaf = changed.carried.insert(bytes)
        // Each refused by the bundle's own check (check 1): the changed
        // record's inclusion, the dropped one's gap in the versions.
        let changedRefusal = #expect(throws: Reception.Refusal.self) {
            try ReceivedProof.verify(changed, inspection: id)
        }
        #expect(changedRefusal.map { if case .bundle = $0 { true } else { false } } == true)
        var dropped = received
        dropped.records.remove(at: 1)
        let droppedRefusal = #expect(throws: Reception.Refusal.self) {
            try ReceivedProof.verify(dropped, inspection: id)
        }
        #expect(droppedRefusal.map { if case .bundle = $0 { true } else { false } } == true)
    }
}
