import Foundation
import InspectionStore
import LedgerCore
import LedgerStore
import LedgerTestSupport
import Testing

@testable import InspectionUseCases

/// A ledger that signed before (its `last-checkpoint` is there) whose log
/// no longer records a key: the key record was lost, and no key is
/// published again, with or without the key file.
@Suite struct KeyRecordLossTests {
    @Test(arguments: [true, false])
    func aLostKeyRecordIsNamedAndNothingIsPublished(keyFile: Bool) throws {
        let device = try DeviceIdentityTests.Device()
        defer { device.ledger.close() }
        if keyFile { _ = try DeviceKeyFile.create(device.directory, device: device.device) }
        #expect(
            try device.identity.decide(log: device.ledger.log)
                == (keyFile
                    ? .publish(
                        try #require(
                            try DeviceKeyFile.load(device.directory, device: device.device))) : .create))
        let evidence = device.directory.path + "/last-checkpoint"
        try Data("jqc/x\n3\nAAAA\n\n— jqc/x AAAA\n".utf8).write(to: URL(fileURLWithPath: evidence))
        #expect(throws: DeviceKeyError.keyRecordLost(evidence: evidence)) {
            try device.identity.decide(log: device.ledger.log)
        }
        #expect(throws: DeviceKeyError.keyRecordLost(evidence: evidence)) {
            try device.identity.signingKey(ledger: device.ledger, at: device.clock.now())
        }
        #expect(try device.keyEvents() == 0)
        #expect(
            DeviceKeyError.keyRecordLost(evidence: evidence).description.contains(
                "the log lost its key record"))
    }
}
