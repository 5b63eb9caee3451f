import FoundationEssentials
import LedgerCore

// MARK: - Apply

extension InspectionState {
    /// Folds one event of this inspection's stream into the state.
    ///
    /// Total and pure: it never throws and never reads anything but its
    /// arguments. Events that do not fit the state (an unknown type, a second
    /// start, an edit after submit) change nothing but the event count: the
    /// rules live in `decide`, and a replay must get through any log.
    ///
    /// A stream without a reception folds in order (its order is the merge's
    /// order); from its first `inspection.received` on, every event is merged
    /// by the rules of `docs/domain.md` § Sharing and merging.
    ///
    /// - Parameters:
    ///   - device: the device that recorded the event (this device: the
    ///     stream's own records); nil keeps the one folded before.
    ///   - pinnedTemplates: templates by content hash, for streams whose
    ///     template was pinned in an earlier inspection's stream.
    public mutating func apply(
        _ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, device: UUID? = nil,
        pinnedTemplates: [String: Template] = [:]
    ) {
        eventCount += 1
        if self.device == nil, let device { self.device = device }
        if merge != nil {
            applyMerged(event, recordedAt: recordedAt, actor: actor, pinnedTemplates: pinnedTemplates)
            return
        }
        if case .received = event {
            startMerging()
            applyMerged(event, recordedAt: recordedAt, actor: actor, pinnedTemplates: pinnedTemplates)
            return
        }
        let stamp = EventStamp(
            device: stampDevice, version: UInt64(eventCount),
            time: .after(lastStamp?.time, recordedAt: recordedAt.microsecondsSinceEpoch), clock: VectorClock())
        lastStamp = stamp
        applyInOrder(event, recordedAt: recordedAt, actor: actor, stamp: stamp, pinnedTemplates: pinnedTemplates)
    }

    /// The device stamps name: this device, or a stand-in before one is known.
    var stampDevice: UUID { device ?? Self.unknownDevice }

    static let unknownDevice = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// One event of a stream without receptions, in stream order.
    mutating func applyInOrder(
        _ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, stamp: EventStamp,
        pinnedTemplates: [String: Template]
    ) {
        switch event {
        case .templatePinned(let pinned):
            applyPinned(pinned)
        case .started(let started):
            guard status == .notStarted else { return }
            applyStartFacts(started, recordedAt: recordedAt, actor: actor, pinnedTemplates: pinnedTemplates)
            startedOn = stamp.device == Self.unknownDevice ? nil : stamp.device
            status = .draft
            for answer in started.prefilled {
                values[answer.fieldID] = answer.value
                lastWrites[answer.fieldID] = FieldWrite(
                    fieldID: answer.fieldID, value: answer.value, stamp: stamp, actor: actor, recordedAt: recordedAt)
            }
        case .fieldSet(let answer):
            guard status == .draft else { return }
            values[answer.fieldID] = answer.value
            lastWrites[answer.fieldID] = FieldWrite(
                fieldID: answer.fieldID, value: answer.value, stamp: stamp, actor: actor, recordedAt: recordedAt)
            updatedAt = recordedAt
        case .fieldCleared(let cleared):
            guard status == .draft else { return }
            values[cleared.fieldID] = nil
            lastWrites[cleared.fieldID] = FieldWrite(
                fieldID: cleared.fieldID, value: nil, stamp: stamp, actor: actor, recordedAt: recordedAt)
            updatedAt = recordedAt
        case .photoCaptured(let captured):
            guard status == .draft else { return }
            addPhoto(captured, recordedAt: recordedAt, actor: actor, stamp: stamp)
        case .issueFlagged(let flagged):
            guard status == .draft else { return }
            addIssue(flagged, recordedAt: recordedAt, actor: actor, stamp: stamp)
        case .submitted(let submitted):
            guard status == .draft else { return }
            let closing = Closing(
                stamp: stamp, at: recordedAt, by: actor, score: submitted.score,
                followUpRequired: submitted.followUpRequired, reason: nil)
            submits.append(closing)
            close(submitted: closing)
        case .discarded(let discarded):
            guard status == .draft else { return }
            let closing = Closing(
                stamp: stamp, at: recordedAt, by: actor, score: nil, followUpRequired: false, reason: discarded.reason)
            discards.append(closing)
            status = .discarded
            discardReason = closing.reason
            discardedAt = recordedAt
            updatedAt = recordedAt
        case .handedOver(let handed):
            guard status != .notStarted else { return }
            handedOver = HandOff(
                mode: handed.mode, to: handed.to, at: recordedAt, by: actor, toDevice: handed.toDevice)
            if status == .completed { sharedWhileCompleted = true }
        default:
            applySyncFact(event, recordedAt: recordedAt, actor: actor, stamp: stamp)
        }
    }

