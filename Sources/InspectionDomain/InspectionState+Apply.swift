import Foundation
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
    /// - Parameter pinnedTemplates: templates by content hash, for streams
    ///   whose template was pinned in an earlier inspection's stream.
    public mutating func apply(
        _ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, pinnedTemplates: [String: Template] = [:]
    ) {
        eventCount += 1
        switch event {
        case .templatePinned(let pinned):
            // Written just before the start that uses it; after the start it
            // can only supply a template that is still missing.
            if status == .notStarted {
                template = pinned.template
                templateHash = pinned.templateHash
            } else if pinned.templateHash == templateHash, template == nil {
                template = pinned.template
            }
        case .started(let started):
            guard status == .notStarted else { return }
            status = .draft
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
            for answer in started.prefilled { values[answer.fieldID] = answer.value }
            startedAt = recordedAt
            startedBy = actor
            updatedAt = recordedAt
        case .fieldSet(let answer):
            guard status == .draft else { return }
            values[answer.fieldID] = answer.value
            updatedAt = recordedAt
        case .fieldCleared(let cleared):
            guard status == .draft else { return }
            values[cleared.fieldID] = nil
            updatedAt = recordedAt
        case .photoCaptured(let captured):
            guard status == .draft, photo(id: captured.photo.photoID) == nil else { return }
            photos.append(
                CapturedPhoto(
                    photo: captured.photo, kind: captured.kind, fieldID: captured.fieldID, issueID: captured.issueID,
                    capturedAt: recordedAt, capturedBy: actor))
            if let issueID = captured.issueID, let index = issues.firstIndex(where: { $0.id == issueID }) {
                issues[index].photoID = captured.photo.photoID
            }
            updatedAt = recordedAt
        case .issueFlagged(let flagged):
            guard status == .draft, issue(id: flagged.issueID) == nil else { return }
            issues.append(
                FlaggedIssue(
                    id: flagged.issueID, severity: flagged.severity, description: flagged.description,
                    photoID: flagged.photoID, flaggedAt: recordedAt, flaggedBy: actor))
            updatedAt = recordedAt
        case .submitted(let submitted):
            guard status == .draft else { return }
            status = .completed
            score = submitted.score
            followUpRequired = submitted.followUpRequired
            completedAt = recordedAt
            completedBy = actor
            updatedAt = recordedAt
        case .discarded(let discarded):
            guard status == .draft else { return }
            status = .discarded
            discardReason = discarded.reason
            discardedAt = recordedAt
            updatedAt = recordedAt
        case .photoUploaded(let uploaded):
            sync.uploadedPhotos[uploaded.photoID] = uploaded.serverPath
            sync.failures[SyncItem(kind: .photo, id: uploaded.photoID)] = nil
        case .inspectionAccepted(let accepted):
            sync.serverID = accepted.serverID
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
        case .handedOver(let handed):
            guard status != .notStarted else { return }
            handedOver = HandOff(mode: handed.mode, to: handed.to, at: recordedAt, by: actor)
        case .received(let received):
            applyReceived(received, recordedAt: recordedAt, actor: actor, pinnedTemplates: pinnedTemplates)
        case .unrecognized:
            break
        }
    }

    /// The state after `event`, leaving this one as it is.
    public func applying(
        _ event: InspectionEvent, recordedAt: Timestamp, actor: Actor, pinnedTemplates: [String: Template] = [:]
    ) -> InspectionState {
        var next = self
        next.apply(event, recordedAt: recordedAt, actor: actor, pinnedTemplates: pinnedTemplates)
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
