import FoundationEssentials
import InspectionDomain
import LMDB
import LedgerCore
import LedgerStore

/// Folds records into inspection states: the one place that turns the log
/// into `InspectionState`s, used by rebuilds (the whole log, in memory) and
/// by commands and incremental updates (one stream, read through its index).
final class InspectionFold {
    /// The snapshot the records come from, for the bytes receptions carry
    /// by reference (`CarriedClosure`).
    let log: LedgerReader?
    /// The closure of each stream's receptions, made once per fold.
    let closures = StreamClosures()
    var states: [UUID: InspectionState] = [:]
    /// The states of the other partitions of a rebuild (`absorb`), each
    /// kept apart as it was folded: merging them into `states` was a pass
    /// on one core, and freeing them all at the end another. Each is read
    /// by the thread that works out its rows, and all are freed on a thread
    /// of their own while the rows are put (`rowChanges(of:)`).
    var absorbedStates: [[UUID: InspectionState]] = []
    /// Set once the rows are worked out and the states handed away: a fold
    /// asked for rows again after that would answer none.
    var statesHandedAway = false
    /// Pinned templates by content hash, as `template.pinned` events arrive.
    var templates: [String: Template] = [:]
    /// Re-inspections by parent.
    var children: [UUID: [UUID]] = [:]
    /// Every record up to here has been folded (rebuilds share one fold).
    var lastPosition: UInt64 = 0
    /// Set once a rebuild has resolved follow-ups over the whole fold.
    var followUpsResolved = false
    /// The last record of another partition's stream seen (`consumeShared`).
    var lastSharedPosition: UInt64 = 0
    /// The other partitions' folds taken in.
    var absorbed: Set<ObjectIdentifier> = []
    /// The views a rebuild writes from this fold, and their rows once
    /// worked out (`rowChanges(of:)`), by the views' order here.
    var rebuiltViews: [InspectionView] = []
    var rows: [[RowChange]]?

    init(log: LedgerReader?) { self.log = log }

    /// Folds one record (once, however many views share the fold).
    func consume(_ record: EventRecord) throws {
        guard record.position > lastPosition else { return }
        lastPosition = record.position
        let stream = record.stream
        // An older version needs its inspection's template to be read: looked
        // up only then, since reading the state out of the dictionary copies it.
        let event = try Self.event(of: record, log: log, memo: closures) { states[stream]?.template }
        if case .templatePinned(let pinned) = event { templates[pinned.templateHash] = pinned.template }
        states[stream, default: InspectionState(id: stream)].apply(
            event, recordedAt: record.recordedAt, actor: record.actor, device: record.device, pinnedTemplates: templates
        )
        if case .started(let started) = event, let parent = started.parentInspectionID {
            children[parent, default: []].append(stream)
        }
    }

    /// The folded state of `id`, whichever partition folded it.
    func folded(_ id: UUID) -> InspectionState? {
        if let state = states[id] { return state }
        for part in absorbedStates { if let state = part[id] { return state } }
        return nil
    }

    /// Which re-inspection clears a parent's follow-up: the one completed
    /// first (by its completion time, then id), whichever way the states were
    /// folded — so a view updated event by event and one rebuilt agree.
    static func resolver(among children: [InspectionState]) -> UUID? {
        children.filter { $0.status == .completed }.min { a, b in
            let ta = a.completedAt?.microsecondsSinceEpoch ?? 0
            let tb = b.completedAt?.microsecondsSinceEpoch ?? 0
            return ta != tb ? ta < tb : a.id.bytes.lexicographicallyPrecedes(b.id.bytes)
        }?.id
    }

    /// Clears the follow-ups of parents whose re-inspections were submitted
    /// (after a whole-log fold).
    func resolveFollowUps() {
        for (parent, ids) in children {
            guard let child = Self.resolver(among: ids.compactMap(folded)) else { continue }
            if states[parent] != nil {
                states[parent]?.resolveFollowUp(by: child)
            } else if let part = absorbedStates.firstIndex(where: { $0[parent] != nil }) {
                absorbedStates[part][parent]?.resolveFollowUp(by: child)
            }
        }
    }

    /// The state of one inspection, folded from its stream alone; templates
    /// pinned in other streams and submitted re-inspections come from the
    /// views (`view:templates`, `view:reinspections`).
    static func state(
        of id: UUID, reader: LedgerReader, tables: InspectionTables, knownChildren: [UUID: InspectionState] = [:]
    ) throws -> InspectionState? {
        let records = try reader.records(inStream: id)
        guard !records.isEmpty else { return nil }
        let fold = InspectionFold(log: reader)
        for record in records {
            if fold.states[id]?.template == nil,
                let hash = try startedTemplateHash(record, log: reader, memo: fold.closures)
            {
                // The template may have been pinned by an earlier inspection.
                if let template = try pinnedTemplate(hash, reader.transaction, tables) {
                    fold.templates[hash] = template
                }
            }
            try fold.consume(record)
        }
        guard var state = fold.states[id] else { return nil }
        if state.followUpRequired {
            // Children's completion from their summaries, unless the caller
            // has fresher states (a child being submitted right now).
            var candidates: [InspectionState] = []
            for child in try reinspections(of: id, reader.transaction, tables) {
                if let known = knownChildren[child] {
                    candidates.append(known)
                } else if let summary = try InspectionSummary.read(child, reader.transaction, tables) {
                    var stand = InspectionState(id: child)
                    stand.status = summary.status
                    stand.completedAt = summary.completedAt
                    candidates.append(stand)
                }
            }
            if let child = resolver(among: candidates) { state.resolveFollowUp(by: child) }
        }
        return state
    }

