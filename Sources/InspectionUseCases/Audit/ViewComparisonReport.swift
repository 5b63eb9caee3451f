import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerStore

/// What `jqc rebuild --dry-run` and `jqc views --check` say of the views
/// compared with a fresh fold of the log (`InspectionLedger.compareViews`):
/// per view the rows it would gain, lose or change, each named by its key,
/// as text and as JSON; and whether that is a reason for exit status 1.
public struct ViewComparisonReport: Sendable {
    public let comparisons: [ProjectionSet.ViewComparison]

    public init(_ comparisons: [ProjectionSet.ViewComparison]) { self.comparisons = comparisons }

    /// A line per view, then one per row that differs, `added`, `removed`
    /// or `changed` and its table and key (a changed row whose checksum does
    /// not match says so).
    public var lines: [String] {
        var lines: [String] = []
        for comparison in comparisons {
            let status = comparison.status
            let stored = status.storedVersion.map { "stored \($0)" } ?? "never built"
            let at = status.position.map { "at \($0) of \(status.head)" } ?? "head \(status.head)"
            let head = "\(comparison.name) (version \(status.codeVersion), \(stored), \(at))"
            if comparison.isEmpty {
                lines.append(
                    status.isStale
                        ? "\(head): no row changes; stale, so it would be written again" : "\(head): no change")
                continue
            }
            lines.append(
                "\(head): \(comparison.added) added, \(comparison.removed) removed, \(comparison.changed) changed")
            for table in comparison.tables {
                let damaged = Set(table.damaged)
                for (word, keys) in [("added", table.added), ("removed", table.removed), ("changed", table.changed)] {
                    for key in keys {
                        let note = word == "changed" && damaged.contains(key) ? " (checksum does not match)" : ""
                        lines.append(
                            "  \(word) \(table.table) \(InspectionLedger.describe(key: key, in: table.table))\(note)")
                    }
                }
            }
        }
        return lines
    }

    /// `jqc rebuild --dry-run --json`: a stale view counts as a change, as it would be written again.
    public var dryRunJSON: JSONValue {
        .object([
            "dry_run": .bool(true), "changes": .bool(comparisons.contains { !$0.isCurrent }),
            "views": .array(comparisons.map(\.jsonValue)),
        ])
    }

    /// `jqc views --check --json`: only rows that differ count.
    public var checkJSON: JSONValue {
        .object([
            "head": .integer(comparisons.first?.status.head ?? 0), "checked": .bool(true),
            "changes": .bool(comparisons.contains { !$0.isEmpty }), "views": .array(comparisons.map(\.jsonValue)),
        ])
    }

    /// Refused (exit status 1) when a row differs and, for a dry run
    /// (`countingStale`), when a stale view would be written again even with
    /// the same rows; `what` says which check found it.
    public func requireNoChange(_ what: String, countingStale: Bool = false) throws(ViewCheckError) {
        let changed = comparisons.filter { countingStale ? !$0.isCurrent : !$0.isEmpty }.map(\.name)
        if !changed.isEmpty { throw ViewCheckError.differences(what, changed) }
    }
}

/// Why `rebuild --dry-run` and `views --check` exit with status 1.
public enum ViewCheckError: Error, CustomStringConvertible {
    /// The check that found them, and the views whose rows differ.
    case differences(String, [String])
    /// The ledger at this path was never opened for recording, so it has no views to compare.
    case noViews(String)

    public var description: String {
        switch self {
        case .differences(let what, let views):
            "\(what) the \(views.joined(separator: ", ")) view\(views.count == 1 ? "" : "s") "
                + "(listed above). 'jqc rebuild VIEW' brings a view up to date with the log."
        case .noViews(let path):
            "the ledger at \(path) has no views yet (they are made by the first command that records, or by "
                + "'jqc rebuild')."
        }
    }
}

extension ProjectionSet.ViewStatus {
    /// One entry of `views` in `jqc views --json` (`Schemas/cli/views.schema.json`).
    public var jsonValue: JSONValue { .object(jsonMembers) }

    /// The members of `jsonValue`, which a comparison's entry starts with.
    public var jsonMembers: [JSONValue.Member] {
        [
            .init("name", .string(name)), .init("code_version", .integer(codeVersion)),
            .init("stored_version", storedVersion.map { .integer($0) } ?? .null),
            .init("position", position.map { .integer($0) } ?? .null), .init("head", .integer(head)),
            .init("rows", .integer(rows)),
            .init(
                "tables",
                .array(tables.map { .object(["name": .string($0.name), "rows": .integer($0.rows)]) })),
            .init("stale", .bool(isStale)),
        ]
    }
}

extension ProjectionSet.ViewComparison {
    /// One entry of `views` in `jqc views --check --json` and `jqc rebuild
    /// --dry-run --json`: the status, and the rows that differ, by key.
    public var jsonValue: JSONValue {
        let differences: [JSONValue] = tables.filter { !$0.isEmpty }.map { table in
            func keys(_ keys: [[UInt8]]) -> JSONValue {
                .array(keys.map { .string(InspectionLedger.describe(key: $0, in: table.table)) })
            }
            return .object([
                "table": .string(table.table), "added": keys(table.added), "removed": keys(table.removed),
                "changed": keys(table.changed), "damaged": keys(table.damaged),
            ])
        }
        return .object(
            status.jsonMembers + [
                .init("added", .integer(added)), .init("removed", .integer(removed)),
                .init("changed", .integer(changed)), .init("differences", .array(differences)),
            ])
    }
}
