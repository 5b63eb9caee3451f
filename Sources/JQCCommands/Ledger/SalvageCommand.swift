import ArgumentParsing
import FoundationEssentials
import InspectionAudit
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import Synchronization

/// `jqc salvage DEST`: from a damaged store, every record whose chain still
/// verifies, up to the first break, copied into a new ledger.
///
/// The damaged store is read only, and only in a child process
/// (`jqc salvage-read`): LMDB can meet a page it can only assert on, which
/// ends that process, and the records it printed before are kept. When the
/// pre-flight check refuses the file, the child reads repaired scratch copies
/// instead (one per sane meta page, padded if truncated) and the longest
/// verified prefix wins. The records are appended to the new ledger through
/// the normal `EventLog`, so the chain (the same hashes), the indexes and the
/// views are built as for any append.
struct SalvageCommand: CommandWithOneArgument {
    static let path = ["salvage"]
    /// The same argument as `backup`'s: a new ledger directory.
    static let argument = BackupCommand.argument
    static let spec = CommandSpec(
        "salvage",
        abstract:
            "Copy every record that still verifies out of a damaged ledger into a new one, and say what was lost.",
        discussion: """
            The damaged ledger is only read. Records are copied in order up to the first one whose chain link \
            fails or that cannot be read; the new ledger's digest at that position equals the old one's. The \
            photos that match their names and config.json are copied; reference data is not (run 'jqc pull' \
            in the new ledger). Use the new ledger with --ledger DEST, or put it in place of the old one.
            """,
        group: "Ledger",
        positionals: [argument])

    var destination: String

    init(argument: String) { destination = argument }

    func run(_ invocation: Invocation) throws {
        let target = LedgerDirectory.resolve(option: destination, environment: invocation.environment)
        let outcome = try LedgerSalvage(from: invocation.home, into: target).run(read: SalvageChild.read)
        let salvaged = outcome.reading
        let summary = outcome.summary
        let repaired = outcome.metaPagesRepaired
        let kept = UInt64(salvaged.events.count)
        if invocation.json {
            invocation.printJSON(
                .object([
                    "salvage": .string(target.path), "records": .integer(kept),
                    "head": .string(summary.head.description), "first_break": .optional(salvaged.firstBreak),
                    "records_after_break": .integer(salvaged.seenAfterBreak),
                    "photos": .integer(summary.photos.copied), "meta_pages_repaired": .bool(repaired),
                ]))
            return
        }
        invocation.stdout.line(
            "Salvaged \(kept) records (positions 1–\(kept)) into \(target.path), chain head \(summary.head).")
        if let firstBreak = salvaged.firstBreak {
            let after =
                salvaged.seenAfterBreak > 0
                ? " \(salvaged.seenAfterBreak) more records were found after it and are not trusted." : ""
            invocation.stdout.line("Lost: everything from position \(kept + 1) on (\(firstBreak)).\(after)")
            if let stored = salvaged.storedCount, stored > kept {
                invocation.stdout.line(
                    "The store's events table counts \(stored) records: \(stored - kept) were not salvaged.")
            }
        } else {
            invocation.stdout.line("Every record found in the store verified and was copied.")
        }
        if repaired {
            invocation.stdout.line(
                "The store's meta pages were damaged, so it was read through a repaired copy of them: a commit "
                    + "that only the damaged meta page recorded cannot be recovered.")
        }
        invocation.stdout.line(
            "Copied \(Plural.of(summary.photos.copied, "photo")) and config.json; reference data was not copied: run "
                + "'jqc --ledger \(target.path) pull'.")
    }
}
