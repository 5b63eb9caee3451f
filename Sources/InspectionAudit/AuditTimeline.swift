import FoundationEssentials
import InspectionDomain
import LedgerCore

// MARK: - The timeline

/// One answer that an event changed.
public struct FieldChange: Hashable, Sendable {
    public var fieldID: FieldID
    /// The label and type from the pinned template (nil when it is unknown).
    public var label: String?
    public var fieldType: FieldType?
    /// Nil means unanswered (never set, or cleared).
    public var old: FieldValue?
    public var new: FieldValue?

    public init(fieldID: FieldID, label: String?, fieldType: FieldType?, old: FieldValue?, new: FieldValue?) {
        self.fieldID = fieldID
        self.label = label
        self.fieldType = fieldType
        self.old = old
        self.new = new
    }

    /// `Floors (2): 3 → 4`.
    public var text: String {
        let name = label.map { "\($0) (\(fieldID.rawValue))" } ?? "field \(fieldID.rawValue)"
        return "\(name): \(EventWording.valueText(old)) → \(EventWording.valueText(new))"
    }
}

/// What is wrong with an entry of the timeline, one case per kind;
/// `description` words it for the report.
public enum TimelineProblem: Equatable, Sendable, CustomStringConvertible {
    /// Stream versions `first` to `last` have no index entry: the events
    /// were removed with their index entries.
    case versionsMissing(first: UInt64, last: UInt64)
    /// The stream index names `position` as `version`, but the log holds no record there.
    case recordRemoved(position: UInt64, version: UInt64)
    /// The bytes stored at `position` are not a record (`reason`, the reader's).
    case notARecord(position: UInt64, reason: String)
    /// The record belongs to another inspection's stream, yet this stream's index lists it.
    case ofAnotherInspection(UUID)
    /// The event cannot be decoded (`why`, the decoder's).
    case undecodable(type: String, schemaVersion: Int, why: String)

    public var description: String {
        switch self {
        case .versionsMissing(let first, let last):
            (first == last ? "stream version \(first) is" : "stream versions \(first)–\(last) are")
                + " missing: the stream index has no entry for them, so the events were removed with their index "
                + "entries"
        case .recordRemoved(let position, let version):
            "the stream index names position \(position) as version \(version) of this inspection, but the log "
                + "holds no record there: it was removed"
        case .notARecord(let position, let reason):
            "the bytes stored at position \(position) are not a record (\(reason))"
        case .ofAnotherInspection(let stream):
            "the record belongs to inspection \(stream.lowercased), yet the stream index lists it here"
        case .undecodable(let type, let version, let why):
            "the \(type) event (version \(version)) cannot be decoded: \(why)"
        }
    }
}

/// One event of the inspection, as an auditor reads it.
public struct TimelineEntry: Sendable {
    public var position: UInt64
    public var streamVersion: UInt64
    /// The stored record; nil when it is missing or unreadable.
    public var record: EventRecord?
    /// The decoded event; nil when the record is missing or cannot be decoded.
    public var event: InspectionEvent?
    /// What happened, in words (`set Floors (2): 3 → 4`).
    public var summary: String
    /// Every answer the event changed, old → new, in form order.
    public var changes: [FieldChange]
    /// What is wrong with this entry (missing, unreadable, out of place),
    /// in the order found; empty when nothing is.
    public var problems: [TimelineProblem]
    /// `problems` in words, or nil when there are none.
    public var problem: String? { problems.isEmpty ? nil : problems.map(\.description).joined(separator: "; ") }
    /// The event is in the log but changed nothing in the inspection's
    /// record: an edit after submit, a second start, a retry of nothing.
    /// `apply` ignores such events so that any log replays; an auditor
    /// should still see that someone recorded them.
    public var hadNoEffect: Bool
    /// The record's time is earlier than that of the stream's record before
    /// it: the device clock went back (or was set wrong) between them, so
    /// times in this stream are not in order and cannot be read as such.
    public var recordedBeforePrevious = false

    /// For a record of another device's log carried by a reception: the
    /// position, in this log, of the `inspection.received` that carries it
    /// (its own `position` is in the sender's log).
    public var carriedIn: UInt64?

    /// The marker every rendering shows for `recordedBeforePrevious`.
    public static let clockWentBack = "⚠ recorded before the previous event (the device clock went back)"

    /// Whether `summary` already states every change (a field set or
    /// cleared reads `old → new`), so renderings need not list them again.
    public var summaryStatesChanges: Bool {
        switch event {
        case .fieldSet, .fieldCleared: true
        default: false
        }
    }

