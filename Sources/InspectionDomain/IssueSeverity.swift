import FoundationEssentials

/// How serious a flagged issue is.
public enum IssueSeverity: String, CaseIterable, Hashable, Comparable, Sendable, CustomStringConvertible {
    case low, medium, high, critical

    public var description: String { rawValue }

    /// Reads a severity a person typed, ignoring case and surrounding spaces.
    public init(parsing text: String) throws(DomainError) {
        guard let severity = IssueSeverity(rawValue: text.trimmingWhiteSpace.lowercased()) else {
            throw .unknownSeverity(text)
        }
        self = severity
    }

    public static func < (a: IssueSeverity, b: IssueSeverity) -> Bool { a.rank < b.rank }

    private var rank: Int {
        switch self {
        case .low: 0
        case .medium: 1
        case .high: 2
        case .critical: 3
        }
    }
}

/// Whether a captured file is a photo or a signature drawing.
public enum PhotoKind: String, CaseIterable, Hashable, Sendable {
    case photo, signature
}

/// What the sync worker sends: photos first, then inspections, then issues.
public enum SyncItemKind: String, CaseIterable, Hashable, Sendable {
    case photo, inspection, issue
}

/// One thing the sync worker sends, named by its local id (a photo's id, the
/// inspection's stream id, an issue's id).
public struct SyncItem: Hashable, Sendable, CustomStringConvertible {
    public var kind: SyncItemKind
    public var id: UUID

    public init(kind: SyncItemKind, id: UUID) {
        self.kind = kind
        self.id = id
    }

    public var description: String { "\(kind.rawValue) \(id.lowercased)" }
}

/// The lifecycle of an inspection as the inspector sees it (sync has its own state).
public enum InspectionStatus: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// No `inspection.started` event has been applied yet.
    case notStarted = "not_started"
    case draft
    /// Submitted; the record is final.
    case completed
    /// A discarded draft: hidden from every view, still in the log.
    case discarded

    public var description: String { rawValue.replacing("_", with: " ") }
}