    /// The template hash a record starts its inspection with: an
    /// `inspection.started`'s, or that of the start an `inspection.received`
    /// carries (decoded only for these two types).
    static func startedTemplateHash(
        _ record: EventRecord, log: LedgerReader?, memo: StreamClosures? = nil
    ) throws -> String? {
        if record.type == InspectionEventType.started.rawValue {
            if case .started(let started) = try EventUpcaster.decode(record, template: nil) {
                return started.templateHash
            }
        } else if record.type == InspectionEventType.received.rawValue,
            case .received(let received) = try event(of: record, log: log, memo: memo)
        {
            do {
                return try received.startedTemplateHash()
            } catch {
                throw InspectionStoreError.undecodableEvent(
                    position: record.position, type: record.type, "what it carries cannot be read: \(error)")
            }
        }
        return nil
    }

    static func pinnedTemplate(_ hash: String, _ txn: Transaction, _ tables: InspectionTables) throws -> Template? {
        guard let bytes = try tables.row(tables.templates, Array(hash.utf8), txn) else { return nil }
        return try Template(cbor: try CBORValue(decoding: bytes))
    }

    static func reinspections(of parent: UUID, _ txn: Transaction, _ tables: InspectionTables) throws -> [UUID] {
        var found: [UUID] = []
        let prefix = parent.bytes
        try txn.forEach(tables.reinspections, from: prefix) { key, value in
            guard key.count == 32, key.starts(with: prefix), let child = UUID(bytes: Array(key[16..<32])) else {
                return false
            }
            _ = try InspectionTables.open(tables.reinspections, key, value)
            found.append(child)
            return true
        }
        return found
    }
}

/// Why the inspection views could not be built or read.
public enum InspectionStoreError: Error, CustomStringConvertible {
    /// An event in the log could not be decoded (written by a newer jqc, or damaged).
    case undecodableEvent(position: UInt64, type: String, String)
    /// A reception's carried records do not resolve from the `carried` table.
    case unresolvedCarried(position: UInt64, CarriedRecordsError)
    /// A view row could not be decoded: rebuild the views.
    case corruptView(String)
    /// A view written by another version of the code, read without rebuilding it (read-only).
    case staleView(String, stored: Int, code: Int)

    public var description: String {
        switch self {
        case .undecodableEvent(let position, let type, let why):
            "event \(position) (\(type)) cannot be read: \(why). Run 'jqc verify'; if the log is intact, upgrade jqc."
        case .unresolvedCarried(let position, let error):
            "the reception at position \(position) cannot be read: \(error) in this ledger's 'carried' table (the "
                + "store is damaged). Run 'jqc verify --full' and restore the ledger from a backup (a backup copies "
                + "the table); the device that sent the records still holds them."
        case .corruptView(let what):
            "a view row cannot be read (\(what)). Rebuild the views with 'jqc rebuild'."
        case .staleView(let view, let stored, let code):
            "the \(view) view was written by another version of jqc (version \(stored); this one writes "
                + "\(code)) and this ledger is open read-only: run 'jqc rebuild \(view)' where it can be written."
        }
    }
}

extension InspectionFold {
    /// The records a stream's fold may need from other streams: a template
    /// is pinned once, in the first inspection that used it, and every later
    /// one refers to it by hash. Every partition of a rebuild sees them.
    static let sharedTypes = [InspectionEventType.templatePinned.rawValue]

    /// A pinned template from another partition's stream: remembered for the
    /// inspections of this one, folded into no state.
    func consumeShared(_ record: EventRecord) throws {
        guard record.position > lastSharedPosition else { return }
        lastSharedPosition = record.position
        guard record.type == InspectionEventType.templatePinned.rawValue else { return }
        if case .templatePinned(let pinned) = try Self.event(of: record, log: nil) {
            templates[pinned.templateHash] = pinned.template
        }
    }

    /// The record's event, read as the current version of its type, or
    /// upcast from an older one with the template `template` gives (asked
    /// only then); a failure names the record.
    /// A version-2 reception gets the bytes it carries from `log`'s
    /// `carried` table (`CarriedClosure`), or fails naming what is missing.
    static func event(
        of record: EventRecord, log: LedgerReader?, memo: StreamClosures? = nil, template: () -> Template? = { nil }
    ) throws -> InspectionEvent {
        let event: InspectionEvent
        do {
            do {
                event = try InspectionEvent.decode(record)
            } catch .upcastRequired {
                event = try EventUpcaster.decode(record, template: template())
            }
        } catch {
            throw InspectionStoreError.undecodableEvent(position: record.position, type: record.type, "\(error)")
        }
        return try CarriedClosure.attach(event, of: record, reader: log, memo: memo)
    }

    /// Takes in another partition's fold, over other streams (once, however
    /// many views share the two folds).
    func absorb(_ other: InspectionFold) {
        guard other !== self, absorbed.insert(ObjectIdentifier(other)).inserted else { return }
        precondition(!statesHandedAway && !other.statesHandedAway, "a fold absorbed after its rows were worked out")
        // Moved, not copied: the other fold is done with, and a dictionary
        // held twice would not be freed by the thread it is handed to.
        for part in [other.states] + other.absorbedStates where !part.isEmpty { absorbedStates.append(part) }
        other.states = [:]
        other.absorbedStates = []
        templates.merge(other.templates) { mine, _ in mine }
        for (parent, ids) in other.children { children[parent, default: []].append(contentsOf: ids) }
        lastPosition = max(lastPosition, other.lastPosition)
        followUpsResolved = false
        rows = nil
    }
}
