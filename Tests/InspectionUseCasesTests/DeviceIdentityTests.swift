import Foundation
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// One device key, never replaced silently: what the key file and the log's
/// published keys allow, the strict reading of the key file, rotation.
@Suite struct DeviceIdentityTests {
    /// A ledger directory with a store and a config, and the device's identity.
    struct Device {
        let temporary = TemporaryDirectory(prefix: "device-identity")
        let directory: LedgerDirectory
        let device = UUID()
        let ledger: InspectionLedger
        let clock = ManualClock()
        var identity: DeviceIdentity { DeviceIdentity(directory: directory, device: device) }

        init() throws {
            directory = LedgerDirectory(path: temporary.path)
            try LedgerConfig(deviceID: device, serverURL: nil, createdAt: clock.now()).save(directory)
            ledger = try InspectionLedger(
                storePath: directory.storePath, photosPath: directory.photosPath, access: .creating)
        }

        func keyEvents() throws -> Int { try identity.publishedKeys(ledger.log).count }
    }

    // MARK: - The decision, pure

    static let device = UUID(uuidString: "00000000-0000-4000-8000-00000000d001")!

    static func key() throws -> NoteKey { try NoteKey.generate(name: DeviceKeyFile.name(device)) }

    @Test func neitherAFileNorAPublishedKeyMakesOne() throws {
        #expect(try DeviceSigning.decide(file: nil, published: [], path: "k") == .create)
    }

    @Test func aFileTheLogHasNotPublishedIsPublished() throws {
        let key = try Self.key()
        #expect(try DeviceSigning.decide(file: key, published: [], path: "k") == .publish(key))
    }

    @Test func theFileThatIsThePublishedKeyIsUsed() throws {
        let key = try Self.key()
        #expect(try DeviceSigning.decide(file: key, published: [(key.verifierKey, 3)], path: "k") == .use(key))
    }

