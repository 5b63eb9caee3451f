import FoundationEssentials
import InspectionDomain
import LedgerCore
import LedgerStore

/// The one way a person's reference to an inspection (its id, or any unique
/// prefix of it, one hex digit included) becomes its id, for the commands
/// that record and read and for the auditor's alike.
///
/// Looked up in the log's own stream index, never in a view: every
/// inspection the log holds is found, whatever its status (discarded drafts
/// included) and whatever state the views are in. A device's own stream
/// (whose first record is a `DeviceStreamEventType`, such as
/// `device.key_published`) is not an inspection and is never matched, so
/// it never makes an inspection's prefix ambiguous.
public enum InspectionResolver {
    /// How many matching streams are read to tell an ambiguous reference
    /// (the error names the first five).
    static let candidates = 12

    /// The inspection `reference` names in `log`, or `LookupError`.
    public static func resolve(_ reference: String, in log: EventLog) throws -> UUID {
        guard let prefix = IDPrefix(reference) else { throw LookupError.notAnID(reference) }
        let matches = try log.read { reader in
            try reader.streams(matching: prefix, limit: candidates).filter { stream in
                guard let first = try reader.firstRecordType(ofStream: stream) else { return true }
                return DeviceStreamEventType.named(first) == nil
            }
        }
        switch matches.count {
        case 0: throw LookupError.noInspection(reference)
        case 1: return matches[0]
        default: throw LookupError.ambiguous(reference, matches)
        }
    }
}
