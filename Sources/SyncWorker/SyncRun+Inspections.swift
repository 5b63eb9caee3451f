import FoundationEssentials
import InspectionDomain
import InspectionStore

// MARK: - Inspections

extension SyncRun {
    /// An inspection goes out once every photo is settled and its parent (for
    /// a re-inspection) has a server id; one whose earlier send may have been
    /// applied is looked up first.
    func beginInspection(_ item: WaveItem, _ state: InspectionState, _ book: inout SyncBook) throws -> SendStep {
        let row = item.row
        // Every photo settled: uploaded, or failed for good (then sent as "").
        if let waiting = state.waitingReason(for: row.item) {
            tell(item, .waiting(waiting), &book)
            return .finished(progressed: false)
        }
        // A re-inspection of a server record carries its id; one of a record here waits for the parent's.
        var parentServerID = state.parentServerID
        if let parentID = state.parentInspectionID {
            guard let parent = try self.state(of: parentID, &book) else {
                try giveUp(
                    item,
                    error: "Its parent inspection \(parentID.lowercased) is not in this ledger, so the link cannot be "
                        + "sent. Restore the ledger the parent was recorded in.", httpStatus: nil, state, &book)
                return .finished(progressed: true)
            }
            switch parent.sync.status(of: SyncItem(kind: .inspection, id: parentID)) {
            case .synced:
                parentServerID = parent.sync.serverID
            case .failed(let failure):
                try giveUp(
                    item,
                    error:
                        "Its parent inspection \(parentID.lowercased.prefix(8)) failed to sync (\(failure.lastError)), "
                        + "and a re-inspection cannot be sent without it. Run 'jqc sync retry "
                        + "\(parentID.lowercased.prefix(8))', then 'jqc sync retry \(row.item.id.lowercased.prefix(8))'.",
                    httpStatus: nil, state, &book)
                return .finished(progressed: true)
            case .pending, .retrying:
                tell(
                    item,
                    .waiting("waiting for its parent inspection \(parentID.lowercased.prefix(8)) to reach the server"),
                    &book)
                return .finished(progressed: false)
            }
        }
        let body = SyncRequests.inspection(
            state, photoPath: { state.sync.uploadedPhotos[$0] }, parentServerID: parentServerID)
        let key = try idempotencyKey(for: row, &book)
        // Looked up before its photos in this run and not found: once is enough.
        let lookedUp = book.foundNoneBeforePhotos.contains(state.id)
        if mayHaveSentItself(row.item, state) || (state.mayBeSentElsewhere && !lookedUp) {
            // An earlier send may have created it, or another device may
            // have sent it (the submitter of an adopted copy, or a device
            // that adopted a shared one): look before sending.
            tell(item, .lookingUp, &book)
            return .request(.lookUpInspection(body: body, key: key))
        }
        return create(item, body: body, key: key, &book)
    }

    /// Whether an earlier send of this device may have created `item` unseen
    /// (a crash in the journal, or a failure with no complete answer).
    func mayHaveSentItself(_ item: SyncItem, _ state: InspectionState) -> Bool {
        journal.isAmbiguous(item) || Self.mayHaveBeenApplied(state.sync.failures[item])
    }

    /// Notes `item`, found on the server by a look-up, as sent by another
    /// device when only another could have sent it (see `SyncReport.sentElsewhere`).
    func noteSentElsewhere(_ item: SyncItem, _ state: InspectionState, ownDoubt: Bool, _ book: inout SyncBook) {
        guard state.mayBeSentElsewhere, !ownDoubt else { return }
        // The submitter of a copy adopted here; a device that adopted this one's is not known here.
        let device = state.adoptedHere ? state.standingSubmit?.stamp.device : nil
        book.sentElsewhere.append(SyncReport.SentElsewhere(item: item, device: device))
    }

    /// Notes the send in the journal (a crash from here on leaves it ambiguous) and asks for it.
    private func create(_ item: WaveItem, body: JSONValue, key: String, _ book: inout SyncBook) -> SendStep {
        willSend(item.row.item, &book)
        tell(item, .sending, &book)
        return .request(.createInspection(body: body, key: key))
    }

    func settleLookUp(
        _ answer: SyncAnswer, body: JSONValue, key: String, _ item: WaveItem, _ state: InspectionState,
        _ book: inout SyncBook
    ) throws -> SendStep {
        switch answer {
        case .found(let found?):
            noteSentElsewhere(item.row.item, state, ownDoubt: mayHaveSentItself(item.row.item, state), &book)
            journal.settled(item.row.item)
            book.adopted.append(item.row.item)
            try record([.inspectionAccepted(InspectionAccepted(serverID: found))], item, &book)
            if state.mayBeSentElsewhere {
                // Another device sent it, and may have sent its issues too,
                // which no endpoint lists: each is sent (never lost) and,
                // unless the answer is a replay, said to be possibly twice.
                for issue in state.issues where state.sync.acceptedIssues[issue.id] == nil {
                    willSend(SyncItem(kind: .issue, id: issue.id), &book)
                }
                tell(
                    item, .sent("already on the server as id \(found) (another device sent it), not sent again"), &book)
            } else {
                tell(item, .sent("already on the server as id \(found), not sent again"), &book)
            }
            return .finished(progressed: true)
        case .found(nil):
            return create(item, body: body, key: key, &book)
        case .failed(let error):
            return .finished(progressed: try failed(item, error, state, &book))
        case .uploaded, .created, .foundRecord:
            preconditionFailure("a look-up is answered with a server id or none")
        }
    }

    func settleInspection(_ answer: SyncAnswer, _ item: WaveItem, _ state: InspectionState, _ book: inout SyncBook)
        throws -> SendStep
    {
        switch answer {
        case .created(let created):
            journal.settled(item.row.item)
            try record([.inspectionAccepted(InspectionAccepted(serverID: created.id))], item, &book)
            tell(item, .sent("server id \(created.id)"), &book)
            return .finished(progressed: true)
        case .failed(let error):
            if !error.mayHaveBeenApplied { journal.settled(item.row.item) }
            return .finished(progressed: try failed(item, error, state, &book))
        case .uploaded, .found, .foundRecord:
            preconditionFailure("a create is answered with what it created")
        }
    }
}
