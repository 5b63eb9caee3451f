import Foundation
import LedgerCore

// MARK: - Merging the devices' records of one inspection

extension InspectionState {
    /// Whether the stream holds a reception, so its events are merged
    /// rather than folded in order.
    public var isMerged: Bool { merge != nil }

    /// The submit that stands: the greatest by the merge order when two
    /// devices submitted a shared copy.
    public var standingSubmit: Closing? { submits.max(by: Closing.precedes) }

    /// Submits of other devices that do not stand (two devices submitted
    /// concurrently), latest first.
    public var overruledSubmits: [Closing] {
        guard let standing = standingSubmit else { return [] }
        return submits.filter { $0 != standing }.sorted { Closing.precedes($1, $0) }
    }

    /// Whether the standing submit is this device's: only then does its
    /// outbox hold the inspection (carried submits and sync outcomes never
    /// put anything there).
    public var submittedHere: Bool { standingSubmit?.stamp.device == stampDevice }

    /// Every field whose latest writes (under happens-before) are more than
    /// one, in form order; after a submit, among the writes before it.
    public var conflicts: [FieldConflict] {
        guard let merge else { return [] }
        var found: [FieldConflict] = []
        for (field, writes) in merge.writes {
            let counted = counting(writes)
            let latest = counted.filter { write in !counted.contains { write.stamp.happened(before: $0.stamp) } }
            guard latest.count > 1 else { continue }
            let standing = fieldMerge.winner(counted)
            let others = latest.filter { $0 != standing }.sorted { FieldWrite.precedes($1, $0) }
            found.append(FieldConflict(fieldID: field, writes: (standing.map { [$0] } ?? []) + others))
        }
        return found.sorted { formIndex($0.fieldID) < formIndex($1.fieldID) }
    }

    /// Whether `field` is in conflict (a write settles it even when it
    /// repeats the standing value).
    public func isInConflict(_ field: FieldID) -> Bool { conflicts.contains { $0.fieldID == field } }

    /// Per field, the latest write that does not happen before the standing
    /// submit: kept in the history, never part of the submitted form.
    public var arrivedAfterSubmit: [FieldWrite] {
        guard let merge, let submit = standingSubmit else { return [] }
        var late: [FieldWrite] = []
        for writes in merge.writes.values {
            let after = writes.filter { !$0.stamp.happened(before: submit.stamp) }
            if let latest = after.max(by: FieldWrite.precedes) { late.append(latest) }
        }
        return late.sorted { formIndex($0.fieldID) < formIndex($1.fieldID) }
    }

    /// The writes that count for the form: all of them, or after a submit
    /// those that happen before it.
    func counting(_ writes: [FieldWrite]) -> [FieldWrite] {
        guard let submit = standingSubmit else { return writes }
        return writes.filter { $0.stamp.happened(before: submit.stamp) }
    }

    func formIndex(_ field: FieldID) -> Int {
        template?.fields.firstIndex { $0.id == field } ?? Int.max
    }

    // MARK: - Folding

    /// Turns the in-order fold into a merge at the stream's first reception:
    /// what it folded so far becomes this device's writes, each following
    /// the ones before it.
    mutating func startMerging() {
        func clocked(_ stamp: EventStamp) -> EventStamp {
            var stamp = stamp
            stamp.clock = VectorClock([stamp.device: stamp.version])
            return stamp
        }
        var history = MergeHistory()
        for (field, write) in lastWrites {
            var write = write
            write.stamp = clocked(write.stamp)
            history.writes[field] = [write]
        }
        lastWrites = [:]
        for index in photos.indices { photos[index].stamp = clocked(photos[index].stamp) }
        for index in issues.indices { issues[index].stamp = clocked(issues[index].stamp) }
        for index in submits.indices { submits[index].stamp = clocked(submits[index].stamp) }
        for index in discards.indices { discards[index].stamp = clocked(discards[index].stamp) }
        lastStamp = lastStamp.map(clocked)
        merge = history
    }

