import FoundationEssentials
import LedgerCore

extension SyncFailure {
    /// After this many failed attempts in a row an item is shown as stalled.
    /// It is still retried (backoff capped at 5 minutes): a transient failure
    /// never gives an item up by count alone (`docs/domain.md`, "Sync").
    public static let stalledAfterAttempts = 5

    /// A failure of `attempts` attempts in a row, not given up.
    public init(attempts: Int) { self.attempts = attempts }

    /// Retried, but failing for long enough that a person may want to look.
    public var isStalled: Bool { !gaveUp && attempts >= Self.stalledAfterAttempts }
}

// MARK: - Who sends a submission

extension InspectionState {
    /// The adoption that stands: among the adoptions of the standing
    /// submit's sending by other devices, the first by the merge's order.
    /// Once a device holds another's adoption it refuses to adopt (one
    /// sender); two adoptions made before the devices exchanged can only
    /// both stand on no device: the first keeps the sending, and the other
    /// device's outbox lets it go when the first arrives. Each looks the
    /// inspection up before sending, so whichever sent first, the server
    /// keeps one record (`docs/domain.md` § Sharing and merging).
    public var standingAdoption: SendAdoption? {
        // Most inspections have none: the standing submit is not looked for.
        guard !adoptions.isEmpty, let submit = standingSubmit else { return nil }
        return adoptions.filter { $0.submittedOnDevice == submit.stamp.device && $0.device != submit.stamp.device }
            .min { EventStamp.precedes($0.stamp, $1.stamp) }
    }

    /// The device that is to send the inspection: the one whose adoption
    /// stands, else the one whose submit stands (nil before a submit).
    public var sendingDevice: UUID? { standingAdoption?.device ?? standingSubmit?.stamp.device }

    /// Whether this device's outbox holds the inspection: it is completed,
    /// and this device's submit stands unadopted, or its adoption stands.
    public var sendsHere: Bool { status == .completed && sendingDevice == stampDevice }

    /// Whether this device sends another device's submission, having adopted it.
    public var adoptedHere: Bool { standingAdoption?.device == stampDevice }

    /// Whether another device may have sent the inspection unseen: this
    /// device adopted another's submission (its submitter may have sent it
    /// after all), or it shared its submitted copy (another device may have
    /// adopted it). The sync then looks it up before sending.
    public var mayBeSentElsewhere: Bool { adoptedHere || (submittedHere && sharedWhileCompleted) }

    /// A submission recorded on another device that this device holds and
    /// that no device has reported sent (no `sync.inspection_accepted` here):
    /// the standing submit, or nil when there is none or it is this device's
    /// to send.
    public var unreportedSubmission: Closing? {
        guard status == .completed, !sendsHere, sync.serverID == nil, let submit = standingSubmit else { return nil }
        return submit
    }

    /// `inspection.send_adopted` for the standing submit, or why this device
    /// cannot send it: the inspection must be submitted on another device,
    /// not reported sent, and adopted by no device this device heard of.
    func decideAdoptSending() throws(DomainError) -> [InspectionEvent] {
        guard status != .notStarted else { throw .inspectionNotStarted(id) }
        guard status == .completed, let submit = standingSubmit else {
            throw .adoptionRefused(id, .notSubmitted(status))
        }
        if let record = standingServerRecord {
            throw .adoptionRefused(
                id, .alreadySent(serverID: record.serverID, by: record.device == stampDevice ? nil : record.device))
        }
        if let adoption = standingAdoption {
            throw .adoptionRefused(
                id,
                adoption.device == stampDevice
                    ? .adoptedHere(at: adoption.at)
                    : .adoptedElsewhere(device: adoption.device, at: adoption.at))
        }
        guard submit.stamp.device != stampDevice else { throw .adoptionRefused(id, .submittedHere) }
        // A carried submit always has its record's id (`foldCarriedRecord`).
        guard let submitEvent = submit.eventID else { throw .adoptionRefused(id, .submittedHere) }
        return [.sendAdopted(InspectionSendAdopted(submittedOnDevice: submit.stamp.device, submitEvent: submitEvent))]
    }
}

// MARK: - What the views say of the sync

extension InspectionState {
    /// The record that carries a photo's server path: its issue, or the inspection.
    public func owner(ofPhoto photo: CapturedPhoto) -> SyncItem {
        if let issueID = photo.issueID { return SyncItem(kind: .issue, id: issueID) }
        return SyncItem(kind: .inspection, id: id)
    }

    /// Photos that failed for good and whose record (the inspection, or the
    /// issue they belong to) went to the server without them, with why.
    public var photosSentWithout: [(photo: CapturedPhoto, failure: SyncFailure)] {
        photos.compactMap { photo in
            let item = SyncItem(kind: .photo, id: photo.photo.photoID)
            guard case .failed(let failure) = sync.status(of: item),
                case .synced = sync.status(of: owner(ofPhoto: photo))
            else { return nil }
            return (photo, failure)
        }
    }