    @Test func aMissingFileAfterAPublishedKeyIsAnErrorNotANewKey() throws {
        let key = try Self.key()
        #expect(throws: DeviceKeyError.missing(path: "k", published: key.verifierKey, position: 3)) {
            try DeviceSigning.decide(file: nil, published: [(key.verifierKey, 3)], path: "k")
        }
    }

    @Test(arguments: [false, true])
    func anotherKeyThanThePublishedOneIsRefused(wasEarlier: Bool) throws {
        let old = try Self.key()
        let new = try Self.key()
        var published: [(key: String, position: UInt64)] = [(new.verifierKey, 9)]
        if wasEarlier { published.insert((old.verifierKey, 2), at: 0) }
        let error = #expect(throws: DeviceKeyError.self) {
            try DeviceSigning.decide(file: old, published: published, path: "k")
        }
        #expect(
            error
                == .replaced(
                    path: "k", found: old.verifierKey, published: new.verifierKey, position: 9, wasEarlier: wasEarlier))
        #expect(error?.description.contains("it is a key the device used before it was rotated") == wasEarlier)
    }

    // MARK: - The key file, read strictly

    enum Damage: String, CaseIterable {
        case worldReadable, groupReadable, symlink, fifo, directory, garbage, verifierOnly, otherDevice, tooLarge
    }

    @Test(arguments: Damage.allCases)
    func aKeyFileJqcWouldNotTrustIsRefusedSayingWhy(damage: Damage) throws {
        let device = try Device()
        defer { device.ledger.close() }
        let key = try DeviceKeyFile.create(device.directory, device: device.device)
        let path = device.directory.deviceKeyPath
        let expected: String
        switch damage {
        case .worldReadable:
            chmod(path, 0o644)
            expected = "may be read or written by other users (mode 644)"
        case .groupReadable:
            chmod(path, 0o640)
            expected = "(mode 640)"
        case .symlink:
            let elsewhere = device.temporary.appending("elsewhere.key")
            rename(path, elsewhere)
            symlink(elsewhere, path)
            expected = "is a symbolic link, not a regular file"
        case .fifo:
            unlink(path)
            mkfifo(path, 0o600)
            expected = "is a FIFO, not a regular file"
        case .directory:
            unlink(path)
            mkdir(path, 0o700)
            expected = "is a directory, not a regular file"
        case .garbage:
            try Data("not a key at all\n".utf8).write(to: URL(fileURLWithPath: path))
            expected = "is not usable"
        case .verifierOnly:
            try Data(key.verifierKey.utf8).write(to: URL(fileURLWithPath: path))
            expected = "holds a verifier key, not the private key"
        case .otherDevice:
            let other = try NoteKey.generate(name: DeviceKeyFile.name(UUID()))
            try Data(other.signerKey!.utf8).write(to: URL(fileURLWithPath: path))
            expected = "belongs to another ledger"
        case .tooLarge:
            try Data(repeating: 0x41, count: 10_000).write(to: URL(fileURLWithPath: path))
            expected = "larger than any key file"
        }
        chmod(path, damage == .worldReadable ? 0o644 : damage == .groupReadable ? 0o640 : 0o600)
        let error = #expect(throws: DeviceKeyError.self) {
            try DeviceKeyFile.load(device.directory, device: device.device)
        }
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
        // And signing refuses it too, recording nothing.
        #expect(throws: DeviceKeyError.self) {
            try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        }
        #expect(try device.keyEvents() == 0)
    }

    @Test func anIntactKeyFileLoadsAsTheKeyItHolds() throws {
        let device = try Device()
        defer { device.ledger.close() }
        let key = try DeviceKeyFile.create(device.directory, device: device.device)
        #expect(try DeviceKeyFile.load(device.directory, device: device.device) == key)
        var info = stat()
        #expect(stat(device.directory.deviceKeyPath, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(throws: DeviceKeyError.exists(path: device.directory.deviceKeyPath)) {
            try DeviceKeyFile.create(device.directory, device: device.device)
        }
    }

    // MARK: - Signing and rotation through the ledger

    @Test func theFirstSigningPublishesOnceAndThenUsesTheKey() throws {
        let device = try Device()
        defer { device.ledger.close() }
        let key = try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        #expect(try device.identity.signingKey(ledger: device.ledger, at: device.clock.now()) == key)
        #expect(try device.identity.publishedKeys(device.ledger.log).map(\.key) == [key.verifierKey])
    }

    @Test func aDeletedKeyIsNeverReplacedBySigning() throws {
        let device = try Device()
        defer { device.ledger.close() }
        _ = try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        unlink(device.directory.deviceKeyPath)
        let error = #expect(throws: DeviceKeyError.self) {
            try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        }
        let missing = {
            if case .missing(path: device.directory.deviceKeyPath, _, _)? = error { true } else { false }
        }()
        #expect(missing, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: device.directory.deviceKeyPath))
        #expect(try device.keyEvents() == 1)
    }

    @Test func aRotationIsEndorsedByTheOldKeyAndRecorded() throws {
        let device = try Device()
        defer { device.ledger.close() }
        let old = try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        let rotation = try device.identity.rotate(ledger: device.ledger, at: device.clock.now(), oldKeyLost: false)
        #expect(rotation.previous == old.verifierKey && rotation.endorsed)
        let new = try #require(try DeviceKeyFile.load(device.directory, device: device.device))
        #expect(new.verifierKey == rotation.key && new != old)
        #expect(try device.identity.publishedKeys(device.ledger.log).map(\.key) == [old.verifierKey, new.verifierKey])
        #expect(try device.identity.signingKey(ledger: device.ledger, at: device.clock.now()) == new)
        // The endorsement is a signed note by the old key naming the new one.
        let payload = try device.ledger.log.read { reader in
            try DeviceKeyFile.publishedRecords(reader, device: device.device).last!.record.payload
        }
        var cbor = CBORReader(payload)
        let endorsement = try #require(try cbor.readValue()["endorsement"]?.textValue)
        #expect(endorsement.hasPrefix("jqc key rotation\n\(new.name)\n\(new.verifierKey)\n\n\u{2014} \(old.name) "))
        #expect(!FileManager.default.fileExists(atPath: device.identity.pendingKeyPath))
    }

    @Test func aLostKeyIsRotatedOnlyWhenSaidSo() throws {
        let device = try Device()
        defer { device.ledger.close() }
        _ = try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        unlink(device.directory.deviceKeyPath)
        #expect(throws: DeviceKeyError.self) {
            try device.identity.rotate(ledger: device.ledger, at: device.clock.now(), oldKeyLost: false)
        }
        #expect(try device.keyEvents() == 1)
        let rotation = try device.identity.rotate(ledger: device.ledger, at: device.clock.now(), oldKeyLost: true)
        #expect(!rotation.endorsed)
        let payload = try device.ledger.log.read { reader in
            try DeviceKeyFile.publishedRecords(reader, device: device.device).last!.record.payload
        }
        var cbor = CBORReader(payload)
        #expect(try cbor.readValue()["previous_key_lost"] == .bool(true))
        #expect(try DeviceKeyFile.load(device.directory, device: device.device)?.verifierKey == rotation.key)
    }

    @Test func aRotationKilledAfterItsEventIsFinishedOnTheNextUse() throws {
        let device = try Device()
        defer { device.ledger.close() }
        _ = try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        _ = try device.identity.rotate(ledger: device.ledger, at: device.clock.now(), oldKeyLost: false)
        let new = try #require(try DeviceKeyFile.load(device.directory, device: device.device))
        // As if killed between the event and the move: the old file back in
        // place, the new key still pending.
        rename(device.directory.deviceKeyPath, device.identity.pendingKeyPath)
        let stale = try NoteKey.generate(name: DeviceKeyFile.name(device.device))
        try FileStore.writeAtomically(Data(stale.signerKey!.utf8), to: device.directory.deviceKeyPath, mode: 0o600)
        #expect(try device.identity.signingKey(ledger: device.ledger, at: device.clock.now()) == new)
        #expect(!FileManager.default.fileExists(atPath: device.identity.pendingKeyPath))
    }

    @Test func aPendingKeyTheLogDoesNotNameIsDropped() throws {
        let device = try Device()
        defer { device.ledger.close() }
        let key = try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        // As if killed before the event: the pending key never counted.
        let pending = try NoteKey.generate(name: DeviceKeyFile.name(device.device))
        try FileStore.writeAtomically(Data(pending.signerKey!.utf8), to: device.identity.pendingKeyPath, mode: 0o600)
        #expect(try device.identity.signingKey(ledger: device.ledger, at: device.clock.now()) == key)
        #expect(!FileManager.default.fileExists(atPath: device.identity.pendingKeyPath))
        #expect(try device.keyEvents() == 1)
    }
}
