import ArgumentParsing
import FoundationEssentials
import Glibc
import InspectionStore
import InspectionUseCases
import LedgerCore
import LedgerStore

/// `jqc rebuild [VIEW] [--dry-run]`.
struct RebuildCommand: RunnableCommand {
    static let path = ["rebuild"]
    static let viewArgument = PositionalSpec("VIEW", help: "The view to rebuild (default: all).", optional: true)
    static let dryRun = FlagSpec("dry-run", short: "n", help: "Compare with a fresh fold of the log; write nothing.")
    static let spec = CommandSpec(
        "rebuild", abstract: "Rebuild one view or all of them from the log, atomically.",
        discussion: """
            Views: \(ViewSelection.list). Readers see the old views until the rebuild commits; an \
            interrupted rebuild leaves them as they were.

            With --dry-run, nothing is written: the log is folded with this jqc's code and every row it would \
            write is compared with the stored one, and the rows each view would gain, lose or change are \
            listed (a developer sees what a model change does to a real ledger before shipping it). Rows are \
            compared by content, so a view of an older version whose rows stay the same shows no row \
            changes. Exit status 0 when a rebuild would change nothing, 1 when it would change a row or \
            write a stale view again.
            """,
        group: "Ledger",
        positionals: [viewArgument], flags: [dryRun])

    var view: InspectionView.Kind?
    var dryRun: Bool

    init(_ parsed: ParsedCommand) throws(UsageError) {
        view = try ViewSelection.parse(Self.viewArgument, parsed)
        dryRun = try parsed.isSet(Self.dryRun)
    }

    func run(_ invocation: Invocation) throws {
        if dryRun {
            // Read-only: opening for writing would rebuild stale views first.
            let comparisons = try invocation.withReadOnlyViews { ledger in try ledger.compareViews(view.map { [$0] }) }
            let report = ViewComparisonReport(comparisons)
            if invocation.json {
                invocation.printJSON(report.dryRunJSON)
            } else {
                for line in report.lines { invocation.stdout.line(line) }
            }
            try report.requireNoChange("a rebuild would change", countingStale: true)
            return
        }
        let ledger = try invocation.ledger()
        let chosen = ledger.projections(view.map { [$0] })
        // A test hook: die by SIGKILL part way, to prove the old views survive.
        let crashAfter = invocation.environment["JQC_TEST_KILL_REBUILD_AFTER"].flatMap(UInt64.init)
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        let count = try ledger.views.rebuild(
            chosen,
            progress: { done, total in invocation.progress("rebuilding: \(done)/\(total) events") },
            afterEachRecord: crashAfter.map { limit in { done in if done == limit { kill(getpid(), SIGKILL) } } },
            // The command ends once the rebuild commits: the exit gives the
            // folds' memory back at once.
            foldMemory: .leftToExit)
        invocation.endProgress()
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        let seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
        let names = chosen.map(\.name)
        if invocation.json {
            invocation.printJSON(
                .object(["views": .strings(names), "events": .integer(count), "seconds": .double(seconds)]))
        } else {
            invocation.stdout.line(
                "Rebuilt \(names.joined(separator: ", ")) from \(count) events in \(FixedPoint.text(seconds, places: 3)) s."
            )
        }
    }
}

extension Invocation {
    /// The ledger opened read-only with its views as stored (stale ones are
    /// not rebuilt), for commands that examine the views without changing them.
    func withReadOnlyViews<T>(_ body: (InspectionLedger) throws -> T) throws -> T {
        let opened = try auditorLedger(views: true)
        defer { opened.close() }
        guard let ledger = opened.ledger else { throw ViewCheckError.noViews(home.path) }
        return try body(ledger)
    }
}

/// A VIEW argument: one of the inspection views by name.
enum ViewSelection {
    /// Joined by hand: the generic `joined(separator:)` was not specialised
    /// here, and its first call made the Swift runtime scan every protocol
    /// conformance of the binary at each start (the help is built to parse).
    static let list: String = {
        var text = ""
        for kind in InspectionView.Kind.allCases {
            if !text.isEmpty { text += ", " }
            text += kind.rawValue
        }
        return text
    }()

    /// The view `argument` names, or nil when it was left off.
    static func parse(_ argument: PositionalSpec, _ parsed: ParsedCommand) throws(UsageError) -> InspectionView.Kind? {
        guard let name = try parsed.value(of: argument) else { return nil }
        guard let kind = InspectionView.Kind(rawValue: name) else {
            throw parsed.invalid(argument, value: name, reason: "the views are \(list)")
        }
        return kind
    }
}
