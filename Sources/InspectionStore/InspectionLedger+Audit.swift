import FoundationEssentials
import InspectionDomain
import LedgerCore
import LedgerStore

// MARK: - What an auditor reads beside an inspection's own stream

extension InspectionLedger {
    /// Opens the ledger read-only (no view is rebuilt, nothing is written),
    /// without LMDB's lock file if the directory is read-only (see
    /// `ReadOnlyOpening`). Returns whether the lock file was skipped.
    public static func openForReading(
        storePath: String, photosPath: String
    ) throws -> (ledger: InspectionLedger, withoutLock: Bool) {
        let (ledger, withoutLock) = try ReadOnlyOpening.open {
            try InspectionLedger(storePath: storePath, photosPath: photosPath, access: $0)
        }
        return (ledger, withoutLock)
    }

    /// The inspection's own stream, holes kept (`LedgerReader.history(ofStream:)`).
    public func history(of id: UUID) throws -> [StreamEntry] {
        try log.history(ofStream: id)
    }
}

/// What one pass over the log found about an inspection's surroundings:
/// the `template.pinned` event of a template hash and the re-inspections
/// that name a parent. The slow path, for when the views cannot help.
public struct InspectionLinks: Sendable {
    /// A template pinned in the log, with the position of its pin.
    public struct PinnedTemplate: Sendable {
        public var template: Template
        public var position: UInt64
    }

    /// One thing the scan could not read, which may have hidden a link.
    public struct Unread: Hashable, Sendable, CustomStringConvertible {
        public var position: UInt64
        public var reason: String
        public var description: String { "position \(position): \(reason)" }
    }

    public var template: PinnedTemplate?
    public var children: [UUID] = []
    /// Records that could not be decoded (or whose pin or start could not
    /// be), in position order: each could have been a link.
    public var unread: [Unread] = []

    /// Scans the log for the first pin of `templateHash` whose template
    /// hashes to it, and (when `parent` is given) for every start naming
    /// `parent`. Without a parent it stops at the pin.
    public static func scan(_ log: EventLog, templateHash: String?, parent: UUID?) throws -> InspectionLinks {
        var links = InspectionLinks()
        let pinned = InspectionEventType.templatePinned.rawValue
        let started = InspectionEventType.started.rawValue
        try log.read { reader in
            try reader.scan { entry in
                switch entry {
                case .missing:
                    // A gap is the chain check's to report: it hides no stored link.
                    return true
                case .unreadable(let position, let reason):
                    links.unread.append(Unread(position: position, reason: "the record is unreadable (\(reason))"))
                    return true
                case .record(let record):
                    if record.type == pinned, links.template == nil, let templateHash {
                        do {
                            if case .templatePinned(let event) = try InspectionEvent.decode(record),
                                event.templateHash == templateHash, event.template.contentHash == templateHash
                            {
                                links.template = PinnedTemplate(template: event.template, position: record.position)
                                if parent == nil { return false }
                            }
                        } catch {
                            links.unread.append(
                                Unread(
                                    position: record.position,
                                    reason: "the template.pinned event is unreadable (\(error))"))
                        }
                    } else if record.type == started, let parent, record.stream != parent {
                        do {
                            if case .started(let event) = try InspectionEvent.decode(record),
                                event.parentInspectionID == parent
                            {
                                links.children.append(record.stream)
                            }
                        } catch {
                            links.unread.append(
                                Unread(
                                    position: record.position,
                                    reason: "the inspection.started event is unreadable (\(error))"))
                        }
                    }
                    return true
                }
            }
        }
        return links
    }
}
