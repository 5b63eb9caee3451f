import FoundationEssentials
import InspectionAudit
import LedgerCore
import LedgerStore

/// `jqc log --actors`: who recorded the events a `LogFilter` selects, each
/// once, with how many events and the positions of the first and last.
public enum LogActors {
    public struct Row: Equatable, Sendable {
        public var actor: Actor
        public var events = 0
        public var first: UInt64 = 0
        public var last: UInt64 = 0
    }

    /// The actors of the events `filter` admits (of one inspection, any
    /// unique prefix, or of the whole log), in the order each first acted.
    /// `--limit` does not apply: every selected event counts.
    public static func count(filter: LogFilter, inspection: String?, in auditor: AuditorLedger) throws -> [Row] {
        var rows: [Actor: Row] = [:]
        var order: [Actor] = []
        func add(_ record: EventRecord) {
            guard filter.admits(record) else { return }
            if rows[record.actor] == nil {
                rows[record.actor] = Row(actor: record.actor, first: record.position)
                order.append(record.actor)
            }
            rows[record.actor]?.events += 1
            rows[record.actor]?.last = record.position
        }
        if let inspection {
            for case .record(let record) in try auditor.history(of: try auditor.resolveInspection(inspection)) {
                add(record)
            }
        } else {
            try auditor.log.read { reader in
                try reader.scan(from: filter.firstPosition) { entry in
                    // Holes have no actor: 'jqc log' and 'jqc verify' show them.
                    guard case .record(let record) = entry else { return true }
                    guard !filter.isPast(position: record.position) else { return false }
                    add(record)
                    return true
                }
            }
        }
        return order.compactMap { rows[$0] }
    }
}
