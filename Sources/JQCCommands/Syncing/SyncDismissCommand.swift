import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore

/// `jqc sync dismiss ITEM --reason TEXT`: acknowledges an item failed for good.
struct SyncDismissCommand: RunnableCommand {
    static let path = ["sync", "dismiss"]
    static let itemArgument = PositionalSpec(
        "ITEM", help: "An outbox item failed for good (any unique prefix of its id).")
    static let reason = OptionSpec("reason", valueName: "TEXT", help: "Why it will not reach the server (recorded).")
    static let spec = CommandSpec(
        "dismiss",
        abstract: "Acknowledge that an outbox item failed for good, so it leaves the outbox.",
        discussion: """
            Only an item that failed for good (the server refused it, or its photo's file is gone) can be \
            dismissed. The dismissal is recorded as an event with its reason, shown in 'jqc log' and 'jqc audit'; \
            nothing else changes. 'jqc sync retry ITEM' queues it again.
            """,
        group: "Syncing",
        positionals: [itemArgument], options: [reason])

    var item: String
    var why: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        item = try parsed.require(Self.itemArgument)
        why = try parsed.require(Self.reason)
    }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let row = try SyncDismissal.dismiss(
            item, reason: why, in: ledger, actor: { try invocation.actor() }, device: try invocation.config().deviceID,
            at: invocation.clock.now())
        if invocation.json {
            invocation.printJSON(
                .object([
                    "kind": .string(row.item.kind.rawValue), "id": .string(row.item.id.lowercased),
                    "inspection_id": .string(row.inspectionID.lowercased), "dismissed": .bool(true),
                ]))
            return
        }
        invocation.stdout.line(
            "Dismissed \(row.item.kind.rawValue) \(row.item.id.lowercased.prefix(8)) of inspection "
                + "\(row.inspectionID.lowercased.prefix(8)) from the outbox: it will not be sent. The reason is "
                + "recorded ('jqc log --inspection \(row.inspectionID.lowercased.prefix(8))'); 'jqc sync retry "
                + "\(row.item.id.lowercased.prefix(8))' queues it again.")
    }
}
