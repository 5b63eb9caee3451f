import FoundationEssentials
import InspectionDomain
import InspectionStore

// MARK: - Issues

extension SyncRun {
    /// An issue goes out once its inspection has a server id and its photo
    /// (if any) is settled; if the inspection failed for good, so does the
    /// issue, rather than become an orphan on the server.
    func beginIssue(_ item: WaveItem, _ state: InspectionState, _ book: inout SyncBook) throws -> SendStep {
        let row = item.row
        guard let issue = state.issue(id: row.item.id) else { return .finished(progressed: false) }
        let inspectionItem = SyncItem(kind: .inspection, id: state.id)
        let inspectionServerID: String
        switch state.sync.status(of: inspectionItem) {
        case .synced:
            guard let id = state.sync.serverID else { return .finished(progressed: false) }
            inspectionServerID = id
        case .failed(let failure):
            try giveUp(
                item,
                error: "Its inspection \(state.id.lowercased.prefix(8)) failed to sync (\(failure.lastError)), so the "
                    + "issue was not sent: it would be an orphan on the server. Run 'jqc sync retry "
                    + "\(state.id.lowercased.prefix(8))' once the inspection can be sent.",
                httpStatus: nil, state, &book)
            return .finished(progressed: true)
        case .pending, .retrying:
            tell(
                item, .waiting("waiting for its inspection \(state.id.lowercased.prefix(8)) to reach the server"), &book
            )
            return .finished(progressed: false)
        }
        var photoPath: String?
        if let photoID = issue.photoID {
            switch state.sync.status(of: SyncItem(kind: .photo, id: photoID)) {
            case .synced: photoPath = state.sync.uploadedPhotos[photoID]
            case .failed: photoPath = nil
            case .pending, .retrying:
                let next = state.waitingReason(for: row.item)
                tell(item, .waiting(next ?? "waiting for photo \(photoID.lowercased.prefix(8))"), &book)
                return .finished(progressed: false)
            }
        }
        let body = SyncRequests.issue(
            issue, of: state, inspectionServerID: inspectionServerID, photoPath: photoPath)
        let key = try idempotencyKey(for: row, &book)
        // Whether an earlier send may have created it: a lost answer (or a
        // gateway's 502/504) in the ledger, or a send a crash cut short in
        // the journal. No endpoint lists issues, so it cannot be looked up.
        let sentBefore = journal.isAmbiguous(row.item) || Self.mayHaveBeenApplied(state.sync.failures[row.item])
        // Noted only now, right before the request: a run stopped before
        // this point never makes the issue look sent.
        willSend(row.item, &book)
        tell(item, .sending, &book)
        return .request(.createIssue(body: body, issueID: issue.id, key: key, sentBefore: sentBefore))
    }

    func settleIssue(
        _ answer: SyncAnswer, issueID: UUID, sentBefore: Bool, _ item: WaveItem, _ state: InspectionState,
        _ book: inout SyncBook
    ) throws -> SendStep {
        switch answer {
        case .created(let created):
            journal.settled(item.row.item)
            let again = sentBefore && !created.replayed
            try record(
                [
                    .issueAccepted(
                        IssueAccepted(issueID: issueID, serverID: created.id, sentAgainAfterLostAnswer: again))
                ], item, &book)
            if again {
                book.possiblySentTwice.append(item.row.item)
                tell(item, .sent("server id \(created.id); \(InspectionState.possiblySentTwiceNote(issueID))"), &book)
            } else {
                tell(item, .sent("server id \(created.id)"), &book)
            }
            return .finished(progressed: true)
        case .failed(let error):
            // A clear answer (a 500, a refusal) settles the note only if no earlier send may have applied.
            if !error.mayHaveBeenApplied && !sentBefore { journal.settled(item.row.item) }
            return .finished(progressed: try failed(item, error, state, &book))
        case .uploaded, .found, .foundRecord:
            preconditionFailure("a create is answered with what it created")
        }
    }
}
