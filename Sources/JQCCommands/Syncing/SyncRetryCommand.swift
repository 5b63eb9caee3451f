import ArgumentParsing
import CurlTransport
import Dispatch
import FoundationEssentials
import HTTPCore
import InspectionDomain
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore
import SyncWorker

/// `jqc sync retry ID`: puts failed items back in the queue.
struct SyncRetryCommand: CommandWithOneArgument {
    static let path = ["sync", "retry"]
    static let argument = PositionalSpec(
        "ID", help: "An outbox item or an inspection (any unique prefix of its id).")
    static let spec = CommandSpec(
        "retry",
        abstract:
            "Queue failed, stalled or retrying items again: one outbox item, or every such item of an inspection.",
        discussion: """
            ID is a prefix of an outbox item's id (see 'jqc outbox') or of an inspection's id. The attempts \
            start again from zero and a stalled or retrying item is due at once (also one whose next try was \
            set far ahead by a wrong clock); run 'jqc sync' to send them. With a background sync running \
            ('jqc sync --daemon') it is asked to send them now, and its pass's outcome is printed. A photo whose \
            record already went to the server without it is not queued (it would be a dangling file).
            """,
        group: "Syncing",
        positionals: [argument])

    var reference: String

    init(argument: String) { reference = argument }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        let selection = try SyncRetry.select(reference, in: ledger)
        for row in selection.leftOut {
            invocation.stderr.line(
                "jqc: photo \(row.item.id.lowercased.prefix(8)) of inspection \(row.inspectionID.lowercased.prefix(8)) "
                    + "is not queued again: its record already went to the server without it, so an upload now "
                    + "would be a file nothing there points to. It stays in this ledger ('jqc audit "
                    + "\(row.inspectionID.lowercased.prefix(8))' shows it); record it in a new inspection ('jqc start', "
                    + "then 'jqc photo') to put it on the server.")
        }
        guard !selection.queued.isEmpty else { throw SyncRetry.Refusal.onlyLeftOut(reference) }
        try SyncRetry.queue(
            selection, in: ledger, actor: try invocation.actor(), device: try invocation.config().deviceID,
            at: invocation.clock.now())
        let failed = selection.queued
        if invocation.json {
            invocation.printJSON(failed.map(\.item))
        } else {
            for row in failed {
                invocation.stdout.line(
                    "Queued again: \(row.item.kind.rawValue) \(row.item.id.lowercased.prefix(8)) of inspection "
                        + "\(row.inspectionID.lowercased.prefix(8))")
            }
        }
        try sendNow(count: failed.count, invocation)
    }

    /// With a background sync running, it is asked for a pass now and its
    /// outcome printed (`--json`: the queued items only, the exit status the
    /// pass's); else the advice to run `jqc sync`.
    func sendNow(count: Int, _ invocation: Invocation) throws {
        guard case .running(let daemon)? = SyncDaemonStatus.read(invocation.home) else {
            if !invocation.json { invocation.stdout.line("Run 'jqc sync' to send \(count == 1 ? "it" : "them").") }
            return
        }
        invocation.stderr.line("jqc: asking the background sync (pid \(daemon.pid)) to send it now")
        guard let pass = try SyncNowRequest.ask(invocation.home) else { return }
        if !invocation.json { for line in pass.lines { invocation.stdout.line(line) } }
        for warning in pass.warnings { invocation.stderr.line("jqc: \(warning)") }
        if let failure = pass.failure { throw JQCError.backgroundPass(failed: failure) }
    }
}
