import ArgumentParsing
import FoundationEssentials
import InspectionStore
import InspectionUseCases
import LedgerStore

/// `jqc views [--check]`: the views' versions, positions and sizes.
struct ViewsCommand: RunnableCommand {
    static let path = ["views"]
    static let check = FlagSpec("check", help: "Compare every stored row with a fresh fold of the log.")
    static let spec = CommandSpec(
        "views", abstract: "Show each view: this jqc's version of it, the stored one, its position, its rows.",
        discussion: """
            A view is stale when it was written by another version of the code or has not seen the whole \
            log; the next command that records rebuilds it (and says so). With --check, every stored row is \
            also compared with a fresh fold of the log, as 'jqc rebuild --dry-run' does, and the rows that \
            differ are named; exit status 1 when any does. Opens the ledger read-only. --json output: \
            Schemas/cli/views.schema.json.
            """,
        group: "Ledger",
        flags: [check])

    var check: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        check = try parsed.isSet(Self.check)
    }

    func run(_ invocation: Invocation) throws {
        if check {
            let report = ViewComparisonReport(try invocation.withReadOnlyViews { ledger in try ledger.compareViews() })
            if invocation.json {
                invocation.printJSON(report.checkJSON)
            } else {
                printTable(report.comparisons.map(\.status), invocation)
                invocation.stdout.line()
                for line in report.lines { invocation.stdout.line(line) }
            }
            try report.requireNoChange("rows stored differ from a fold of the log in")
            return
        }
        let statuses = try invocation.withReadOnlyViews { ledger in try ledger.viewStatus() }
        if invocation.json {
            invocation.printJSON(
                .object([
                    "head": .integer(statuses.first?.head ?? 0), "checked": .bool(false),
                    "views": .array(statuses.map(\.jsonValue)),
                ]))
        } else {
            printTable(statuses, invocation)
        }
    }

    private func printTable(_ statuses: [ProjectionSet.ViewStatus], _ invocation: Invocation) {
        let rows = statuses.map { status -> [String] in
            let stored: String = status.storedVersion.map { "\($0)" } ?? "-"
            let position: String = status.position.map { "\($0) of \(status.head)" } ?? "-"
            let state = status.storedVersion == nil ? "never built" : status.isStale ? "stale" : "up to date"
            return [status.name, "\(status.codeVersion)", stored, position, "\(status.rows)", state]
        }
        invocation.printTable(header: ["VIEW", "VERSION", "STORED", "POSITION", "ROWS", "STATE"], rows: rows)
    }
}
