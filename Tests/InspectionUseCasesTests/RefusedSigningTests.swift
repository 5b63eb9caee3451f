import Foundation
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// A signing whose key event is refused (a full disk, a store that cannot
/// be written) leaves no new key file behind: a key is kept only once the
/// log published it.
@Suite struct RefusedSigningTests {
    /// The device's ledger reopened read-only, so every append is refused.
    /// The refusal a read-only store gives a recording: it cannot be written.
    static func isUnwritable(_ error: LedgerError?) -> Bool {
        if case .unwritable(_, permissionDenied: true)? = error { true } else { false }
    }

    func refusingLedger(_ device: DeviceIdentityTests.Device) throws -> InspectionLedger {
        device.ledger.close()
        return try InspectionLedger.openForReading(
            storePath: device.directory.storePath, photosPath: device.directory.photosPath
        ).ledger
    }

    @Test func aFirstKeyWhoseEventIsRefusedIsNotKept() throws {
        let device = try DeviceIdentityTests.Device()
        let ledger = try refusingLedger(device)
        defer { ledger.close() }
        let error = #expect(throws: LedgerError.self) {
            try device.identity.signingKey(ledger: ledger, at: device.clock.now())
        }
        #expect(Self.isUnwritable(error), "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: device.directory.deviceKeyPath), "a new device.key was left")
        #expect(try device.identity.publishedKeys(ledger.log).isEmpty)
    }

    @Test func aKeyFileTheLogAlreadyNamesIsKeptWhenAnotherEventFails() throws {
        let device = try DeviceIdentityTests.Device()
        let key = try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        let ledger = try refusingLedger(device)
        defer { ledger.close() }
        // Published: used as it is, nothing to record, nothing removed.
        #expect(try device.identity.signingKey(ledger: ledger, at: device.clock.now()) == key)
        #expect(FileManager.default.fileExists(atPath: device.directory.deviceKeyPath))
    }

    @Test func aRotationWhoseEventIsRefusedKeepsTheOldKeyAndNoPendingOne() throws {
        let device = try DeviceIdentityTests.Device()
        _ = try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        let before = FileManager.default.contents(atPath: device.directory.deviceKeyPath)
        let ledger = try refusingLedger(device)
        defer { ledger.close() }
        let error = #expect(throws: LedgerError.self) {
            try device.identity.rotate(ledger: ledger, at: device.clock.now(), oldKeyLost: false)
        }
        #expect(Self.isUnwritable(error), "\(String(describing: error))")
        #expect(FileManager.default.contents(atPath: device.directory.deviceKeyPath) == before)
        #expect(!FileManager.default.fileExists(atPath: device.directory.deviceKeyPath + ".next"))
    }
}
