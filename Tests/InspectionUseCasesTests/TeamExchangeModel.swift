import Foundation
import InspectionDomain
import LedgerCore

/// The merge rules of `docs/domain.md` § Sharing and merging, restated
/// without the fold: every event with the set of events its device held
/// when it was recorded (the causal past), a hybrid clock derived from that
/// past, and the views computed from those facts alone. The oracle of
/// `TeamExchangePropertyTests`; `rule` breaks one rule on purpose.
struct TeamExchangeModel {
    /// The rules, or one of them broken to show that the checker catches it.
    enum Rule: String, CustomStringConvertible, Hashable, Sendable {
        case real
        /// Any discard closes the copy, also one that did not see later work.
        case anyDiscardCloses
        /// A field's value is the write latest by its device's clock alone.
        case wallClockWins
        /// A discard never closes the copy, also one that saw everything.
        case discardNeverCloses

        var description: String { rawValue }

        static let broken: [Rule] = [.anyDiscardCloses, .wallClockWins, .discardNeverCloses]
    }

    /// What an event does to the views.
    enum Kind: Equatable {
        case write(FieldID, FieldValue?)
        case photo(UUID)
        case issue(UUID)
        case discard
        case submit
        case adoption
        case other

        init(_ event: InspectionEvent) {
            switch event {
            case .fieldSet(let answer): self = .write(answer.fieldID, answer.value)
            case .fieldCleared(let cleared): self = .write(cleared.fieldID, nil)
            case .photoCaptured(let captured): self = .photo(captured.photo.photoID)
            case .issueFlagged(let flagged): self = .issue(flagged.issueID)
            case .discarded: self = .discard
            case .submitted: self = .submit
            case .sendAdopted: self = .adoption
            default: self = .other
            }
        }

        /// Answers, clears, photos and issues: what a discard must have seen.
        var isWork: Bool {
            switch self {
            case .write, .photo, .issue: true
            default: false
            }
        }
    }

    struct Event {
        var id: UUID
        var device: UUID
        var time: Int64
        var known: Set<UUID>
        var kind: Kind
        /// The hybrid clock `(l, c)` derived from the causal past.
        var l: Int64
        var c: Int
    }

    let rule: Rule
    var events: [UUID: Event] = [:]
    private var held: [UUID: Set<UUID>] = [:]
    /// Devices wiped: what they held is gone with them.
    var wiped: Set<UUID> = []

    init(rule: Rule) { self.rule = rule }

    /// The same facts, judged by `other` rules.
    func judging(by other: Rule) -> TeamExchangeModel {
        var judged = TeamExchangeModel(rule: other)
        judged.events = events
        judged.held = held
        judged.wiped = wiped
        return judged
    }

    func holds(_ device: UUID) -> Set<UUID> { held[device] ?? [] }

    /// A reception: the device now holds what the file held.
    mutating func learn(_ device: UUID, _ arrived: Set<UUID>) { held[device, default: []].formUnion(arrived) }

    mutating func wipe(_ device: UUID) {
        held[device] = nil
        wiped.insert(device)
    }

    /// An event recorded on `device`, after everything the device holds.
    mutating func record(_ id: UUID, on device: UUID, at time: Int64, kind: Kind) {
        let known = holds(device)
        let past = known.compactMap { events[$0] }
        let top = past.map(\.l).max()
        let l = max(time, top ?? time)
        let c = past.filter { $0.l == l }.map { $0.c + 1 }.max() ?? 0
        events[id] = Event(id: id, device: device, time: time, known: known, kind: kind, l: l, c: c)
        held[device, default: []].insert(id)
    }

    /// The merge's total order: hybrid clock, then device id bytes.
    func precedes(_ a: Event, _ b: Event) -> Bool {
        if rule == .wallClockWins, a.time != b.time { return a.time < b.time }
        if rule != .wallClockWins, (a.l, a.c) != (b.l, b.c) { return (a.l, a.c) < (b.l, b.c) }
        return a.device.bytes.lexicographicallyPrecedes(b.device.bytes)
    }

    func events(of device: UUID) -> [Event] { holds(device).compactMap { events[$0] } }

    /// The submit that stands: the greatest by the order.
    func standingSubmit(of device: UUID) -> Event? {
        events(of: device).filter { $0.kind == .submit }.max(by: precedes)
    }

    /// Whether `discard` saw every piece of work held.
    func sawEverything(_ discard: Event, of device: UUID) -> Bool {
        events(of: device).allSatisfy { !$0.kind.isWork || discard.known.contains($0.id) }
    }

    func status(of device: UUID) -> InspectionStatus {
        let held = events(of: device)
        if held.isEmpty { return .notStarted }
        if standingSubmit(of: device) != nil { return .completed }
        let discards = held.filter { $0.kind == .discard }
        switch rule {
        case .anyDiscardCloses where !discards.isEmpty: return .discarded
        case .discardNeverCloses: return .draft
        default: return discards.contains { sawEverything($0, of: device) } ? .discarded : .draft
        }
    }

    func overtakenDiscards(of device: UUID) -> Int {
        events(of: device).filter { $0.kind == .discard && !sawEverything($0, of: device) }.count
    }

    /// The writes that count: all, or after a submit those it saw.
    func counted(of device: UUID) -> [FieldID: [Event]] {
        let submit = standingSubmit(of: device)
        var writes: [FieldID: [Event]] = [:]
        for event in events(of: device) {
            guard case .write(let field, _) = event.kind, submit.map({ $0.known.contains(event.id) }) ?? true else {
                continue
            }
            writes[field, default: []].append(event)
        }
        return writes
    }

    func values(of device: UUID) -> [FieldID: FieldValue] {
        var values: [FieldID: FieldValue] = [:]
        for (field, writes) in counted(of: device) {
            if case .write(_, let value?) = writes.max(by: precedes)?.kind { values[field] = value }
        }
        return values
    }

    /// Fields whose latest writes (none seen by another write of the field) are several.
    func conflicts(of device: UUID) -> Set<FieldID> {
        var found: Set<FieldID> = []
        for (field, writes) in counted(of: device) {
            let latest = writes.filter { write in !writes.contains { $0.known.contains(write.id) } }
            if latest.count > 1 { found.insert(field) }
        }
        return found
    }

    func photos(of device: UUID) -> Set<UUID> {
        Set(events(of: device).compactMap { if case .photo(let id) = $0.kind { id } else { nil } })
    }

    func issues(of device: UUID) -> Set<UUID> {
        Set(events(of: device).compactMap { if case .issue(let id) = $0.kind { id } else { nil } })
    }

    /// The device to send the submission, as every device that holds it
    /// all says: the adopter whose adoption stands, else the standing
    /// submitter. Asked of the union of what the live devices hold.
    func sender() -> UUID? {
        let all = events.values.filter { event in held.values.contains { $0.contains(event.id) } }
        guard let submit = all.filter({ $0.kind == .submit }).max(by: precedes) else { return nil }
        let adoptions = all.filter { $0.kind == .adoption }
        return adoptions.min(by: precedes)?.device ?? submit.device
    }
}
