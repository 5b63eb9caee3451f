import ArgumentParsing
import FoundationEssentials
import InspectionDomain
import InspectionUseCases
import LedgerCore
import SyncWorker

/// `jqc history show SERVER_ID`: one record of the server's history in
/// detail (the reference app's history detail), online.
struct HistoryShowCommand: RunnableCommand {
    static let path = ["history", "show"]
    static let idArgument = PositionalSpec("SERVER_ID", help: "The record's id on the server (see 'jqc history').")
    static let spec = CommandSpec(
        "show", abstract: "Show one of the server's completed inspections: follow-up, parent link, score, form.",
        discussion: """
            Online only. 'jqc start --reinspect SERVER_ID' starts a re-inspection of it on this device.
            """,
        group: "Syncing",
        positionals: [idArgument])

    var id: String

    init(_ parsed: ParsedCommand) throws(UsageError) {
        id = try parsed.require(Self.idArgument)
        guard APIClient.isServerID(id) else {
            throw parsed.invalid(Self.idArgument, value: id, reason: "expected a server id: a whole number ≥ 1")
        }
    }

    /// The record with server id `id`, fetched online; refused when the server has none.
    static func record(_ id: String, _ invocation: Invocation) throws -> ServerInspectionRecord {
        let session = try invocation.serverSession()
        let record = try invocation.online(
            "read the server's history",
            offlineHint: "The server's records are online only; 'jqc inspections' lists what this device recorded."
        ) { () throws(APIError) in
            try session.authorized { token throws(APIError) in
                try session.api.historyRecord(id: id, accessToken: token)
            }
        }
        guard let record else {
            throw JQCError.notFound(
                kind: "inspection", reference: id,
                hint: "Neither this device nor the server's history has it; 'jqc history' lists the server's records.")
        }
        return record
    }

    func run(_ invocation: Invocation) throws {
        let record = try Self.record(id, invocation)
        if invocation.json {
            invocation.printJSON(record.detailJSON)
            return
        }
        let names = try ServerRecordNaming.names(for: record, in: invocation.ledger())
        for line in record.detailLines(names: names) { invocation.stdout.line(line) }
    }
}
