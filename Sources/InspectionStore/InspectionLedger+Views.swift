import FoundationEssentials
import LMDB
import LedgerCore
import LedgerStore

/// The views as a developer or an auditor examines them: versions,
/// positions, row counts, and a comparison with a fresh fold of the log.
extension InspectionLedger {
    /// The projections of `kinds` (default: all), in the set's order.
    public func projections(_ kinds: [InspectionView.Kind]? = nil) -> [any Projection] {
        guard let kinds else { return views.projections }
        return views.projections.filter { projection in kinds.contains { $0.rawValue == projection.name } }
    }

    /// Each view's code and stored versions, position, rows and staleness.
    public func viewStatus(_ kinds: [InspectionView.Kind]? = nil) throws -> [ProjectionSet.ViewStatus] {
        try views.status(projections(kinds))
    }

    /// Every stored row of the views compared with what a rebuild with this
    /// code would write, without writing: what `jqc rebuild --dry-run`,
    /// `jqc views --check` (and an auditor's `jqc check --views`) report.
    /// It reads one snapshot, so it works on a read-only store.
    public func compareViews(_ kinds: [InspectionView.Kind]? = nil) throws -> [ProjectionSet.ViewComparison] {
        try views.compare(projections(kinds))
    }

    /// A row's key in words: the inspection, issue, template or outbox item
    /// it stands for.
    public static func describe(key: [UInt8], in table: String) -> String {
        let names = InspectionTables.names
        switch table {
        case names.inspections.name, names.drafts.name, names.followUps.name, names.issues.name:
            if let id = UUID(bytes: key) { return id.lowercased }
        case names.reinspections.name:
            if key.count == 32, let parent = UUID(bytes: Array(key[..<16])), let child = UUID(bytes: Array(key[16...]))
            {
                return "\(parent.lowercased)→\(child.lowercased)"
            }
        case names.templates.name:
            if let text = String(bytes: key, encoding: .utf8) { return text }
        case names.unreported.name:
            if key.count == 24, let id = UUID(bytes: Array(key[8...])) { return "submission of " + id.lowercased }
        case names.outbox.name:
            if key.count == 25, let id = UUID(bytes: Array(key[9...])) {
                let kind = ["photo", "inspection", "issue"]
                return (key[0] < 3 ? kind[Int(key[0])] : "item") + " " + id.lowercased
            }
        default:
            break
        }
        return Hex.encode(key)
    }
}