    /// What an unsent record still waits for in this stream, in words
    /// ("waiting for photo 3d15a2b0: HTTP 503: maintenance, next try
    /// 2026-03-01T10:42:07Z"), or nil when it waits for nothing here.
    public func waitingReason(for item: SyncItem) -> String? {
        let photosOfItem: [CapturedPhoto]
        switch item.kind {
        case .photo:
            return nil
        case .inspection:
            photosOfItem = photos.filter { $0.issueID == nil }
        case .issue:
            if case .synced = sync.status(of: SyncItem(kind: .inspection, id: id)) {
                photosOfItem = photos.filter { $0.issueID == item.id }
            } else {
                return "waiting for its inspection \(id.lowercased.prefix(8)) to reach the server"
            }
        }
        for photo in photosOfItem {
            let photoItem = SyncItem(kind: .photo, id: photo.photo.photoID)
            // Worded only for the photo waited for: the views ask of every item.
            var name: String { "photo \(photo.photo.photoID.lowercased.prefix(8))" }
            switch sync.status(of: photoItem) {
            case .synced, .failed: continue
            case .pending: return "waiting for \(name): not uploaded yet"
            case .retrying(let failure):
                let next = failure.nextAttemptAt.map { ", next try \($0.iso8601.prefix(19))Z" } ?? ""
                let stalled = failure.isStalled ? " (stalled after \(failure.attempts) attempts)" : ""
                return "waiting for \(name): \(failure.lastError)\(next)\(stalled)"
            }
        }
        return nil
    }

    /// The note every view shows for an issue the server may hold twice
    /// (`SyncFacts.issuesPossiblySentTwice`).
    public static func possiblySentTwiceNote(_ issueID: UUID) -> String {
        "issue \(issueID.lowercased.prefix(8)) was sent again after its answer was lost; this server offers no way "
            + "to check, so it may hold it twice"
    }

    /// How the note of an inspection submitted on another device and not
    /// reported sent begins (`jqc status` lists these).
    public static let expectedElsewhereNotePrefix = "submitted on device "
    /// How the note of an inspection the server holds more than once begins.
    public static let serverRecordsNotePrefix = "the server holds "

    /// What a device holding another device's unreported submission says
    /// of it: submitted where, not reported sent, who is expected to send
    /// it (the submitter, or the device that adopted it) and what to do.
    public func expectedElsewhereNote(_ submit: Closing) -> String {
        let head = Self.expectedElsewhereNotePrefix + "\(submit.stamp.device.lowercased), not yet reported sent: "
        if let adoption = standingAdoption {
            return head + "device \(adoption.device.lowercased) adopted it at \(adoption.at.iso8601) and is expected "
                + "to send it (this device sends nothing of it)"
        }
        return head + "that device is expected to send it (this device sends nothing of it; if that device cannot, "
            + "'jqc sync adopt \(id.lowercased.prefix(8))' makes this device its sender)"
    }

    func serverRecordsNote(standing: ServerRecord, remove: [ServerRecord]) -> String {
        func sender(_ record: ServerRecord) -> String {
            record.device == stampDevice
                ? "sent by this device" : "sent by device \(record.device.lowercased.prefix(8))"
        }
        let removed = remove.map { "server id \($0.serverID) (\(sender($0)))" }.joined(separator: ", ")
        return Self.serverRecordsNotePrefix + "\(remove.count + 1) records of this inspection (more than one device "
            + "submitted and synced before they exchanged): server id \(standing.serverID) (\(sender(standing))) "
            + "stands; remove \(removed) on the server"
    }

    /// Notes on how the inspection stands with the server that a one-word
    /// state cannot say: each photo it went out without, each issue the server
    /// may hold twice, and what it waits for.
    public var syncNotes: [String] {
        var notes = photosSentWithout.map { entry in
            let owner = entry.photo.issueID.map { "issue \($0.lowercased.prefix(8))" } ?? "inspection"
            return "\(owner) synced without photo \(entry.photo.photo.photoID.lowercased.prefix(8)): "
                + entry.failure.lastError
        }
        for issue in issues where sync.issuesPossiblySentTwice.contains(issue.id) {
            notes.append(Self.possiblySentTwiceNote(issue.id))
        }
        guard status == .completed else { return notes }
        if let (standing, remove) = duplicateServerRecords {
            notes.append(serverRecordsNote(standing: standing, remove: remove))
        }
        if let submit = unreportedSubmission {
            // Its photos' states here are the sender's as last shared:
            // another device's wait is not this device's to report.
            notes.append(expectedElsewhereNote(submit))
            return notes
        }
        if adoptedHere, let adoption = standingAdoption, sync.serverID == nil {
            notes.append(
                Self.expectedElsewhereNotePrefix + "\(adoption.submittedOnDevice.lowercased), adopted by this device "
                    + "at \(adoption.at.iso8601): this device sends it, looked up on the server first")
        }
        if let waiting = waitingReason(for: SyncItem(kind: .inspection, id: id)),
            case .pending = sync.status(of: SyncItem(kind: .inspection, id: id))
        {
            notes.append("inspection \(waiting)")
        }
        return notes
    }
}
