import FoundationEssentials
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

    /// Whether `discard` saw everything: every answer, clear, photo and
    /// issue of the inspection happened before it (its vector clock knows,
    /// for every device, that device's latest such record). Only then does
    /// it close the copy; a discard that did not see later work is overtaken
    /// (`docs/domain.md` § Sharing and merging). Submits, handovers,
    /// receptions and sync outcomes are not work: they never reopen a copy.
    public func sawEverything(_ discard: Closing) -> Bool {
        workFrontier.allSatisfy { device, version in
            (device == discard.stamp.device && version <= discard.stamp.version)
                || discard.stamp.clock.knows(device, version)
        }
    }

    /// The discard that closes the inspection: the greatest by the merge
    /// order among those that saw everything (none while a submit stands,
    /// which wins).
    public var closingDiscard: Closing? { discards.filter(sawEverything).max(by: Closing.precedes) }

    /// Discards that did not see later work: they close nothing, and are
    /// shown beside the open copy. Latest first.
    public var overtakenDiscards: [Closing] {
        discards.filter { !sawEverything($0) }.sorted { Closing.precedes($1, $0) }
    }

    /// How many answers, clears, photos and issues `discard` had not seen.
    public func unseenWork(by discard: Closing) -> Int {
        func unseen(_ stamp: EventStamp) -> Bool {
            !stamp.happened(before: discard.stamp)
                && !(stamp.device == discard.stamp.device
                    && stamp.version <= discard.stamp.version)
        }
        let writes = (merge?.writes.values.joined()).map { $0.filter { unseen($0.stamp) }.count } ?? 0
        return writes + photos.filter { unseen($0.stamp) }.count + issues.filter { unseen($0.stamp) }.count
    }

    /// The server record this device's own log says the server accepted
    /// from it.
    public var ownServerRecord: ServerRecord? { sync.serverRecords.last { $0.device == stampDevice } }

    /// The server record that stands: the one sent by the device that is to
    /// send it (whose adoption stands, else whose submit stands), else by the
    /// device whose submit stands, else the earliest reported (by its
    /// device's time, then id: the same on every device that holds them all).
    public var standingServerRecord: ServerRecord? {
        let distinct = sync.serverRecords
        guard !distinct.isEmpty else { return nil }
        for device in [sendingDevice, standingSubmit?.stamp.device].compactMap({ $0 }) {
            if let sent = distinct.last(where: { $0.device == device }) { return sent }
        }
        return distinct.min { ($0.at, $0.serverID) < ($1.at, $1.serverID) }
    }

    /// When the server holds more than one record of this inspection (two
    /// devices submitted and synced before they exchanged, and the server
    /// has no `client_id` to refuse the second): the one that stands and
    /// those to remove on the server, in server-id order.
    public var duplicateServerRecords: (standing: ServerRecord, remove: [ServerRecord])? {
        guard let standing = standingServerRecord else { return nil }
        var seen: Set<String> = [standing.serverID]
        var remove: [ServerRecord] = []
        for record in sync.serverRecords.sorted(by: { ($0.serverID, $0.at) < ($1.serverID, $1.at) })
        where seen.insert(record.serverID).inserted {
            remove.append(record)
        }
        return remove.isEmpty ? nil : (standing, remove)
    }

    /// Every field whose latest writes (under happens-before) are more than
    /// one, in form order; after a submit, among the writes before it.
    public var conflicts: [FieldConflict] {
        guard let merge else { return [] }
        var found: [FieldConflict] = []
        for (field, writes) in merge.writes {
            let counted = counting(writes)
            // Only a device's last write of the field can be latest (its
            // earlier ones happened before it): linear in the writes.
            var last: [UUID: FieldWrite] = [:]
            for write in counted where write.stamp.version > last[write.stamp.device]?.stamp.version ?? 0 {
                last[write.stamp.device] = write
            }
            let candidates = Array(last.values)
            let latest = candidates.filter { write in !candidates.contains { write.stamp.happened(before: $0.stamp) } }
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
            history.written.insert(
                FieldWriteKey(field: field, device: write.stamp.device, version: write.stamp.version))
        }
        lastWrites = [:]
        for index in photos.indices { photos[index].stamp = clocked(photos[index].stamp) }
        for index in issues.indices { issues[index].stamp = clocked(issues[index].stamp) }
        for index in submits.indices { submits[index].stamp = clocked(submits[index].stamp) }
        for index in discards.indices { discards[index].stamp = clocked(discards[index].stamp) }
        lastStamp = lastStamp.map(clocked)
        merge = history
        changedSinceDerive.all = true
        // The in-order fold kept each field's last write only: an earlier
        // one of this device is below it in the frontier anyway.
        for write in history.writes.values.joined() { noteWork(write.stamp) }
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
        var standingBefore: Closing?
        if case .received(let received) = event {
            standingBefore = standingSubmit
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
                ReceptionOrigin(
                    fromDevice: received.fromDevice, mode: received.mode, at: recordedAt, by: actor,
                    records: Int(received.firstVersion) - 1 + received.records.count,
                    addressedTo: received.addressedTo))
            updatedAt = max(updatedAt ?? recordedAt, recordedAt)
        } else {
            foldMerged(event, recordedAt: recordedAt, actor: actor, stamp: stamp, carried: false, pinnedTemplates)
        }
        // This device's own event is later than everything folded (its
        // hybrid time follows the last stamp): it changes only its own
        // field, and a photo or issue it adds is last in the merge's order.
        // Deriving just that keeps the fold linear in the stream.
        switch event {
        case .fieldSet(let answer): deriveMerged(fields: [answer.fieldID])
        case .fieldCleared(let cleared): deriveMerged(fields: [cleared.fieldID])
        case .received: deriveAfterReception(standingBefore: standingBefore)
        case .started, .submitted, .discarded, .templatePinned: deriveMerged()
        default: deriveMerged(fields: [])
        }
    }

    /// Folds the records a reception carries (versions 1 … k of the sender's
    /// stream, and what its receptions carry, at any depth), each event
    /// once; answers the clock and the latest hybrid time of what it carried.
    ///
    /// Iterative, with an explicit stack of the receptions being opened: a
    /// nested reception's records are folded before the reception itself
    /// (its stamp follows all it carries), and a reception folded before is
    /// not opened again (its stamp remembered), so the walk is linear in the
    /// records reached and its depth costs heap, never the thread's stack.
    /// How deep a file may nest is checked when it is received
    /// (`InspectionReceived.checkNesting`).
    mutating func foldCarried(
        _ received: InspectionReceived, pinnedTemplates: [String: Template]
    ) -> (clock: VectorClock, latest: HybridTime?) {
        var stack = [CarriedFold(received: received, continued: continuedStamp(received))]
        var returned: (clock: VectorClock, latest: HybridTime?)?
        while let top = stack.indices.last {
            if let waiting = stack[top].waiting {
                // The nested reception's frame has just returned.
                stack[top].waiting = nil
                foldCarriedRecord(
                    waiting.record, waiting.event, inner: returned, into: &stack[top], pinnedTemplates)
                returned = nil
                continue
            }
            guard stack[top].next < stack[top].received.records.count else {
                let done = stack.removeLast()
                returned = (done.clock, done.latest)
                continue
            }
            let reference = stack[top].received.records[stack[top].next]
            stack[top].next += 1
            // Reception verified each record before recording it, and whoever
            // read the reception attached a closure it checked complete (the
            // store's `carried` table, a file's `carried_records`), failing
            // loudly otherwise: a record that does not resolve or decode here
            // (or is of another stream) is left out, as `apply` is total.
            guard let bytes = stack[top].received.carried.record(reference.leaf),
                let record = try? EventRecord(decoding: bytes), record.stream == id
            else { continue }
            let key = EventKey(device: record.device, version: record.streamVersion)
            if record.type == InspectionEventType.received.rawValue, let known = merge?.receptionStamps[key] {
                // Folded before, with all it carries: not opened again.
                stack[top].follow(known)
                if streamClock.carried[key] == nil { streamClock.carried[key] = known }
                if record.device != device { carriedEventIDs.insert(record.id) }
                continue
            }
            // Undecodable: folded as a record without an event (`apply` is total, see above).
            let event = try? stack[top].received.event(of: record, template: template)
            if case .received(let nested)? = event {
                stack[top].waiting = (record, event)
                stack.append(CarriedFold(received: nested, continued: continuedStamp(nested)))
                continue
            }
            foldCarriedRecord(record, event, inner: nil, into: &stack[top], pinnedTemplates)
        }
        return returned ?? (VectorClock(), nil)
    }

    /// The stamp of the held version a version-3 reception continues (its
    /// records follow it), or nil: none continued, or not folded (a gap the
    /// audit names; the fold, total, starts the records afresh).
    func continuedStamp(_ received: InspectionReceived) -> EventStamp? {
        guard let continues = received.continues else { return nil }
        return streamClock.stamp(received.fromDevice, continues.streamVersion)
    }

    /// One carried record, stamped after the one before it in its stream
    /// (and, for a reception, after everything it carried: `inner`).
    mutating func foldCarriedRecord(
        _ record: EventRecord, _ event: InspectionEvent?, inner: (clock: VectorClock, latest: HybridTime?)?,
        into frame: inout CarriedFold, _ pinnedTemplates: [String: Template]
    ) {
        var versions = frame.previous?.clock ?? VectorClock()
        versions.versions[record.device] = max(versions.versions[record.device] ?? 0, record.streamVersion)
        var predecessors = frame.previous.map { [$0.time] } ?? []
        if let inner {
            versions.merge(inner.clock)
            if let time = inner.latest { predecessors.append(time) }
        }
        let stamp = EventStamp(
            device: record.device, version: record.streamVersion,
            time: .after(predecessors, recordedAt: record.recordedAt.microsecondsSinceEpoch), clock: versions)
        let key = EventKey(device: record.device, version: record.streamVersion)
        if case .received? = event { merge?.receptionStamps[key] = stamp }
        if streamClock.carried[key] == nil { streamClock.carried[key] = stamp }
        frame.follow(stamp)
        guard let event else { return }
        if record.device == device {
            // This device's own record, folded already; only a write its
            // in-order fold let go (a later write replaced it) is kept.
            foldOwnWrite(event, record: record, stamp: stamp)
            return
        }
        guard carriedEventIDs.insert(record.id).inserted, merge?.keys.insert(key).inserted ?? false else { return }
        foldMerged(
            event, recordedAt: record.recordedAt, actor: record.actor, stamp: stamp, carried: true, pinnedTemplates,
            eventID: record.id)
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
    ///
    /// `eventID`: the record's id, when it is carried (a carried submit is
    /// named by it when another device adopts its sending).
    mutating func foldMerged(
        _ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, stamp: EventStamp, carried: Bool,
        _ pinnedTemplates: [String: Template], eventID: UUID? = nil
    ) {
        switch event {
        case .templatePinned(let pinned):
            applyPinned(pinned)
        case .started(let started):
            guard startedAt == nil else { return }
            applyStartFacts(started, recordedAt: recordedAt, actor: actor, pinnedTemplates: pinnedTemplates)
            startedOn = stamp.device == Self.unknownDevice ? nil : stamp.device
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
                    followUpRequired: submitted.followUpRequired, reason: nil, eventID: eventID))
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
            if status == .completed { sharedWhileCompleted = true }
        default:
            applySyncFact(event, recordedAt: recordedAt, actor: actor, stamp: stamp)
        }
    }

    /// A write, once (by its device and version).
    mutating func addWrite(
        _ field: FieldID, _ value: FieldValue?, _ actor: Actor, _ recordedAt: Timestamp, _ stamp: EventStamp
    ) {
        let key = FieldWriteKey(field: field, device: stamp.device, version: stamp.version)
        guard merge?.written.insert(key).inserted ?? false else { return }
        noteWork(stamp)
        // Appended in place: a copy of the field's writes per write would
        // make the fold quadratic.
        merge?.writes[field, default: []].append(
            FieldWrite(fieldID: field, value: value, stamp: stamp, actor: actor, recordedAt: recordedAt))
        changedSinceDerive.fields.insert(field)
        updatedAt = max(updatedAt ?? recordedAt, recordedAt)
    }

    /// The views of a merged stream, from what it holds: the same whatever
    /// order the records arrived in. `fields` names the only fields whose
    /// writes changed (nil: anything may have, photos and issues too).
    mutating func deriveMerged(fields: Set<FieldID>? = nil) {
        guard let merge else { return }
        changedSinceDerive = DeriveScope()
        deriveClosing(sortingItems: fields == nil)
        if let fields {
            // This device's new write follows everything folded: after a
            // submit it does not count; else it competes only with the
            // field's standing write (the rule is a maximum: `FieldMerge`).
            guard standingSubmit == nil else { return }
            for field in fields {
                let candidates = [merge.standing[field], merge.writes[field]?.last].compactMap { $0 }
                let winner = fieldMerge.winner(candidates)
                self.merge?.standing[field] = winner
                values[field] = winner?.value
            }
            return
        }
        var derived: [FieldID: FieldValue] = [:]
        var standing: [FieldID: FieldWrite] = [:]
        for (field, writes) in merge.writes {
            guard let winner = fieldMerge.winner(counting(writes)) else { continue }
            standing[field] = winner
            if let value = winner.value { derived[field] = value }
        }
        values = derived
        self.merge?.standing = standing
    }

    /// The views after a reception: only the fields its records wrote get
    /// their winner again, and photos and issues are put in the merge's
    /// order again only when it added some. Everything is derived again when
    /// the stream has just become a merge, or when the submit that stands
    /// changed (which writes count changes for every field then).
    mutating func deriveAfterReception(standingBefore: Closing?) {
        let scope = changedSinceDerive
        guard let merge, !scope.all, standingSubmit == standingBefore else { return deriveMerged() }
        changedSinceDerive = DeriveScope()
        deriveClosing(sortingItems: scope.items)
        for field in scope.fields {
            let winner = fieldMerge.winner(counting(merge.writes[field] ?? []))
            self.merge?.standing[field] = winner
            values[field] = winner?.value
        }
    }

    /// The status, the closing and the server record a merged stream shows,
    /// from its submits, discards and server records; the photos and issues
    /// in the merge's order when `sortingItems`.
    mutating func deriveClosing(sortingItems: Bool) {
        if sortingItems {
            photos.sort { EventStamp.precedes($0.stamp, $1.stamp) }
            issues.sort { EventStamp.precedes($0.stamp, $1.stamp) }
        }
        if let submit = standingSubmit {
            close(submitted: submit)
        } else if let discard = closingDiscard {
            status = .discarded
            discardReason = discard.reason
            discardedAt = discard.at
        } else if startedAt != nil {
            // No submit, and every discard (if any) overtaken: the copy is
            // open, whatever this device folded first.
            status = .draft
            discardReason = nil
            discardedAt = nil
        }
        sync.serverID = ownServerRecord?.serverID ?? standingServerRecord?.serverID
    }
}