    /// Whether the event is a sync outcome (recorded by the sync worker).
    public var isSyncOutcome: Bool { record?.type.hasPrefix("sync.") ?? false }
}

/// An inspection's whole history folded event by event from its stream:
/// each entry with what it changed, the state after the last one, and every
/// irregularity met on the way.
///
/// Pure: it reads only what it is given. The store reads the stream through
/// its index (never by scanning the log) and finds a template pinned by
/// another inspection by its content hash.
public struct AuditTimeline: Sendable {
    public let inspectionID: UUID
    public private(set) var entries: [TimelineEntry] = []
    /// The inspection after the last folded entry.
    public private(set) var state: InspectionState
    /// Pinned templates by content hash: those given, and those the stream
    /// itself pinned.
    public private(set) var templates: [String: Template]
    /// When the stream's previous record was recorded (for `recordedBeforePrevious`).
    private var previousRecordedAt: Timestamp?
    /// Where the stream pinned its own template, if it did.
    public private(set) var templatePinnedAt: UInt64?
    /// The position of the last folded entry (0 when there is none).
    public private(set) var lastPosition: UInt64 = 0
    /// The ids of the records entered, so a record carried again (a device's
    /// own records coming back in a shared copy) is entered once.
    private var entered: Set<UUID> = []
    /// The bytes the stream's receptions carry by reference (the store's
    /// `carried` table, as far as it resolves): a reference it lacks is a
    /// problem of the reception's entry, named by its leaf.
    public let carried: CarriedRecords

    /// Folds `entries` (in stream-version order) up to and including
    /// `position` (all of them when nil).
    public init(
        inspectionID: UUID, entries stream: [StreamEntry], templates: [String: Template] = [:],
        through position: UInt64? = nil, carried: CarriedRecords = CarriedRecords()
    ) {
        self.carried = carried
        self.inspectionID = inspectionID
        self.state = InspectionState(id: inspectionID)
        self.templates = templates
        var expectedVersion: UInt64 = 1
        for entry in stream {
            if let position, entry.position > position { continue }
            if entry.streamVersion > expectedVersion {
                entries.append(
                    TimelineEntry(
                        position: 0, streamVersion: expectedVersion, record: nil, event: nil,
                        summary: "(no record)",
                        changes: [],
                        problems: [.versionsMissing(first: expectedVersion, last: entry.streamVersion - 1)],
                        hadNoEffect: false))
            }
            expectedVersion = max(expectedVersion, entry.streamVersion + 1)
            fold(entry)
        }
    }

    /// The first template hash the stream's start names, found without a
    /// template (a store uses it to look a template pinned elsewhere up).
    ///
    /// A start that cannot be decoded is skipped here: the fold decodes it
    /// again and reports it as a problem of its entry.
    public static func templateHash(in entries: [StreamEntry], carried: CarriedRecords = CarriedRecords()) -> String? {
        for case .record(let record) in entries {
            if record.type == InspectionEventType.started.rawValue,
                case .started(let started) = try? InspectionEvent.decode(record)
            {
                return started.templateHash
            }
            // A received inspection's start is the sender's, carried.
            if record.type == InspectionEventType.received.rawValue,
                case .received(var received) = try? InspectionEvent.decode(record)
            {
                received.carried = received.carried.merging(carried)
                // What it carries unread: the fold reports it ("what it carries cannot be read").
                if let hash = try? received.startedTemplateHash() { return hash }
            }
        }
        return nil
    }

    /// The templates the stream pinned itself, by content hash, each with
    /// the position of its first `template.pinned` (decode failures are left
    /// to the fold to report, as above).
    public static func pinnedTemplates(in entries: [StreamEntry]) -> [String: (template: Template, position: UInt64)] {
        var found: [String: (template: Template, position: UInt64)] = [:]
        for case .record(let record) in entries where record.type == InspectionEventType.templatePinned.rawValue {
            if case .templatePinned(let pinned) = try? InspectionEvent.decode(record), found[pinned.templateHash] == nil
            {
                found[pinned.templateHash] = (pinned.template, record.position)
            }
        }
        return found
    }

    /// The parent the stream's start names, if it is a re-inspection.
    public var parentInspectionID: UUID? { state.parentInspectionID }

    /// Every `photo.captured` of the stream with where and when, including
    /// those `apply` ignored (taken after submit): each names a file an
    /// auditor must be able to check.
    public var capturedPhotos: [(entry: TimelineEntry, captured: PhotoCaptured)] {
        entries.compactMap { entry in
            if case .photoCaptured(let captured) = entry.event { return (entry, captured) }
            return nil
        }
    }

