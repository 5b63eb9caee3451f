import FoundationEssentials
import InspectionDomain
import InspectionStore
import LedgerCore
import LedgerStore

/// `jqc check --photos`: the files in `photos/` against the photos the log
/// names (captures, and those a reception carries): a file no event names
/// (left by a capture that did not commit), a named file that is missing,
/// and one whose contents no longer hash to its name; and a staging file in
/// `photos/.incoming` whose writer is gone (a capture or `receive` killed
/// mid-write), which the next recording command removes. Nothing is changed;
/// each finding says what to do.
public enum PhotoFileCheck {
    public struct Finding: Equatable, Sendable {
        public enum Kind: String, Sendable {
            case unreferenced, missing, altered, staging
        }

        public var kind: Kind
        /// The file's name: the SHA-256 the log names it by (a staging
        /// file's own name).
        public var sha256: String
        public var message: String
    }

    /// Compares the files in `photos/` with the photos the log names.
    public static func findings(_ auditor: AuditorLedger) throws -> [Finding] {
        let named = try auditor.log.read { try Self.named(reader: $0) }
        let photos = auditor.photos
        let stored = Set(try photos.storedNames())
        var findings: [Finding] = []
        for hash in stored.subtracting(named.keys).sorted() {
            findings.append(
                Finding(
                    kind: .unreferenced, sha256: hash,
                    message: "photos/\(hash): no event names this file (left by a capture that did not commit). "
                        + "It can be deleted."))
        }
        for stale in try photos.staleTemporaries() {
            findings.append(
                Finding(
                    kind: .staging, sha256: stale.name,
                    message: "photos/\(LedgerLayout.photoStaging)/\(stale.name): a staging file left by a capture or "
                        + "receive that was interrupted (its process \(stale.pid) is gone); no event names it. The next "
                        + "recording command removes it, or delete it."))
        }
        for (hash, position) in named.sorted(by: { $0.value < $1.value }) {
            if !stored.contains(hash) {
                findings.append(
                    Finding(
                        kind: .missing, sha256: hash,
                        message: "photos/\(hash), named by the event at position \(position), is missing. "
                            + "Restore it from a backup."))
            } else if case .altered(let actual) = photos.check(sha256: hash) {
                findings.append(
                    Finding(
                        kind: .altered, sha256: hash,
                        message: "photos/\(hash), named by the event at position \(position), was changed "
                            + "(its contents hash to \(actual.prefix(16))…). Restore it from a backup."))
            }
        }
        return findings
    }

    /// Every photo file the log names, by hash, with the position of the
    /// first event naming it: a capture, or a reception whose carried records
    /// name it at any depth (a photo of a device two hops away is named by
    /// the reception that brought it here).
    public static func named(reader: LedgerReader) throws -> [String: UInt64] {
        var named: [String: UInt64] = [:]
        let memo = StreamClosures()
        try reader.forEachRecord { record in
            guard
                record.type == InspectionEventType.photoCaptured.rawValue
                    || record.type == InspectionEventType.received.rawValue
            else { return true }
            for captured in try CarriedClosure.event(of: record, reader: reader, memo: memo).photoCaptures() {
                let hash = captured.photo.sha256.hex
                if named[hash] == nil { named[hash] = record.position }
            }
            return true
        }
        return named
    }
}
