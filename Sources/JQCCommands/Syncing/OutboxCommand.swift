import ArgumentParsing
import Foundation
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc outbox`.
struct OutboxCommand: RunnableCommand {
    static let path = ["outbox"]
    static let spec = CommandSpec(
        "outbox", abstract: "List what the server has not acknowledged, in the order sync sends it.",
        group: "Syncing")

    init(_ parsed: ParsedCommand) throws(UsageError) {}

    func run(_ invocation: Invocation) throws {
        let items = try invocation.reading { try $0.outbox() }
        if invocation.json {
            invocation.stdout.line(JSONOutput.render(items))
            return
        }
        guard !items.isEmpty else {
            // Drafts send nothing until submitted: never say "everything" while one exists.
            let drafts = try invocation.reading { try $0.summaries(.drafts) }.count
            // Nor with no server to have it.
            let everything =
                try invocation.config().serverURL == nil
                ? "The outbox is empty; no server is configured, so nothing has reached one ('jqc config set server "
                    + "URL'). 'jqc status' lists copies another device is expected to send."
                : "The outbox is empty: the server has everything this device is to send."
            invocation.stdout.line(
                drafts == 0
                    ? everything
                    : "The outbox is empty, but \(drafts) draft\(drafts == 1 ? " is" : "s are") only on this "
                        + "device: nothing of an inspection is sent before 'jqc submit ID' ('jqc status' counts "
                        + "what is not on the server).")
            return
        }
        invocation.stdout.line(
            TextTable.render(
                header: ["KIND", "ID", "INSPECTION", "STATE", "ATTEMPTS", "NEXT TRY", "LAST ERROR / WAITING FOR"],
                rows: items.map { i in
                    [
                        i.item.kind.rawValue, String(i.item.id.lowercased.prefix(8)),
                        String(i.inspectionID.lowercased.prefix(8)), i.state.rawValue, "\(i.attempts)",
                        i.nextAttemptAt.map { String($0.iso8601.prefix(19)) } ?? "-",
                        [i.lastError, i.detail].compactMap { $0 }.map(TerminalText.singleLine).joined(separator: "; "),
                    ]
                }))
    }
}
