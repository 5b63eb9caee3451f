import FoundationEssentials
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

extension DeviceKeyFile {
    /// The device's signing key as `DeviceIdentity.signingKey` decides it,
    /// through the ledger opened for recording (publishing is an event).
    static func ensure(_ invocation: Invocation) throws -> NoteKey {
        let config = try invocation.config()
        return try DeviceIdentity(directory: invocation.home, device: config.deviceID).signingKey(
            ledger: invocation.ledger(), at: invocation.clock.now())
    }

    /// `ensure`, without opening the store for writing when the key file is
    /// the key the log already published (so a read-only copy can still sign
    /// and prove). Leaves no log open.
    static func ensureReadOnly(_ invocation: Invocation) throws -> NoteKey {
        let config = try invocation.config()
        let identity = DeviceIdentity(directory: invocation.home, device: config.deviceID)
        let auditor = try invocation.auditorLedger(views: false)
        let decided: DeviceSigning
        do {
            defer { auditor.close() }
            decided = try identity.decide(log: auditor.log)
        }
        if case .use(let key) = decided { return key }
        let key = try identity.signingKey(ledger: invocation.ledger(), at: invocation.clock.now())
        invocation.closeLog()
        return key
    }
}