    mutating func applyPinned(_ pinned: TemplatePinned) {
        // Written just before the start that uses it; after the start it
        // can only supply a template that is still missing.
        if status == .notStarted {
            template = pinned.template
            templateHash = pinned.templateHash
        } else if pinned.templateHash == templateHash, template == nil {
            template = pinned.template
        }
    }

    /// What a start says besides its answers.
    mutating func applyStartFacts(
        _ started: InspectionStarted, recordedAt: Timestamp, actor: Actor, pinnedTemplates: [String: Template]
    ) {
        templateID = started.templateID
        if templateHash != started.templateHash { template = nil }
        templateHash = started.templateHash
        if template == nil { template = pinnedTemplates[started.templateHash] }
        facilityID = started.facilityID
        facilityName = started.facilityName
        areaID = started.areaID
        areaName = started.areaName
        parentInspectionID = started.parentInspectionID
        parentServerID = started.parentServerID
        startedAt = recordedAt
        startedBy = actor
        updatedAt = max(updatedAt ?? recordedAt, recordedAt)
    }

    /// A capture, once (by photo id); it also gives its issue the photo.
    mutating func addPhoto(_ captured: PhotoCaptured, recordedAt: Timestamp, actor: Actor, stamp: EventStamp) {
        guard photo(id: captured.photo.photoID) == nil else { return }
        noteWork(stamp)
        if merge != nil { changedSinceDerive.items = true }
        photos.append(
            CapturedPhoto(
                photo: captured.photo, kind: captured.kind, fieldID: captured.fieldID, issueID: captured.issueID,
                capturedAt: recordedAt, capturedBy: actor, stamp: stamp))
        if let issueID = captured.issueID, let index = issues.firstIndex(where: { $0.id == issueID }) {
            issues[index].photoID = captured.photo.photoID
        }
        updatedAt = max(updatedAt ?? recordedAt, recordedAt)
    }

    /// An issue, once (by issue id).
    mutating func addIssue(_ flagged: IssueFlagged, recordedAt: Timestamp, actor: Actor, stamp: EventStamp) {
        guard issue(id: flagged.issueID) == nil else { return }
        noteWork(stamp)
        if merge != nil { changedSinceDerive.items = true }
        issues.append(
            FlaggedIssue(
                id: flagged.issueID, severity: flagged.severity, description: flagged.description,
                photoID: flagged.photoID, flaggedAt: recordedAt, flaggedBy: actor, stamp: stamp))
        updatedAt = max(updatedAt ?? recordedAt, recordedAt)
    }

    /// An adoption of a submission's sending, once (by its device and version).
    mutating func addAdoption(
        _ adopted: InspectionSendAdopted, recordedAt: Timestamp, actor: Actor, stamp: EventStamp
    ) {
        guard !adoptions.contains(where: { $0.stamp.device == stamp.device && $0.stamp.version == stamp.version })
        else { return }
        adoptions.append(
            SendAdoption(
                stamp: stamp, at: recordedAt, by: actor, submittedOnDevice: adopted.submittedOnDevice,
                submitEvent: adopted.submitEvent))
    }