    /// One of this device's events in a merged stream (`eventCount` is its
    /// version already).
    mutating func applyMerged(
        _ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, pinnedTemplates: [String: Template]
    ) {
        let own = stampDevice
        let version = UInt64(eventCount)
        var clock = lastStamp?.clock ?? VectorClock()
        clock.versions[own] = version
        var predecessors = lastStamp.map { [$0.time] } ?? []
        if case .received(let received) = event {
            let carried = foldCarried(received, pinnedTemplates: pinnedTemplates)
            clock.merge(carried.clock)
            if let latest = carried.latest { predecessors.append(latest) }
        }
        let stamp = EventStamp(
            device: own, version: version, time: .after(predecessors, recordedAt: recordedAt.microsecondsSinceEpoch),
            clock: clock)
        lastStamp = stamp
        if case .received(let received) = event {
            merge?.receptionStamps[EventKey(device: own, version: version)] = stamp
            // This device's own latest handover or reception decides
            // whether it records: after a reception, it does.
            handedOver = nil
            receivedFrom.append(
                Reception(
                    fromDevice: received.fromDevice, mode: received.mode, at: recordedAt, by: actor,
                    records: received.records.count, addressedTo: received.addressedTo))
            updatedAt = max(updatedAt ?? recordedAt, recordedAt)
        } else {
            foldMerged(event, recordedAt: recordedAt, actor: actor, stamp: stamp, carried: false, pinnedTemplates)
        }
        deriveMerged()
    }

    /// Folds the records a reception carries (versions 1 … k of the sender's
    /// stream, and recursively what its receptions carry), each event once;
    /// answers the clock and the latest hybrid time of what it carried.
    mutating func foldCarried(
        _ received: InspectionReceived, pinnedTemplates: [String: Template]
    ) -> (clock: VectorClock, latest: HybridTime?) {
        var previous: EventStamp?
        var clock = VectorClock()
        var latest: HybridTime?
        for reference in received.records {
            // Reception verified each record before recording it, and whoever
            // read the reception attached a closure it checked complete (the
            // store's `carried` table, a file's `carried_records`), failing
            // loudly otherwise: a record that does not resolve or decode here
            // (or is of another stream) is left out.
            guard let bytes = received.carried.record(reference.leaf), let record = try? EventRecord(decoding: bytes),
                record.stream == id
            else { continue }
            let key = EventKey(device: record.device, version: record.streamVersion)
            if record.type == InspectionEventType.received.rawValue, let known = merge?.receptionStamps[key] {
                // Folded before, with all it carries: not opened again.
                previous = known
                clock.merge(known.clock)
                latest = max(latest ?? known.time, known.time)
                if record.device != device { carriedEventIDs.insert(record.id) }
                continue
            }
            let event = try? received.event(of: record, template: template)
            let stamp: EventStamp
            do {
                var versions = previous?.clock ?? VectorClock()
                versions.versions[record.device] = max(versions.versions[record.device] ?? 0, record.streamVersion)
                var predecessors = previous.map { [$0.time] } ?? []
                if case .received(let nested)? = event {
                    let inner = foldCarried(nested, pinnedTemplates: pinnedTemplates)
                    versions.merge(inner.clock)
                    if let time = inner.latest { predecessors.append(time) }
                }
                stamp = EventStamp(
                    device: record.device, version: record.streamVersion,
                    time: .after(predecessors, recordedAt: record.recordedAt.microsecondsSinceEpoch), clock: versions)
                if case .received? = event { merge?.receptionStamps[key] = stamp }
            }
            previous = stamp
            clock.merge(stamp.clock)
            latest = max(latest ?? stamp.time, stamp.time)
            guard let event else { continue }
            if record.device == device {
                // This device's own record, folded already; only a write its
                // in-order fold let go (a later write replaced it) is kept.
                foldOwnWrite(event, record: record, stamp: stamp)
                continue
            }
            guard carriedEventIDs.insert(record.id).inserted, merge?.keys.insert(key).inserted ?? false else {
                continue
            }
            foldMerged(
                event, recordedAt: record.recordedAt, actor: record.actor, stamp: stamp, carried: true, pinnedTemplates)
        }
        return (clock, latest)
    }

