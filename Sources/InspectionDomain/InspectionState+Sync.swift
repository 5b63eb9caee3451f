import Foundation
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
            let name = "photo \(photo.photo.photoID.lowercased.prefix(8))"
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
        if let submit = standingSubmit, submit.stamp.device != stampDevice, sync.serverID == nil {
            // Its photos' states here are the sender's as last shared:
            // another device's wait is not this device's to report.
            notes.append(
                Self.expectedElsewhereNotePrefix + "\(submit.stamp.device.lowercased.prefix(8)), which is expected to "
                    + "send it: not reported sent yet (this device sends nothing of it)")
            return notes
        }
        if let waiting = waitingReason(for: SyncItem(kind: .inspection, id: id)),
            case .pending = sync.status(of: SyncItem(kind: .inspection, id: id))
        {
            notes.append("inspection \(waiting)")
        }
        return notes
    }
}
