import Foundation
import LMDB
import LedgerCore

/// Why the event log refused or failed an operation. Each message says what
/// failed, why, and what to do.
public enum LedgerError: Error, CustomStringConvertible {
    /// Another writer appended to the stream after the caller read it.
    case versionConflict(stream: UUID, expected: UInt64, actual: UInt64)
    /// An event id that is already stored was appended with other content.
    case eventIDReused(id: UUID, position: UInt64)
    /// The directory holds a ledger of a format this program does not know.
    case unsupportedFormat(found: String)
    /// The directory holds no ledger (opened read-only or for an audit).
    case noLedger(path: String)
    /// A stored record could not be decoded.
    case corruptRecord(position: UInt64, RecordError)
    /// The storage engine failed.
    case storage(LMDBError)
    /// A caller passed an event that cannot be stored.
    case invalidEvent(String)

    public var description: String {
        switch self {
        case .versionConflict(let stream, let expected, let actual):
            "stream \(stream.lowercased) is at version \(actual), not \(expected): another writer recorded to it first. "
                + "Read it again and retry."
        case .eventIDReused(let id, let position):
            "event id \(id.lowercased) is already stored at position \(position) with different content. "
                + "Each event needs a fresh id; a retry must resend the identical event."
        case .unsupportedFormat(let found):
            "the ledger's format is '\(found)', which this version of jqc does not read. Upgrade jqc."
        case .noLedger(let path):
            "no ledger at \(path). Create one with 'jqc init' or pass --ledger PATH."
        case .corruptRecord(let position, let error):
            "record \(position) cannot be read: \(error). Run 'jqc verify' to locate damage."
        case .storage(let error):
            "the ledger's storage failed: \(error)"
        case .invalidEvent(let why):
            "invalid event: \(why)"
        }
    }
}