    mutating func foldOwnWrite(_ event: InspectionEvent, record: EventRecord, stamp: EventStamp) {
        switch event {
        case .fieldSet(let answer):
            addWrite(answer.fieldID, answer.value, record.actor, record.recordedAt, stamp)
        case .fieldCleared(let cleared):
            addWrite(cleared.fieldID, nil, record.actor, record.recordedAt, stamp)
        case .started(let started):
            for answer in started.prefilled {
                addWrite(answer.fieldID, answer.value, record.actor, record.recordedAt, stamp)
            }
        default:
            break
        }
    }

    /// One event of a merged stream, this device's or carried.
    mutating func foldMerged(
        _ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, stamp: EventStamp, carried: Bool,
        _ pinnedTemplates: [String: Template]
    ) {
        switch event {
        case .templatePinned(let pinned):
            applyPinned(pinned)
        case .started(let started):
            guard startedAt == nil else { return }
            applyStartFacts(started, recordedAt: recordedAt, actor: actor, pinnedTemplates: pinnedTemplates)
            status = .draft
            for answer in started.prefilled { addWrite(answer.fieldID, answer.value, actor, recordedAt, stamp) }
        case .fieldSet(let answer):
            addWrite(answer.fieldID, answer.value, actor, recordedAt, stamp)
        case .fieldCleared(let cleared):
            addWrite(cleared.fieldID, nil, actor, recordedAt, stamp)
        case .photoCaptured(let captured):
            addPhoto(captured, recordedAt: recordedAt, actor: actor, stamp: stamp)
        case .issueFlagged(let flagged):
            addIssue(flagged, recordedAt: recordedAt, actor: actor, stamp: stamp)
        case .submitted(let submitted):
            submits.append(
                Closing(
                    stamp: stamp, at: recordedAt, by: actor, score: submitted.score,
                    followUpRequired: submitted.followUpRequired, reason: nil))
        case .discarded(let discarded):
            discards.append(
                Closing(
                    stamp: stamp, at: recordedAt, by: actor, score: nil, followUpRequired: false,
                    reason: discarded.reason))
            updatedAt = max(updatedAt ?? recordedAt, recordedAt)
        case .handedOver(let handed):
            // Another device's handover never stops this one.
            guard !carried, startedAt != nil else { return }
            handedOver = HandOff(mode: handed.mode, to: handed.to, at: recordedAt, by: actor)
        case .received, .unrecognized:
            break
        default:
            applySyncFact(event, recordedAt: recordedAt)
        }
    }

    /// A write, once (by its device and version).
    mutating func addWrite(
        _ field: FieldID, _ value: FieldValue?, _ actor: Actor, _ recordedAt: Timestamp, _ stamp: EventStamp
    ) {
        let writes = merge?.writes[field] ?? []
        guard !writes.contains(where: { $0.stamp.device == stamp.device && $0.stamp.version == stamp.version })
        else { return }
        merge?.writes[field] =
            writes + [
                FieldWrite(fieldID: field, value: value, stamp: stamp, actor: actor, recordedAt: recordedAt)
            ]
        updatedAt = max(updatedAt ?? recordedAt, recordedAt)
    }

    /// The views of a merged stream, from what it holds: the same whatever
    /// order the records arrived in.
    mutating func deriveMerged() {
        guard let merge else { return }
        photos.sort { EventStamp.precedes($0.stamp, $1.stamp) }
        issues.sort { EventStamp.precedes($0.stamp, $1.stamp) }
        if let submit = standingSubmit {
            close(submitted: submit)
        } else if let discard = discards.max(by: Closing.precedes) {
            status = .discarded
            discardReason = discard.reason
            discardedAt = discard.at
        } else if startedAt != nil {
            status = .draft
        }
        var derived: [FieldID: FieldValue] = [:]
        for (field, writes) in merge.writes {
            if let value = fieldMerge.winner(counting(writes))?.value { derived[field] = value }
        }
        values = derived
    }
}
