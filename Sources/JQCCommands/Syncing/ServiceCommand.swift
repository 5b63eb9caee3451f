import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc service`: the background sync as a systemd user service (`SyncServiceUnit`).
struct ServiceCommand: CommandWithoutArguments {
    static let path = ["service"]
    static let spec = CommandSpec(
        "service", abstract: "Install, show or remove the background sync (a systemd user service).",
        discussion: """
            'jqc service install' writes \(SyncServiceUnit.unitName) under $XDG_CONFIG_HOME/systemd/user (else \
            ~/.config/systemd/user), running 'jqc sync --daemon' on this ledger, and enables it through \
            'systemctl --user' when a user manager answers; without one it says what to run. The daemon sends \
            a submitted inspection within seconds, backs off while offline, waits through a refused session \
            until 'jqc login', and logs one line per outcome: 'journalctl --user -u \(SyncServiceUnit.unitName)'.
            """,
        group: "Syncing")

    func run(_ invocation: Invocation) throws { try ServiceStatusCommand.show(invocation) }
}
