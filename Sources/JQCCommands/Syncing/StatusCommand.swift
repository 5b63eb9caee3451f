import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc status`: who records, whether the server still takes the session,
/// the server and the witness, when the device last synced, what is not on
/// the server yet (counted by kind, `SyncStanding`), and the background
/// service and the background sync running now (`SyncDaemonStatus`),
/// worded by `DeviceStatus`.
struct StatusCommand: CommandWithoutArguments {
    static let path = ["status"]
    static let spec = CommandSpec(
        "status", abstract: "Show what is not on the server yet, the last sync, the session and the service.",
        discussion: """
            Drafts are counted as not on the server: nothing of an inspection is sent before it is submitted. \
            Stalled items are still retried (their next try is shown); items failed for good wait for \
            'jqc sync retry ID' once the cause is fixed. Nothing here uses the network: whether the server \
            refused the session is what the last sync or 'whoami --check' learned.
            """,
        group: "Syncing")

    func run(_ invocation: Invocation) throws {
        let config = try invocation.config()
        let standing = try invocation.reading { try SyncStanding.read($0) }
        // The witnesses, and a fork of this device one of them reported (WitnessCosigning+Fork).
        let witness = try invocation.reading {
            try WitnessSetting.described(config, directory: invocation.home, log: $0.log)
        }
        let saved = try invocation.session()
        var status = DeviceStatus(
            standing: standing, saved: saved, refusal: SessionRefusal.of(saved, in: invocation.home),
            offline: saved == nil ? try invocation.settings.inForce(.actor) : (nil, .none),
            server: config.serverURL, witness: witness,
            service: SyncServiceUnit(environment: invocation.environment).state())
        status.device = config.deviceID
        status.backgroundSync = SyncDaemonStatus.read(invocation.home)
        if invocation.json {
            invocation.printJSON(status.jsonValue)
            return
        }
        for line in status.lines { invocation.stdout.line(line) }
    }
}
