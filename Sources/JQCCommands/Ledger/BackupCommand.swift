import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc backup DEST`: a consistent hot copy of the ledger, verified.
///
/// The copy is made and checked by `LedgerBackup.make`; the copy is a
/// complete ledger directory: restoring is copying it back (see
/// docs/architecture/decisions.md).
struct BackupCommand: CommandWithOneArgument {
    static let path = ["backup"]
    static let argument = PositionalSpec("DEST", help: "A directory that does not exist yet, or is empty.")
    static let spec = CommandSpec(
        "backup",
        abstract: "Copy the ledger (store, photos, configuration) to a new directory, and verify the copy.",
        discussion: """
            The copy is consistent even while other commands record, compacted, and checked after it is \
            written: its chain must verify and end on the ledger's own hash at the same position. The device's \
            signing key (device.key, mode 0600) is copied with it, so the restored ledger signs as before; the \
            login (credentials.json) is not copied: log in again after a restore. A backup is a restore point for \
            this device, never a second device: another device starts with its own 'jqc init' (or receives a \
            handover). The copy is marked as a restore point (restore-point.json): restored, it warns on every \
            recording command until 'jqc sync' has asked the witness whether another copy of this device recorded \
            after the backup, and that sync is refused, saying so, when one did.

            To restore, put the copy where the ledger was (or point --ledger or JQC_HOME at it) and run \
            'jqc verify':
              rm -rf ~/.local/share/jqc && cp -a DEST ~/.local/share/jqc && jqc verify
            """,
        group: "Ledger",
        positionals: [argument])

    var destination: String

    init(argument: String) { destination = argument }

    func run(_ invocation: Invocation) throws {
        let home = invocation.home
        let target = LedgerDirectory.resolve(option: destination, environment: invocation.environment)
        let backup = try LedgerBackup.make(from: home, to: target, at: invocation.clock.now()) {
            try invocation.openingStore($0)
        }
        let summary = backup.summary
        if invocation.json {
            invocation.printJSON(
                .object([
                    "backup": .string(target.path), "events": .integer(summary.events),
                    "head": .string(summary.head.description), "photos": .integer(summary.photos.copied),
                    "photos_not_matching": .strings(summary.photos.mismatched), "verified": .bool(true),
                ]))
        } else {
            invocation.stdout.line(
                "Backed up \(home.path) to \(target.path): \(Plural.of(Int(summary.events), "event")), "
                    + "\(Plural.of(summary.photos.copied, "photo")), "
                    + "config.json\(backup.keyCopied ? ", device.key" : "")."
            )
            invocation.stdout.line("Verified: the copy's chain is intact and ends on the ledger's \(summary.head).")
            invocation.stdout.line("Not copied: credentials.json (log in again after a restore).")
            invocation.stdout.line(
                "The copy is a restore point for this device, not a second device: it carries this device's id and "
                    + "key. Restore it in place of the ledger; another device starts with its own 'jqc init' (or "
                    + "receives a handover). Restored, it warns before recording until 'jqc sync' has checked with "
                    + "the witness that no other copy of this device recorded after the backup.")
        }
        if let keyNotCopied = backup.keyNotCopied {
            invocation.stderr.line("jqc: warning: device.key was not copied: \(keyNotCopied)")
        }
        if !summary.photos.mismatched.isEmpty {
            invocation.stderr.line(
                "jqc: warning: \(summary.photos.mismatched.count) photo files in the ledger no longer match their "
                    + "names and were copied as they are: "
                    + summary.photos.mismatched.prefix(5).joined(separator: ", ")
                    + ". Run 'jqc check --photos' and 'jqc audit' on the inspections that name them.")
        }
    }
}
