import FoundationEssentials

// MARK: - What the stream index gave

/// One entry of an inspection's stream as the store read it, kept even when
/// the record behind it is gone or damaged: an auditor must see the hole.
public enum StreamEntry: Sendable {
    /// The record the stream index names.
    case record(EventRecord)
    /// The stream index names `position` for `streamVersion`, but the log
    /// holds no record there (removed, or the log was truncated).
    case missing(streamVersion: UInt64, position: UInt64)
    /// The bytes stored at `position` are not a record.
    case unreadable(streamVersion: UInt64, position: UInt64, reason: String)

    /// The stream version the index gave the entry.
    public var streamVersion: UInt64 {
        switch self {
        case .record(let record): record.streamVersion
        case .missing(let version, _), .unreadable(let version, _, _): version
        }
    }

    /// The log position the index gave the entry.
    public var position: UInt64 {
        switch self {
        case .record(let record): record.position
        case .missing(_, let position), .unreadable(_, let position, _): position
        }
    }
}
