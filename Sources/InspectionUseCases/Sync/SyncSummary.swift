import FoundationEssentials
import InspectionDomain
import LedgerCore
import SyncWorker

/// What `jqc sync` says of a run as text: a line of counts, then what needs
/// a word (adopted, possibly sent twice, failed, retrying, skipped, left out,
/// failed earlier, the reference data, why the run stopped), and the
/// reference data's warnings for standard error. In `--watch` a run that
/// did nothing says nothing, nor does the refreshed reference data.
public struct SyncSummary: Sendable, Equatable {
    /// The lines for standard output.
    public var lines: [String] = []
    /// The reference data's warnings, for standard error.
    public var warnings: [String] = []

    /// The summary of `report`, which took `seconds`. `now` stamps each
    /// line of a `--watch` run; `unreachable` words why the server could not
    /// be reached (briefly, or in full with `--verbose`). A stop the command
    /// throws as its error (a refused session or transport) is not worded.
    public init(
        _ report: SyncReport, seconds: Double, watching: Bool, now: Timestamp, unreachable: (String) -> String
    ) {
        let idle =
            watching && report.sent.isEmpty && report.gaveUp.isEmpty && report.retrying.isEmpty && report.stop == nil
        if idle { return }
        let prefix = watching ? "\(now.iso8601.prefix(19)) " : ""
        let kinds = SyncItemKind.allCases.compactMap { kind -> String? in
            let count = report.sentCount(kind)
            return count == 0 ? nil : "\(count) \(kind.rawValue)\(count == 1 ? "" : "s")"
        }
        lines.append(
            "\(prefix)Sent \(report.sent.count)" + (kinds.isEmpty ? "" : " (\(kinds.joined(separator: ", ")))")
                + "; failed \(report.gaveUp.count); will retry \(report.retrying.count); skipped \(report.skipped.count)"
                + " [\(FixedPoint.text(seconds, places: 2)) s]")
        lines += Self.foundLines(report)
        for item in report.possiblySentTwice {
            lines.append("  \(InspectionState.possiblySentTwiceNote(item.id))")
        }
        for failure in report.gaveUp {
            lines.append("  failed: \(failure.summary)")
        }
        for failure in report.retrying {
            let when = failure.nextAttemptAt.map { " (next try \($0.iso8601.prefix(19))Z)" } ?? ""
            let label = failure.isStalled ? "stalled after \(failure.attempts) attempts, will retry" : "will retry"
            lines.append("  \(label): \(failure.summary)\(when)")
        }
        for skipped in report.skippedItems {
            lines.append(
                "  skipped: \(skipped.item.named(inInspection: skipped.inspectionID)): \(skipped.wording)")
        }
        if !report.leftOut.isEmpty {
            lines.append(
                "  \(report.leftOut.count) photo(s) failed for good earlier and their records went to the server "
                    + "without them (see 'jqc outbox' and 'jqc show ID').")
        }
        if !report.failedEarlier.isEmpty {
            lines.append(
                "  \(report.failedEarlier.count) item(s) failed earlier and wait for 'jqc sync retry ID' "
                    + "(see 'jqc outbox').")
        }
        switch report.reference {
        case .refreshed(let facilities, let templates):
            if !watching { lines.append("Reference data refreshed: \(facilities) facilities, \(templates) templates.") }
        case .failed(let why):
            lines.append("Reference data not refreshed: \(TerminalText.singleLine(why))")
        case .notAttempted:
            break
        }
        warnings = report.referenceWarnings
        switch report.stop {
        case .serverUnreachable(let why)?: lines.append(unreachable(why))
        case .interrupted?: lines.append(SyncReport.Stop.interrupted.description)
        case .loginRequired?, .transportRefused?, nil: break  // thrown as the command's error
        }
    }

    /// The items a look-up found already on the server, by who sent them:
    /// this device, whose answer was lost, or another device (the submitter
    /// of a copy adopted here, named; a device that adopted this one's
    /// shared submission, not known here). Never "an answer was lost" for
    /// a record this device did not send.
    static func foundLines(_ report: SyncReport) -> [String] {
        func named(_ items: [SyncItem]) -> String {
            items.map { "\($0.kind.rawValue) \($0.id.lowercased.prefix(8))" }.joined(separator: ", ")
        }
        let elsewhere = Set(report.sentElsewhere.map(\.item))
        let lost = report.adopted.filter { !elsewhere.contains($0) }
        var lines: [String] = []
        if !lost.isEmpty {
            lines.append(
                "  \(lost.count) already on the server (an earlier answer was lost), not sent again: \(named(lost))")
        }
        var senders: [UUID?] = []
        for found in report.sentElsewhere where !senders.contains(found.device) { senders.append(found.device) }
        for sender in senders {
            let items = report.sentElsewhere.filter { $0.device == sender }.map(\.item)
            let by =
                sender.map { "device \($0.lowercased) (its submitter; this device had adopted the sending)" }
                ?? "another device, which adopted the sending of this device's shared submission"
            lines.append("  \(items.count) already on the server, sent by \(by), not sent again: \(named(items))")
        }
        return lines
    }

    /// `jqc sync --watch`'s offline stretches, reported once: a run that
    /// finds the server unreachable again, sending nothing and retrying
    /// nothing, says nothing.
    public struct OfflineStretch: Sendable {
        private var reported = false

        public init() {}

        /// Whether `report` only repeats the offline stretch already reported
        /// (never outside `--watch`); remembers whether this run was offline.
        public mutating func repeats(_ report: SyncReport, watching: Bool) -> Bool {
            let offline: Bool
            if case .serverUnreachable = report.stop { offline = true } else { offline = false }
            defer { reported = offline }
            return watching && offline && reported && report.sent.isEmpty && report.retrying.isEmpty
        }
    }
}
