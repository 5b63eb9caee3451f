import Foundation
import InspectionDomain
@_spi(RawAppend) import InspectionStore
import LedgerCore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// `SenderTrust`'s rules on their own: which key a file may be signed by,
/// what a rotation's endorsement must be, and when two checkpoints of one
/// device are a fork.
@Suite struct SenderTrustTests {
    static let device = UUID(uuidString: "0190f6e2-0000-7000-8000-00000000d0a1")!
    static let first = try! NoteKey.generate(name: DeviceKeyFile.name(device))
    static let second = try! NoteKey.generate(name: DeviceKeyFile.name(device))
    static let stranger = try! NoteKey.generate(name: DeviceKeyFile.name(device))
    static let sha256 = SHA256Hasher().digest(Array("file".utf8))

    /// The bytes of a `device.key_published` record of `key`, endorsed by `by`.
    static func keyRecord(_ key: NoteKey, endorsedBy old: NoteKey?) throws -> [UInt8] {
        let endorsement = try old.map { try DeviceIdentity.endorsement(of: key, by: $0) }
        let event = DeviceStreamEvent.keyPublished(.init(key: key.verifierKey, endorsement: endorsement))
            .pending(device: device, actor: SampleEvents.actor, recordedAt: Timestamp(microsecondsSinceEpoch: 1))
        return EventRecord(position: 3, streamVersion: 1, event: event).encoded()
    }

    /// A file of `device` signed by `key` with `keyRecord` (only what the
    /// key rule reads is filled in).
    static func file(signedBy key: NoteKey, keyRecord: [UInt8], from: UUID = device) -> HandoverFile {
        let entry = HandoverFile.Entry(
            position: 3, streamVersion: 1, type: "device.key_published", record: keyRecord, inclusion: [],
            path: "key_record")
        return HandoverFile(
            mode: .share, to: nil, fromDevice: from, inspection: UUID(), checkpoint: "", publicKey: key.verifierKey,
            keyRecord: entry, records: [], photos: [], templateRecord: entry, photoFiles: [])
    }

    static func held(_ keys: [NoteKey]) -> DevicePins.Device {
        var device = DevicePins.Device(id: device)
        for (index, key) in keys.enumerated() { device.pin(key.verifierKey, .reception(position: UInt64(index + 1))) }
        return device
    }

    enum Expected: Equatable {
        case pins, nothing, otherKey, notTheGivenKey, givenKeyUnusable
    }

    /// (what is pinned, the file's key, its key record's endorser, --key, expected)
    static let keyCases: [(String, [NoteKey], NoteKey, NoteKey?, String?, Expected)] = [
        ("nothing pinned: the first file pins", [], first, nil, nil, .pins),
        ("signed by the pinned key", [first], first, nil, nil, .nothing),
        ("another key, no rotation", [first], stranger, nil, nil, .otherKey),
        ("another key endorsed by a key that is not pinned", [first], second, stranger, nil, .otherKey),
        ("a rotation endorsed by the pinned key", [first], second, first, nil, .pins),
        ("--key of the file's key, something else pinned", [first], second, nil, second.verifierKey, .pins),
        ("--key of the file's key, already pinned", [first], first, nil, first.verifierKey, .nothing),
        ("--key of another key", [], first, nil, stranger.verifierKey, .notTheGivenKey),
        ("--key that is no key", [first], first, nil, "not a key", .givenKeyUnusable),
    ]

    @Test(arguments: keyCases.indices)
    func aFileIsSignedByAPinnedKeyOrARotationItEndorsed(_ index: Int) throws {
        let (name, pinned, key, endorser, given, expected) = Self.keyCases[index]
        let file = Self.file(signedBy: key, keyRecord: try Self.keyRecord(key, endorsedBy: endorser))
        let outcome: Expected
        do {
            let pin = try SenderTrust.keyDecision(file, sha256: Self.sha256, held: Self.held(pinned), given: given)
            if let pin {
                #expect(pin.publicKey == key.verifierKey && pin.fileSHA256 == Self.sha256, "\(name)")
                #expect(pin.keyID == DeviceKeyFile.keyID(key.verifierKey))
            }
            outcome = pin == nil ? .nothing : .pins
        } catch .otherKey(_, let fileKey, let keys) {
            #expect(fileKey == key.verifierKey && keys == pinned.map(\.verifierKey), "\(name)")
            outcome = .otherKey
        } catch .notTheGivenKey {
            outcome = .notTheGivenKey
        } catch .givenKeyUnusable {
            outcome = .givenKeyUnusable
        } catch {
            Issue.record("\(name): \(error)")
            return
        }
        #expect(outcome == expected, "\(name)")
    }

