import FoundationEssentials

/// The name of every LMDB table of the store, in one place: the log's own,
/// the projections' and the reference cache's (`Schemas/ledger-format.md`,
/// "Tables"). Code opens tables by these names, never by a literal.
public enum TableName {
    // MARK: The log (`EventLog`)

    public static let events = "events"
    public static let eventIDs = "event_ids"
    public static let streamIndex = "stream_index"
    public static let meta = "meta"
    public static let merkle = "merkle"
    /// The bytes of the records receptions carry by reference, by leaf hash
    /// (`inspection.received` version 2): one of the log's own tables, never
    /// rebuilt, copied by backups and salvage.
    public static let carried = "carried"
    /// The map of stream heads (`HeadMapStore.swift`): one of the log's own
    /// tables, updated in every append's transaction.
    public static let heads = "heads"

    // MARK: Projections (`ProjectionSet`)

    /// Each projection's stored version and position.
    public static let viewsMeta = "views:meta"
    /// The prefix of every view's table: derived, rebuilt from the log at will.
    public static let viewPrefix = "view:"

    /// Whether `table` is a view's (`view:*`) rather than one of the log's own.
    public static func isView(_ table: String) -> Bool { table.hasPrefix(viewPrefix) }

    /// The inspection views' tables (`InspectionView`).
    public enum View {
        public static let inspections = ViewTable(whole: "view:inspections")
        public static let reinspections = ViewTable(whole: "view:reinspections")
        public static let templates = ViewTable(whole: "view:templates")
        public static let drafts = ViewTable(whole: "view:drafts")
        public static let followUps = ViewTable(whole: "view:followups")
        public static let issues = ViewTable(whole: "view:issues")
        public static let outbox = ViewTable(whole: "view:outbox")
        /// The position of every `inspection.received` record: what this
        /// ledger heard from other devices, without walking the log.
        public static let receptions = ViewTable(whole: "view:receptions")
        /// The outbox view's submissions of other devices not reported sent.
        public static let unreportedSubmissions = ViewTable(whole: "view:unreported_submissions")
    }

    // MARK: The reference-data cache (`ReferenceCache`)

    public enum Reference {
        public static let facilities = "ref:facilities"
        public static let templates = "ref:templates"
        public static let meta = "ref:meta"
    }
}

/// The name of a view's table: `view:` and the view's own part. What a
/// projection declares (`Projection.tableNames`) and writes to
/// (`ProjectionContext.put`), so a view can never name one of the log's
/// own tables, which are never rebuilt.
public struct ViewTable: Hashable, Sendable, CustomStringConvertible {
    /// The table's whole name in the store, made once.
    public let name: String

    /// The table `view:` followed by `part`.
    public init(_ part: String) {
        precondition(!part.isEmpty, "a view's table is named after view:")
        name = TableName.viewPrefix + part
    }

    /// A view's table named whole by a literal (`TableName.View`). A
    /// literal string has no reference count; a name joined at run time has
    /// one, which every thread of a rebuild bumped for every row it worked
    /// out, each taking the counter's cache line from the other.
    init(whole name: String) {
        precondition(TableName.isView(name) && name.count > TableName.viewPrefix.count, "\(name) is no view's table")
        self.name = name
    }

    public var description: String { name }
}
