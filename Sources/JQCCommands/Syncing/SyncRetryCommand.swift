import ArgumentParsing
import CurlTransport
import Dispatch
import Foundation
import HTTPCore
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore
import SyncWorker

/// `jqc sync retry ID`: puts failed items back in the queue.
struct SyncRetryCommand: RunnableCommand {
    static let path = ["sync", "retry"]
    static let idArgument = PositionalSpec(
        "ID", help: "An outbox item or an inspection (any unique prefix of its id).")
    static let spec = CommandSpec(
        "retry",
        abstract:
            "Queue failed, stalled or retrying items again: one outbox item, or every such item of an inspection.",
        discussion: """
            ID is a prefix of an outbox item's id (see 'jqc outbox') or of an inspection's id. The attempts \
            start again from zero and a stalled or retrying item is due at once (also one whose next try was \
            set far ahead by a wrong clock); run 'jqc sync' to send them. A photo whose \
            record already went to the server without it is not queued (it would be a dangling file).
            """,
        group: "Syncing",
        positionals: [idArgument])

    var reference: String

    init(_ parsed: ParsedCommand) throws(UsageError) { reference = try parsed.require(Self.idArgument) }

    func run(_ invocation: Invocation) throws {
        let ledger = try invocation.ledger()
        guard let prefix = IDPrefix(reference) else { throw LookupError.notAnID(reference) }
        let outbox = try ledger.outbox()
        let byItem = outbox.filter { prefix.matches($0.item.id) }
        let byInspection = outbox.filter { prefix.matches($0.inspectionID) }
        let inspections = Set(byInspection.map(\.inspectionID))
        // An inspection's own item has the inspection's id, so the two sets overlap.
        let candidates = inspections.union(byItem.map(\.item.id))
        guard let only = candidates.first else {
            throw JQCError.notFound(
                kind: "outbox item or inspection", reference: reference,
                hint: "'jqc outbox' lists what is waiting; synced items need no retry.")
        }
        guard candidates.count == 1 else {
            throw JQCError.ambiguous(
                kind: "outbox item or inspection", reference: reference,
                candidates: candidates.map(\.lowercased).sorted())
        }
        let rows = inspections.contains(only) ? byInspection : byItem
        // A photo whose record already went out without it would only be a
        // file nothing on the server points to: it is not queued again.
        var leftOut: [OutboxItem] = []
        var failed: [OutboxItem] = []
        for row in rows where [.failed, .stalled, .retrying].contains(row.state) {
            if row.item.kind == .photo, let state = try ledger.state(of: row.inspectionID),
                let photo = state.photo(id: row.item.id),
                case .synced = state.sync.status(of: state.owner(ofPhoto: photo))
            {
                leftOut.append(row)
            } else {
                failed.append(row)
            }
        }
        for row in leftOut {
            invocation.stderr.line(
                "jqc: photo \(row.item.id.lowercased.prefix(8)) of inspection \(row.inspectionID.lowercased.prefix(8)) "
                    + "is not queued again: its record already went to the server without it, so an upload now "
                    + "would be a file nothing there points to. It stays in this ledger ('jqc audit "
                    + "\(row.inspectionID.lowercased.prefix(8))' shows it); record it in a new inspection ('jqc start', "
                    + "then 'jqc photo') to put it on the server.")
        }
        guard !failed.isEmpty else {
            if !leftOut.isEmpty { throw JQCError.refused("Nothing was queued again for '\(reference)'.") }
            let states = Set(rows.map(\.state.rawValue)).sorted().joined(separator: ", ")
            throw JQCError.refused(
                "Nothing to retry for '\(reference)': its items are \(states), not failed, stalled or "
                    + "retrying. Pending items are sent by 'jqc sync' on their own.")
        }
        let actor = try invocation.actor()
        let device = try invocation.config().deviceID
        let now = invocation.clock.now()
        let events = failed.map { row in
            InspectionEvent.syncRetryRequested(SyncRetryRequested(item: row.item)).pending(
                stream: row.inspectionID, actor: actor, device: device, recordedAt: now)
        }
        try ledger.append(events)
        if invocation.json {
            invocation.stdout.line(
                JSONOutput.render(failed.map(\.item)))
            return
        }
        for row in failed {
            invocation.stdout.line(
                "Queued again: \(row.item.kind.rawValue) \(row.item.id.lowercased.prefix(8)) of inspection "
                    + "\(row.inspectionID.lowercased.prefix(8))")
        }
        invocation.stdout.line("Run 'jqc sync' to send \(failed.count == 1 ? "it" : "them").")
    }
}
