import ArgumentParsing
import Foundation
import InspectionUseCases

/// `jqc restore-point`: what the mark of a restored backup says
/// (`RestorePoint`, `restore-point.json`); `clear` confirms that this copy is
/// the only one recording when no witness could check it.
struct RestorePointCommand: RunnableCommand {
    static let path = ["restore-point"]
    static let spec = CommandSpec(
        "restore-point", abstract: "Say whether this ledger is a restored backup not yet checked (restore-point.json).",
        discussion: """
            A backup made by 'jqc backup' is a restore point for this device, never a second device. Restored, \
            'jqc sync' first asks the configured witnesses what they cosigned of this device: more records than \
            this copy holds, or another root at a size it holds, means another copy recorded after the backup, \
            and the sync is refused. When no witness can be asked, that is said once; 'jqc restore-point clear' \
            then confirms that the ledger the backup was taken from no longer records.
            """,
        group: "Ledger")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        _ = try invocation.config()
        guard let point = RestorePoint.load(invocation.home) else {
            invocation.stdout.line("This ledger is not a restored backup waiting for a check.")
            return
        }
        invocation.stdout.line(point.warning.replacingOccurrences(of: "warning: ", with: "", options: .anchored))
    }
}

/// `jqc restore-point clear`.
struct RestorePointClearCommand: RunnableCommand {
    static let path = ["restore-point", "clear"]
    static let spec = CommandSpec(
        "clear",
        abstract: "Confirm that the ledger this backup was restored from no longer records (removes the mark).",
        discussion: """
            Refused when a witness showed that another copy of this device recorded after the backup: clearing \
            the mark would not make this copy's history the device's (the witnesses would refuse it).
            """)

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        _ = try invocation.config()
        guard let point = RestorePoint.load(invocation.home) else {
            invocation.stdout.line("This ledger is not a restored backup waiting for a check: nothing to clear.")
            return
        }
        if let found = point.found {
            throw JQCError.refused(
                "the mark stays: a witness showed another copy of this device recording after the backup (\(found))")
        }
        try RestorePoint.clear(invocation.home)
        invocation.stdout.line(
            "Confirmed: this ledger is the only copy of its device that records; it no longer warns before "
                + "recording.")
    }
}