    /// Raises the work frontier to `stamp` (`sawEverything`).
    mutating func noteWork(_ stamp: EventStamp) {
        if (workFrontier[stamp.device] ?? 0) < stamp.version { workFrontier[stamp.device] = stamp.version }
    }

    /// The inspection as the standing submit closed it.
    mutating func close(submitted closing: Closing) {
        status = .completed
        score = closing.score
        followUpRequired = closing.followUpRequired
        completedAt = closing.at
        completedBy = closing.by
        completedOn = closing.stamp.device == Self.unknownDevice ? nil : closing.stamp.device
        updatedAt = max(updatedAt ?? closing.at, closing.at)
    }

    /// What the server said, what a person asked of the sync, or a device's
    /// adoption of a send: folded alike in order and merged (a reception or
    /// an unrecognized event changes nothing here).
    mutating func applySyncFact(_ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, stamp: EventStamp) {
        switch event {
        case .sendAdopted(let adopted):
            addAdoption(adopted, recordedAt: recordedAt, actor: actor, stamp: stamp)
        case .photoUploaded(let uploaded):
            sync.uploadedPhotos[uploaded.photoID] = uploaded.serverPath
            sync.failures[SyncItem(kind: .photo, id: uploaded.photoID)] = nil
        case .inspectionAccepted(let accepted):
            let record = ServerRecord(serverID: accepted.serverID, device: stamp.device, at: recordedAt)
            if !sync.serverRecords.contains(record) { sync.serverRecords.append(record) }
            // A merged stream names its server record once it holds them
            // all (`deriveMerged`): this device's own, never another's over it.
            if merge == nil { sync.serverID = accepted.serverID }
            sync.failures[SyncItem(kind: .inspection, id: id)] = nil
        case .issueAccepted(let accepted):
            sync.acceptedIssues[accepted.issueID] = accepted.serverID
            if accepted.sentAgainAfterLostAnswer { sync.issuesPossiblySentTwice.insert(accepted.issueID) }
            sync.failures[SyncItem(kind: .issue, id: accepted.issueID)] = nil
        case .syncAttemptFailed(let failed):
            var failure = sync.failures[failed.item] ?? SyncFailure()
            failure.attempts += 1
            failure.lastError = failed.error
            failure.lastHTTPStatus = failed.httpStatus
            failure.lastFailedAt = recordedAt
            failure.nextAttemptAt = failed.willRetry ? failed.nextAttemptAt : nil
            sync.failures[failed.item] = failure
        case .syncGaveUp(let gaveUp):
            var failure = sync.failures[gaveUp.item] ?? SyncFailure()
            failure.lastError = gaveUp.error
            failure.lastFailedAt = recordedAt
            failure.nextAttemptAt = nil
            failure.gaveUp = true
            sync.failures[gaveUp.item] = failure
        case .syncRetryRequested(let retry):
            sync.failures[retry.item] = nil
        case .syncDismissed(let dismissed):
            // Only an item failed for good can be acknowledged; anything else keeps its course.
            if var failure = sync.failures[dismissed.item], failure.gaveUp {
                failure.dismissed = dismissed.reason
                sync.failures[dismissed.item] = failure
            }
        default:
            break
        }
    }

    /// The state after `event`, leaving this one as it is.
    public func applying(
        _ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, device: UUID? = nil,
        pinnedTemplates: [String: Template] = [:]
    ) -> InspectionState {
        var next = self
        next.apply(event, recordedAt: recordedAt, actor: actor, device: device, pinnedTemplates: pinnedTemplates)
        return next
    }

    /// Records that a re-inspection of this inspection was submitted, which
    /// clears the follow-up at once on this device. The child's
    /// `inspection.submitted` event is the record of it; a projection that
    /// sees it calls this on the parent (`child.parentInspectionID`).
    public mutating func resolveFollowUp(by reinspection: UUID) {
        guard followUpRequired, followUpResolvedBy == nil else { return }
        followUpResolvedBy = reinspection
    }
}
