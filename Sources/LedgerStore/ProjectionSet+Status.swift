import FoundationEssentials
import LMDB
import LedgerCore

/// What a developer (and an auditor) can ask of the views without changing
/// them: each one's versions and position, and how it differs from a fold of
/// the log with the current code.
extension ProjectionSet {
    /// One view's stored state beside the code's.
    public struct ViewStatus: Sendable, Equatable {
        public var name: String
        /// The version this build of the code writes.
        public var codeVersion: Int
        /// The version the stored view was written by; nil if never built.
        public var storedVersion: Int?
        /// The last log position the stored view reflects; nil if never built.
        public var position: UInt64?
        /// The log's head position.
        public var head: UInt64
        /// Rows of each of the view's tables.
        public var tables: [(name: String, rows: Int)]
        public var rows: Int { tables.reduce(0) { $0 + $1.rows } }
        /// Of another version than the code's, or behind the log: the next
        /// command that opens the ledger for writing rebuilds it.
        public var isStale: Bool { storedVersion != codeVersion || position != head }

        public static func == (a: ViewStatus, b: ViewStatus) -> Bool {
            a.name == b.name && a.codeVersion == b.codeVersion && a.storedVersion == b.storedVersion
                && a.position == b.position && a.head == b.head && a.tables.map(\.name) == b.tables.map(\.name)
                && a.tables.map(\.rows) == b.tables.map(\.rows)
        }
    }

    /// A view's stored version and position, read in a snapshot of its own.
    public func storedState(of projection: any Projection) throws -> State? {
        try log.read { reader in try storedState(of: projection, in: reader.transaction) }
    }

    /// The state of every view (or of `selected`), read in one snapshot.
    public func status(_ selected: [any Projection]? = nil) throws -> [ViewStatus] {
        try log.read { reader in
            let head = try reader.head().position
            let chosen: [any Projection] = selected ?? projections
            return try chosen.map { projection -> ViewStatus in
                let state = try storedState(of: projection, in: reader.transaction)
                var counts: [(name: String, rows: Int)] = []
                for view in projection.tableNames {
                    let name = view.name
                    counts.append(
                        (name: name, rows: try self.tables[name].map { try reader.transaction.count($0) } ?? 0))
                }
                return ViewStatus(
                    name: projection.name, codeVersion: projection.version, storedVersion: state?.version,
                    position: state?.position, head: head, tables: counts)
            }
        }
    }

    /// How one table of a view differs from what a rebuild would write.
    public struct TableDifference: Sendable, Equatable {
        public var table: String
        /// Keys of rows a rebuild would add (the stored view lacks them).
        public var added: [[UInt8]] = []
        /// Keys of stored rows a rebuild would remove (nothing in the log makes them).
        public var removed: [[UInt8]] = []
        /// Keys of rows a rebuild would write with other content (changed or
        /// damaged on disk, or different under this version of the code).
        public var changed: [[UInt8]] = []
        /// Of the changed rows, those whose checksum does not match.
        public var damaged: [[UInt8]] = []
        public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty }
    }

    /// How one view differs from a fresh fold of the log.
    public struct ViewComparison: Sendable, Equatable {
        public var status: ViewStatus
        public var tables: [TableDifference]
        public var name: String { status.name }
        public var added: Int { tables.reduce(0) { $0 + $1.added.count } }
        public var removed: Int { tables.reduce(0) { $0 + $1.removed.count } }
        public var changed: Int { tables.reduce(0) { $0 + $1.changed.count } }
        /// True when a rebuild would change no row's content (its stored
        /// version and position may still be behind: see `status.isStale`).
        public var isEmpty: Bool { tables.allSatisfy(\.isEmpty) }
        /// True when a rebuild would change nothing at all: no row, and the
        /// view is of this version and has seen the whole log.
        public var isCurrent: Bool { isEmpty && !status.isStale }
    }

    /// Folds the whole log with the current code, as a rebuild of `selected`
    /// (default: all) would, and compares every row it would write with the
    /// stored one, without writing anything: one read transaction, so it
    /// works on a read-only store and never waits for or blocks a writer.
    public func compare(_ selected: [any Projection]? = nil) throws -> [ViewComparison] {
        let chosen = selected ?? projections
        return try log.read { reader in
            let collector = RowCollector()
            let context = ProjectionContext(
                transaction: reader.transaction, log: reader, scratch: ProjectionScratch(log: reader), tables: tables,
                collector: collector)
            var rebuilders = chosen.map { $0.makeRebuilder(scratch: context.scratch) }
            // One thread, in this transaction: the rows compared must come
            // from the same snapshot as the stored ones.
            try reader.forEachRecord { record in
                for i in rebuilders.indices { try rebuilders[i].consume(record) }
                return true
            }
            for rebuilder in rebuilders { try rebuilder.write(in: context) }
            let head = try reader.head().position
            return try chosen.map { projection in
                var differences: [TableDifference] = []
                var counts: [(name: String, rows: Int)] = []
                let state = try storedState(of: projection, in: reader.transaction)
                // Rows are compared by content: a view written by another
                // version of the code may carry no checksum (or another),
                // and what a developer wants to see is what the change does
                // to the rows, not that every one is written again.
                let sameVersion = state?.version == projection.version
                for view in projection.tableNames {
                    let name = view.name
                    var expected = collector.rows[name] ?? [:]
                    var difference = TableDifference(table: name)
                    var rows = 0
                    // No table (a read-only store from before the view): no rows.
                    if let table = tables[name] {
                        try reader.transaction.forEach(table) { key, value in
                            rows += 1
                            if let wanted = expected.removeValue(forKey: key) {
                                let intact = ViewRowChecksum.isIntact(table: name, key: key, stored: value)
                                let content = intact ? value.dropLast(ViewRowChecksum.length) : value[...]
                                if !content.elementsEqual(wanted.dropLast(ViewRowChecksum.length)) {
                                    difference.changed.append(key)
                                    if sameVersion && !intact { difference.damaged.append(key) }
                                }
                            } else {
                                difference.removed.append(key)
                            }
                            return true
                        }
                    }
                    difference.added = expected.keys.sorted { $0.lexicographicallyPrecedes($1) }
                    differences.append(difference)
                    counts.append((name, rows))
                }
                let status = ViewStatus(
                    name: projection.name, codeVersion: projection.version, storedVersion: state?.version,
                    position: state?.position, head: head, tables: counts)
                return ViewComparison(status: status, tables: differences)
            }
        }
    }

    /// Why views are stale, in words for the notice printed before they
    /// are rebuilt: written by another version of the code ("after an
    /// upgrade"), never built, or behind the log (events appended without
    /// them, e.g. by a tool that writes the log alone).
    public func staleness(_ stale: [any Projection]) throws -> String {
        let states = try status(stale)
        if states.contains(where: { $0.storedVersion != nil && $0.storedVersion != $0.codeVersion }) {
            return "after an upgrade"
        }
        if states.allSatisfy({ $0.storedVersion == nil }) { return "(never built)" }
        return "(behind the log)"
    }
}