    /// A reception recorded before pins existed (no `device.key_pinned`
    /// beside it, as an older jqc recorded it) pins the key it was verified
    /// with: a later file under that device's name with another key is refused.
    @Test func aReceptionRecordedBeforePinsCountsAsAPin() throws {
        let (sender, id, path) = try HandoverUseCaseTests.handedOver()
        let receiver = try HandoverUseCaseTests.Device(actor: "Ben")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let file = try HandoverFile(decoding: bytes)
        let carried = file.reception(sha256: SHA256Hasher().digest(bytes))
        let verified = try HandoverVerification.verify(file)
        try receiver.ledger.record(
            [.templatePinned(verified.template), .received(carried)], stream: id, expectedVersion: 0,
            actor: receiver.actor, device: receiver.device, at: receiver.clock.now(), carrying: carried.carried)

        let pins = try receiver.ledger.log.read { try DevicePins.read($0, own: receiver.device) }
        let held = try #require(pins.devices[sender.device])
        #expect(held.keys.map(\.key) == [file.publicKey])
        #expect(held.keys.first?.source == .reception(position: 2))
        #expect(held.receptions == 1 && held.checkpoints.count == 1 && !held.isForked)
        let forged = Self.file(
            signedBy: Self.stranger, keyRecord: try Self.keyRecord(Self.stranger, endorsedBy: nil), from: sender.device)
        #expect(throws: SenderTrust.Distrust.self) {
            try SenderTrust.keyDecision(forged, sha256: Self.sha256, held: held, given: nil)
        }
    }

    /// The refusal names both key ids and what to do.
    @Test func theRefusalNamesBothKeysAndWhatToDo() {
        let text = SenderTrust.Distrust.otherKey(
            device: Self.device, fileKey: Self.stranger.verifierKey, pinned: [Self.first.verifierKey]
        ).description
        #expect(text.hasPrefix("NOT VERIFIED: ") && text.contains("nothing was recorded"))
        #expect(text.contains(DeviceKeyFile.keyID(Self.stranger.verifierKey)))
        #expect(text.contains(DeviceKeyFile.keyID(Self.first.verifierKey)))
        #expect(text.contains("jqc receive FILE --key VKEY"))
    }

    static let endorsementCases: [(String, @Sendable (String) -> String, Bool)] = [
        ("as jqc key rotate writes it", { $0 }, true),
        ("the named key changed", { $0.replacingOccurrences(of: "rotation\n", with: "rotation\nx") }, false),
        ("the signature cut", { String($0.prefix($0.count - 10)) + "\n" }, false),
        ("no signature", { String($0.prefix(while: { $0 != "\u{2014}" })) }, false),
        ("another text", { "jqc key endorsement" + $0.dropFirst("jqc key rotation".count) }, false),
    ]

    @Test(arguments: endorsementCases.indices)
    func onlyTheEndorsementJqcWritesIsAccepted(_ index: Int) throws {
        let (name, change, accepted) = Self.endorsementCases[index]
        let endorsement = change(try DeviceIdentity.endorsement(of: Self.second, by: Self.first))
        #expect(
            SenderTrust.endorses(endorsement, key: Self.second.verifierKey, by: Self.first) == accepted, "\(name)")
        // Never by another key than the one that signed it.
        #expect(!SenderTrust.endorses(endorsement, key: Self.second.verifierKey, by: Self.stranger), "\(name)")
    }

    static func checkpoint(_ size: UInt64, _ root: UInt8, _ leaves: [UInt64: UInt8]) -> DevicePins.HeldCheckpoint {
        DevicePins.HeldCheckpoint(
            size: size, root: Digest256(bytes: [UInt8](repeating: root, count: 32))!, note: "",
            leaves: leaves.mapValues { Digest256(bytes: [UInt8](repeating: $0, count: 32))! }, heldBy: "a reception")
    }

    /// (case, first, second, the reason's words or nil for consistent)
    static let forkCases: [(String, DevicePins.HeldCheckpoint, DevicePins.HeldCheckpoint, String?)] = [
        ("the same checkpoint", checkpoint(7, 1, [2: 9]), checkpoint(7, 1, [2: 9]), nil),
        ("one size, two roots", checkpoint(7, 1, [2: 9]), checkpoint(7, 2, [2: 9]), "one size with two roots"),
        ("a later tree with the same leaves", checkpoint(7, 1, [2: 9, 5: 4]), checkpoint(9, 2, [2: 9, 8: 3]), nil),
        (
            "a later tree with another leaf at a shared position", checkpoint(7, 1, [2: 9, 5: 4]),
            checkpoint(9, 2, [2: 9, 5: 6]), "the record at position 5"
        ),
        (
            "an earlier tree with another leaf", checkpoint(9, 2, [6: 6]), checkpoint(7, 1, [6: 5]),
            "the record at position 6"
        ),
        ("no position in common: not shown", checkpoint(7, 1, [2: 9]), checkpoint(9, 2, [8: 3]), nil),
    ]

    @Test(arguments: forkCases.indices)
    func twoCheckpointsOfOneDeviceAreAForkOnlyWhenTheyCannotBothBeItsHistory(_ index: Int) {
        let (name, a, b, reason) = Self.forkCases[index]
        let found = SenderTrust.contradiction(a, b)
        if let reason {
            #expect(found?.contains(reason) == true, "\(name): \(found ?? "consistent")")
        } else {
            #expect(found == nil, "\(name): \(found ?? "")")
        }
        #expect((SenderTrust.contradiction(b, a) == nil) == (reason == nil), "\(name), the other way round")
    }
}