    /// The irregularities of the stream itself (not of the chain).
    public var problems: [String] {
        entries.compactMap { entry in
            entry.problem.map { entry.position > 0 ? "position \(entry.position): \($0)" : $0 }
        }
    }

    // MARK: - Folding

    private mutating func fold(_ entry: StreamEntry) {
        lastPosition = max(lastPosition, entry.position)
        switch entry {
        case .missing(let version, let position):
            entries.append(
                TimelineEntry(
                    position: position, streamVersion: version, record: nil, event: nil, summary: "(no record)",
                    changes: [],
                    problems: [.recordRemoved(position: position, version: version)], hadNoEffect: false))
        case .unreadable(let version, let position, let reason):
            entries.append(
                TimelineEntry(
                    position: position, streamVersion: version, record: nil, event: nil,
                    summary: "(unreadable record)", changes: [],
                    problems: [.notARecord(position: position, reason: reason)],
                    hadNoEffect: false))
        case .record(let record):
            fold(record)
        }
    }

    private mutating func fold(_ record: EventRecord) {
        let wentBack = previousRecordedAt.map { record.recordedAt < $0 } ?? false
        previousRecordedAt = record.recordedAt
        fold(record, problems: [])
        if wentBack { entries[entries.count - 1].recordedBeforePrevious = true }
    }

    private mutating func fold(_ record: EventRecord, problems: [TimelineProblem]) {
        var problems = problems
        if record.stream != inspectionID { problems.append(.ofAnotherInspection(record.stream)) }
        var event: InspectionEvent
        do {
            event = try EventUpcaster.decode(record, template: state.template)
            if case .received(var received) = event {
                // What it carries, from the store's closure (a carried
                // reception's own, merged with its parent's, comes along).
                received.carried = received.carried.merging(carried)
                _ = try received.resolvedRecords()
                event = .received(received)
            }
        } catch {
            problems.append(.undecodable(type: record.type, schemaVersion: record.schemaVersion, why: "\(error)"))
            entries.append(
                TimelineEntry(
                    position: record.position, streamVersion: record.streamVersion, record: record, event: nil,
                    summary: "(undecodable \(record.type) event)", changes: [],
                    problems: problems, hadNoEffect: false))
            return
        }
        if case .templatePinned(let pinned) = event {
            templates[pinned.templateHash] = pinned.template
            if templatePinnedAt == nil { templatePinnedAt = record.position }
        }
        if case .received(let received) = event {
            // The sender's records first, each an entry of its own with its
            // device, actor and time (each once), described as the sender's
            // fold saw them; the reception then merges them into the state.
            let merged = state
            // Resolved above: a reference that does not resolve made the
            // entry undecodable, with its leaf named.
            for carried in (try? received.resolvedRecords()) ?? [] where carried.stream == inspectionID {
                guard !entered.contains(carried.id) else { continue }
                fold(carried, problems: [])
                entries[entries.count - 1].carriedIn = record.position
                entries[entries.count - 1].summary =
                    "[device \(EventWording.short(carried.device)), its log's position \(carried.position)] "
                    + entries[entries.count - 1].summary
            }
            state = merged
        }
        entered.insert(record.id)
        let before = state
        state.apply(
            event, recordedAt: record.recordedAt, actor: record.actor, device: record.device, pinnedTemplates: templates
        )
        var unchanged = state
        unchanged.eventCount = before.eventCount
        let template = state.template ?? before.template
        let changes = Self.changes(from: before.values, to: state.values, template: template)
        entries.append(
            TimelineEntry(
                position: record.position, streamVersion: record.streamVersion, record: record, event: event,
                summary: EventWording.describe(event, stream: inspectionID, template: template, before: before),
                changes: changes, problems: problems,
                hadNoEffect: unchanged == before))
    }

    /// The answers that differ between two states, in form order (fields
    /// the template lacks last, by id).
    public static func changes(
        from old: [FieldID: FieldValue], to new: [FieldID: FieldValue], template: Template?
    ) -> [FieldChange] {
        let ids = Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }
        let order = Dictionary(
            (template?.fields ?? []).enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        return ids.sorted { a, b in
            switch (order[a], order[b]) {
            case (let x?, let y?): x < y
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): a < b
            }
        }.map { id in
            let field = template?.field(id: id)
            return FieldChange(fieldID: id, label: field?.label, fieldType: field?.type, old: old[id], new: new[id])
        }
    }
}
